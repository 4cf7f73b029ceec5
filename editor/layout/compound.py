"""Compound layout: open groups are laid out inside frames, one level at a time.

When a display graph has open groups (``DisplayGraph.box_groups``), each open group is laid
out on its own (its direct boxes plus the frames of its own open sub-groups), then takes
part in its parent's layout as one big box: the frame. Members of a group therefore stay
together inside a rectangle that holds nothing else, which the canvas can draw with the
group's name and a collapse button (``LayoutResult.frames``).

# NOTE: edges that cross a frame are split per level. Inside a group, a value coming from
# outside starts at an *entry* vertex pinned to the group's top layer, a value leaving ends
# at an *exit* vertex pinned to its bottom layer; at the parent level the edge runs between
# frame ports. The pieces are joined through the frame's title band (top) or bottom padding,
# where no box lies, so the whole route still avoids boxes, leaves its source at the bottom
# and enters its target at the top.
"""

from __future__ import annotations

from collections.abc import Callable

import numpy as np

from editor.viewmodel import DisplayGraph

from editor.layout.sugiyama import layout_arrays

FRAME_PAD = 14.0      # frame padding left/right/bottom
FRAME_TITLE = 24.0    # frame title band (holds the group name, and the entry jogs)
PIN_W = 6.0
PIN_H = 1.0

Point = tuple[float, float]


def compound_layout(graph: DisplayGraph, check: Callable[[float], None]):
    from editor.layout import LayoutResult, port_position

    parents = dict(graph.group_parents)
    box_group = graph.box_groups
    boxes = graph.boxes
    by_key = {b.key: b for b in boxes}

    def chain(key: str) -> list[str]:
        g = box_group.get(key, "")
        out = []
        while g:
            out.append(g)
            g = parents.get(g, "")
        out.reverse()
        return out

    # ---- split every edge into per-level pieces
    # level -> list of local vertices: ("box", key) | ("frame", group) | ("in", group, k) | ("out", group, k)
    level_items: dict[str, dict[tuple, int]] = {}
    level_edges: dict[str, list[tuple[tuple, int, tuple, int, str]]] = {}

    def item(level: str, it: tuple) -> tuple:
        d = level_items.setdefault(level, {})
        if it not in d:
            d[it] = len(d)
        return it

    for b in boxes:
        item(box_group.get(b.key, ""), ("box", b.key))
    for g, p in parents.items():
        item(p, ("frame", g))
        level_items.setdefault(g, {})
    entries: dict[tuple[str, str, int], tuple] = {}
    exits: dict[tuple[str, str, int], tuple] = {}
    pieces: dict[str, list[tuple[str, int]]] = {}   # edge key -> [(level, piece index)]
    for e in graph.edges:
        if e.src not in by_key or e.dst not in by_key:
            continue
        cs, cd = chain(e.src), chain(e.dst)
        k = 0
        while k < len(cs) and k < len(cd) and cs[k] == cd[k]:
            k += 1
        lca = cs[k - 1] if k else ""
        plist: list[tuple[str, int]] = []
        # climb out of the source's groups
        cur: tuple = ("box", e.src)
        cur_port = e.src_port
        for g in reversed(cs[k:]):
            xk = (g, e.src, e.src_port)
            ex = exits.get(xk)
            if ex is None:
                ex = exits[xk] = item(g, ("out", g, len(exits)))
                level_edges.setdefault(g, []).append((cur, cur_port, ex, 0, e.value))
            # several consumers outside share the exit: its piece is stored once
            plist.append((g, _find(level_edges[g], cur, ex)))
            cur, cur_port = ("frame", g), ("x", xk)
        # descend into the target's groups (collected top-down)
        down: list[tuple[str, tuple, object]] = []
        for g in cd[k:]:
            nk = (g, e.src, e.src_port)
            en = entries.get(nk)
            if en is None:
                en = entries[nk] = item(g, ("in", g, len(entries)))
            down.append((g, en, ("n", nk)))
        if down:
            dst0, dport0 = ("frame", down[0][0]), down[0][2]
        else:
            dst0, dport0 = ("box", e.dst), e.dst_port
        level_edges.setdefault(lca, []).append((cur, cur_port, dst0, dport0, e.value))
        plist.append((lca, len(level_edges[lca]) - 1))
        for j, (g, en, _) in enumerate(down):
            if j + 1 < len(down):
                nxt, nport = ("frame", down[j + 1][0]), down[j + 1][2]
            else:
                nxt, nport = ("box", e.dst), e.dst_port
            level_edges.setdefault(g, []).append((en, 0, nxt, nport, e.value))
            plist.append((g, len(level_edges[g]) - 1))
        pieces[e.key] = plist
    check(0.1)

    # ---- lay out levels bottom-up (deepest first)
    def depth(g: str) -> int:
        d = 0
        while g:
            g = parents.get(g, "")
            d += 1
        return d

    levels = sorted(level_items, key=lambda g: (-depth(g), g))
    frame_size: dict[str, tuple[float, float]] = {}
    local: dict[str, dict] = {}
    for li, lev in enumerate(levels):
        check(0.1 + 0.7 * li / max(len(levels), 1))
        items = level_items[lev]
        keys = list(items)
        n = len(keys)
        w = np.empty(n)
        h = np.empty(n)
        n_in = np.zeros(n, dtype=np.int64)
        n_out = np.zeros(n, dtype=np.int64)
        pin_top = np.zeros(n, dtype=bool)
        pin_bot = np.zeros(n, dtype=bool)
        anchor = np.zeros(n, dtype=bool)
        edges = level_edges.get(lev, [])
        # frame ports: one per entry/exit of the child group, numbered in creation order
        fport: dict[tuple, int] = {}
        fcount: dict[tuple[str, str], int] = {}
        for (s, sp, d, dp, _) in edges:
            for node, port, side in ((s, sp, "out"), (d, dp, "in")):
                if node[0] == "frame" and isinstance(port, tuple) and port not in fport:
                    c = fcount.get((node[1], side), 0)
                    fport[port] = c
                    fcount[(node[1], side)] = c + 1
        for i, it in enumerate(keys):
            if it[0] == "box":
                b = by_key[it[1]]
                w[i], h[i], n_in[i], n_out[i] = b.width, b.height, b.n_in, b.n_out
                anchor[i] = b.kind == "input"
            elif it[0] == "frame":
                w[i], h[i] = frame_size[it[1]]
                n_in[i] = fcount.get((it[1], "in"), 0)
                n_out[i] = fcount.get((it[1], "out"), 0)
            elif it[0] == "in":
                w[i], h[i], n_out[i] = PIN_W, PIN_H, 1
                pin_top[i] = True
            else:
                w[i], h[i], n_in[i] = PIN_W, PIN_H, 1
                pin_bot[i] = True
        es = np.array([items[s] for s, *_ in edges], dtype=np.int64)
        ed = np.array([items[d] for _, _, d, _, _ in edges], dtype=np.int64)
        esp = np.array([fport[p] if isinstance(p, tuple) else p for _, p, *_ in edges], dtype=np.int64)
        edp = np.array([fport[p] if isinstance(p, tuple) else p for _, _, _, p, _ in edges], dtype=np.int64)
        lay = layout_arrays(w, h, es, ed, esp, edp, n_in, n_out, check=lambda f: None, anchor=anchor,
                            pin_top=pin_top if lev else None, pin_bottom=pin_bot if lev else None)
        local[lev] = {"keys": keys, "items": items, "lay": lay, "w": w, "h": h, "fport": fport,
                      "n_in": n_in, "n_out": n_out}
        if lev:
            frame_size[lev] = (lay.width + 2 * FRAME_PAD, lay.height + FRAME_TITLE + FRAME_PAD)
    check(0.85)

    # ---- absolute positions, top-down
    origin: dict[str, Point] = {"": (0.0, 0.0)}
    frames: dict[str, tuple[float, float, float, float]] = {}
    positions: dict[str, Point] = {}
    for lev in reversed(levels):
        ox, oy = origin[lev]
        L = local[lev]
        lay = L["lay"]
        for i, it in enumerate(L["keys"]):
            x, y = float(lay.x[i]) + ox, float(lay.y[i]) + oy
            if it[0] == "box":
                positions[it[1]] = (x, y)
            elif it[0] == "frame":
                fw, fh = frame_size[it[1]]
                frames[it[1]] = (x, y, fw, fh)
                origin[it[1]] = (x + FRAME_PAD, y + FRAME_TITLE)

    # ---- routes: join the pieces through the frames' title bands and bottom paddings
    def piece(lev: str, idx: int) -> list[Point] | None:
        L = local[lev]
        r = L["lay"].routes[idx]
        if r is None:
            return None
        ox, oy = origin[lev]
        return [(x + ox, y + oy) for x, y in r]

    routes: dict[str, tuple[Point, ...]] = {}
    refs: set[str] = set()
    for e in graph.edges:
        plist = pieces.get(e.key)
        if plist is None:
            continue
        parts = [piece(lev, idx) for lev, idx in plist]
        if any(p is None for p in parts):
            refs.add(e.key)
            continue
        pts: list[Point] = list(parts[0])
        for prev_lev, part in zip([lv for lv, _ in plist], parts[1:]):
            a = pts[-1]
            b = part[0]
            if a != b:
                # a at the exit pin (inside group prev_lev) or the frame's top port; b at a
                # frame port or an entry pin: jog horizontally in a box-free band
                if b[1] >= a[1]:
                    mid = (a[1] + b[1]) / 2
                    pts += [(a[0], mid), (b[0], mid)]
                else:
                    pts += [(a[0], a[1]), (b[0], a[1])]
            pts += part[1:] if part[0] == pts[-1] else part
        # remove consecutive duplicates
        clean = [pts[0]]
        for p in pts[1:]:
            if p != clean[-1]:
                clean.append(p)
        if len(clean) == 1:
            clean.append(clean[0])
        # the ends are exactly the real ports
        sb, db = by_key[e.src], by_key[e.dst]
        clean[0] = port_position(sb, positions[e.src], "out", e.src_port)
        clean[-1] = port_position(db, positions[e.dst], "in", e.dst_port)
        routes[e.key] = tuple(clean)
    root = local[""]["lay"]
    check(1.0)
    return LayoutResult(positions=positions, routes=routes, references=frozenset(refs), width=root.width,
                        height=root.height, sizes={b.key: (b.width, b.height) for b in boxes}, frames=frames)


def _find(edges: list, s: tuple, d: tuple) -> int:
    for i in range(len(edges) - 1, -1, -1):
        if edges[i][0] == s and edges[i][2] == d:
            return i
    raise KeyError((s, d))
