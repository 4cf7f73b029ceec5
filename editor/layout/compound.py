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

from editor.viewmodel import Box, DisplayGraph, Edge


FRAME_PAD = 14.0      # frame padding left/right/bottom
FRAME_TITLE = 24.0    # frame title band (holds the group name, and the entry jogs)
PIN_W = 6.0
PIN_H = 1.0

Point = tuple[float, float]


def compound_layout(graph: DisplayGraph, check: Callable[[float], None], previous=None, wrap: bool = False):
    """Lay ``graph`` out with every open group in a frame (``previous``: the last result, to stay close to)."""
    from editor.layout import LayoutResult

    c = _Compound(graph)
    c.split_edges()
    check(0.1)
    c.layout_levels(check, getattr(previous, "levels", None) or {}, wrap)
    check(0.85)
    c.place()
    routes, refs = c.join_routes()
    root = c.level_res[""]
    check(1.0)
    return LayoutResult(positions=c.positions, routes=routes, references=frozenset(refs), width=root.width,
                        height=root.height, sizes={b.key: (b.width, b.height) for b in graph.boxes},
                        frames=c.frames, levels=c.level_res)


class _Compound:
    """One :func:`compound_layout` call: the levels (open groups, ``""`` the root) and what each phase produces.

    A level's local vertices are ``("box", key)``, ``("frame", group)`` (a child group's
    frame), ``("in", group, k)`` (entry pin) and ``("out", group, k)`` (exit pin)."""

    def __init__(self, graph: DisplayGraph) -> None:
        self.graph = graph
        self.parents = dict(graph.group_parents)
        self.box_group = graph.box_groups
        self.by_key = {b.key: b for b in graph.boxes}
        self.level_items: dict[str, dict[tuple, int]] = {}
        self.level_edges: dict[str, list[tuple[tuple, int, tuple, int, str]]] = {}
        self.entries: dict[tuple[str, str, int], tuple] = {}
        self.exits: dict[tuple[str, str, int], tuple] = {}
        self.pieces: dict[str, list[tuple[str, int]]] = {}   # edge key -> [(level, piece index)]

    def chain(self, key: str) -> list[str]:
        """The open groups box ``key`` lies in, outermost first."""
        g = self.box_group.get(key, "")
        out = []
        while g:
            out.append(g)
            g = self.parents.get(g, "")
        out.reverse()
        return out

    def depth(self, g: str) -> int:
        """Nesting depth of group ``g`` (the root level ``""`` is 0)."""
        d = 0
        while g:
            g = self.parents.get(g, "")
            d += 1
        return d

    def item(self, level: str, it: tuple) -> tuple:
        """``it`` as a vertex of ``level`` (added on first use)."""
        d = self.level_items.setdefault(level, {})
        if it not in d:
            d[it] = len(d)
        return it

    def vkey(self, it: tuple) -> str:
        """The box key of local vertex ``it`` in its level's display graph."""
        if it[0] == "box":
            return it[1]
        if it[0] == "frame":
            return "f:" + it[1]
        return f"{'e' if it[0] == 'in' else 'x'}:{it[1]}:{self.pin_name[it]}"

    def split_edges(self) -> None:
        """Every level's vertices and edge pieces; ``pieces``: the (level, piece) of each edge, source to target."""
        graph, parents, item, by_key = self.graph, self.parents, self.item, self.by_key
        level_items, level_edges, entries, exits = self.level_items, self.level_edges, self.entries, self.exits
        for b in graph.boxes:
            item(self.box_group.get(b.key, ""), ("box", b.key))
        for g, p in parents.items():
            item(p, ("frame", g))
            level_items.setdefault(g, {})
        for e in graph.edges:
            if e.src not in by_key or e.dst not in by_key:
                continue
            cs, cd = self.chain(e.src), self.chain(e.dst)
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
            self.pieces[e.key] = plist

    def layout_levels(self, check: Callable[[float], None], prev_levels: dict, wrap: bool) -> None:
        """``level_res``: every level laid out deepest first (a child's frame size feeds its parent's layout)."""
        from editor.layout import layout_graph

        self.pin_name: dict[tuple, str] = {}
        for (g, src, sp), it in self.entries.items():
            self.pin_name[it] = f"{src}:{sp}"
        for (g, src, sp), it in self.exits.items():
            self.pin_name[it] = f"{src}:{sp}"
        self.levels = sorted(self.level_items, key=lambda g: (-self.depth(g), g))
        self.frame_size: dict[str, tuple[float, float]] = {}
        self.level_res: dict[str, object] = {}
        self.edge_keys: dict[tuple[str, int], str] = {}
        for li, lev in enumerate(self.levels):
            check(0.1 + 0.7 * li / max(len(self.levels), 1))
            # a tall level may be set in columns (its frames move with their band); each level
            # is laid out incrementally when the previous result has it
            res = layout_graph(self.level_graph(lev), previous=prev_levels.get(lev), wrap=wrap)
            self.level_res[lev] = res
            if lev:
                self.frame_size[lev] = (res.width + 2 * FRAME_PAD, res.height + FRAME_TITLE + FRAME_PAD)

    def level_graph(self, lev: str) -> DisplayGraph:
        """The small display graph of one level: its boxes, child frames and pins, and its edge pieces."""
        items = self.level_items[lev]
        edges = self.level_edges.get(lev, [])
        vkey = self.vkey
        # frame ports: one per entry/exit of the child group, numbered in creation order
        fport: dict[tuple, int] = {}
        fcount: dict[tuple[str, str], int] = {}
        for (s_, sp, d, dp, _) in edges:
            for node, port, side in ((s_, sp, "out"), (d, dp, "in")):
                if node[0] == "frame" and isinstance(port, tuple) and port not in fport:
                    c = fcount.get((node[1], side), 0)
                    fport[port] = c
                    fcount[(node[1], side)] = c + 1
        # NOTE: a frame's port sits right above (below) the pin it joins inside: evenly
        # spread ports made every route into a wide frame jog along its title band to where
        # the pin is, up to the frame's width at every level (silero with its bodies open: an
        # input reached a body node through 7,700 px of jogs for 4,800 px of descent)
        at: dict[tuple[str, str], list[float]] = {}
        for port, k in sorted(fport.items(), key=lambda pk: pk[1]):
            g = port[1][0]
            pin = self.entries[port[1]] if port[0] == "n" else self.exits[port[1]]
            x = self.level_res[g].positions[vkey(pin)][0] + FRAME_PAD + PIN_W / 2
            at.setdefault((g, "in" if port[0] == "n" else "out"), []).append(x / self.frame_size[g][0])
        sub_boxes = []
        for it in items:
            k = vkey(it)
            if it[0] == "box":
                sub_boxes.append(self.by_key[it[1]])
            elif it[0] == "frame":
                fw, fh = self.frame_size[it[1]]
                sub_boxes.append(Box(key=k, kind="group", label=it[1], name=it[1], category="group", width=fw,
                                     height=fh, n_in=fcount.get((it[1], "in"), 0),
                                     n_out=fcount.get((it[1], "out"), 0), in_x=tuple(at.get((it[1], "in"), ())),
                                     out_x=tuple(at.get((it[1], "out"), ()))))
            elif it[0] == "in":
                sub_boxes.append(Box(key=k, kind="entry" if lev else "input", label="", name="", category="",
                                     width=PIN_W, height=PIN_H, n_in=0, n_out=1))
            else:
                sub_boxes.append(Box(key=k, kind="exit" if lev else "output", label="", name="", category="",
                                     width=PIN_W, height=PIN_H, n_in=1, n_out=0))
        sub_edges: dict[str, Edge] = {}
        for idx, (s_, sp, d, dp, value) in enumerate(edges):
            spi = fport[sp] if isinstance(sp, tuple) else sp
            dpi = fport[dp] if isinstance(dp, tuple) else dp
            sk, dk = vkey(s_), vkey(d)
            key = f"{sk}:{spi}->{dk}:{dpi}"
            self.edge_keys[(lev, idx)] = key
            if key not in sub_edges:
                sub_edges[key] = Edge(key, sk, spi, dk, dpi, value)
        return DisplayGraph(boxes=tuple(sub_boxes), edges=tuple(sub_edges.values()), scope=lev)

    def place(self) -> None:
        """Absolute ``positions`` of the boxes and ``frames`` of the open groups, top-down."""
        self.origin: dict[str, Point] = {"": (0.0, 0.0)}
        self.frames: dict[str, tuple[float, float, float, float]] = {}
        self.positions: dict[str, Point] = {}
        for lev in reversed(self.levels):
            ox, oy = self.origin[lev]
            res = self.level_res[lev]
            for it in self.level_items[lev]:
                x, y = res.positions[self.vkey(it)]
                x, y = x + ox, y + oy
                if it[0] == "box":
                    self.positions[it[1]] = (x, y)
                elif it[0] == "frame":
                    fw, fh = self.frame_size[it[1]]
                    self.frames[it[1]] = (x, y, fw, fh)
                    self.origin[it[1]] = (x + FRAME_PAD, y + FRAME_TITLE)

    def piece(self, lev: str, idx: int) -> list[Point] | None:
        """Route of piece ``idx`` of level ``lev`` in scene coordinates; None for a reference."""
        r = self.level_res[lev].routes.get(self.edge_keys[(lev, idx)])
        if r is None:
            return None
        ox, oy = self.origin[lev]
        return [(x + ox, y + oy) for x, y in r]

    def join_routes(self) -> tuple[dict[str, tuple[Point, ...]], set[str]]:
        """(route of every edge, its pieces joined through the frames' title bands and bottom paddings; references)."""
        from editor.layout import port_position

        routes: dict[str, tuple[Point, ...]] = {}
        refs: set[str] = set()
        for e in self.graph.edges:
            plist = self.pieces.get(e.key)
            if plist is None:
                continue
            parts = [self.piece(lev, idx) for lev, idx in plist]
            if any(p is None for p in parts):
                refs.add(e.key)
                continue
            pts: list[Point] = list(parts[0])
            for part in parts[1:]:
                a = pts[-1]
                b = part[0]
                if a != b:
                    # a at the exit pin (inside a group) or the frame's top port; b at a
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
            sb, db = self.by_key[e.src], self.by_key[e.dst]
            clean[0] = port_position(sb, self.positions[e.src], "out", e.src_port)
            clean[-1] = port_position(db, self.positions[e.dst], "in", e.dst_port)
            routes[e.key] = tuple(clean)
        return routes, refs


def _find(edges: list, s: tuple, d: tuple) -> int:
    """Index of the last piece ``s -> d`` in ``edges`` (an exit's piece, shared by its consumers)."""
    for i in range(len(edges) - 1, -1, -1):
        if edges[i][0] == s and edges[i][2] == d:
            return i
    raise KeyError((s, d))
