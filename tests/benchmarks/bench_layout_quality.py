"""Layout quality benchmark: our layered layout against Graphviz ``dot`` on the same graphs.

Run as a script (not collected by pytest; needs ``dot`` on the PATH, e.g. ``apt-get install
graphviz`` — a benchmark-only peer, never a dependency):

    PYTHONPATH=. python tests/benchmarks/bench_layout_quality.py [--extra DIR] [--dot-timeout S] [--llama]

For every model of ``../shared/corpus/real`` and ``onnx-backend/light`` (plus ``*.onnx`` under
``--extra``, e.g. the folder ``fetch_more.sh`` fills), the flat (expanded) display graph is
laid out by us and by dot, given the same boxes (fixed sizes, ``fixedsize=true``), the same
ports (records: inputs along the top, outputs along the bottom, in our order) and the same
edges: the ones we route (broadcast edges we draw as reference stubs are left out of both);
dot without ports ("dot free": every edge at a box's centre, a freer problem) is given in
brackets, as earlier tables gave it. The first view's open groups are dot clusters. Both drawings are measured the same way (:mod:`editor.layout.quality`: proper
crossings between edge polylines; dot's splines are sampled into polylines), in the same
process. The first collapsed view (what the editor opens with) is measured too: its
crossings, its aspect ratio and the time to lay it out.

Targets (issue 10): crossings <= 1.5 x dot + 2% of the edges, total edge length <= 1.3 x
dot, collapsed first view's aspect ratio between 1:8 and 4:1; (issue 30) the first view's
crossings <= 1.5 x dot's on exactly its boxes, ports, groups and edges + 2%. Edge length is also given in
box heights (mean per edge, in the drawing's own mean box height) and the widest layer of
the expanded view (compare with Netron's, measured in the issue: 10 on the int8 TTS model).
Both views are built with the shapes the window labels edges with (``label_value_info``).

Netron 9.3.3 on the same models, measured with this module's metric code in headless
Chromium, is ``bench_netron.py`` (its figures are in the README's table). Measured
2026-11-27, load average 6-9, our flat view / Netron's whole drawing, crossings: MiniLM int8
1 / 141, ddddocr_common_old int8 0 / 1, reused-module transformer 1 / 218, silero VAD 0 / 19,
TTS-like int8 195 / 11,052; edge length in box heights 2.7 / 24.2, 4.0 / 3.6, 2.4 / 12.5,
2.0 / 3.3, 4.0 / 214; widest layer 3 / 6, 3 / 4, 4 / 15, 3 / 7, 6 / 6.

Big and unusual models (issue 30) are built by ``make_layout_fixtures.py`` (a torch venv):

    /path/to/torch-venv/bin/python tests/benchmarks/make_layout_fixtures.py --out /tmp/onnx-large/30b
    PYTHONPATH=. python tests/benchmarks/bench_layout_quality.py --extra /tmp/onnx-corpus-extra --extra /tmp/onnx-large/30b
"""

from __future__ import annotations

import argparse
from bisect import bisect_left
import shutil
import subprocess
import sys
import time
from pathlib import Path

import numpy as np
import onnx

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(Path(__file__).resolve().parent))

from editor.layout import layout_graph  # noqa: E402
from editor.layout.quality import count_crossings, polyline_length  # noqa: E402
from editor.viewmodel import build_display_graph, default_expanded, group_tree  # noqa: E402

PT = 72.0  # dot's plain output is in inches; our layout units are points


def _slot(used: tuple[int, ...], port: int, at: tuple[float, ...] = ()) -> int:
    """A port's place from the left among the used ones, as our boxes spread them
    (``port_position``; ``at``: ``Box.out_x``/``in_x`` where they are not in port order)."""
    slot = bisect_left(used, port) if used else port
    return sorted(range(len(at)), key=at.__getitem__).index(slot) if at else slot


def dot_source(dg, routed: set[str], *, ports: bool = True, clusters: bool = False) -> str:
    """``dg`` for dot: the same boxes (fixed sizes) and the routed edges.

    ``ports``: each box is a record whose top row holds its input ports and whose bottom row
    its output ports, in our order, and every edge runs between the same ports as ours (dot's
    ordering phase honours port positions). Without ports dot attaches every edge at a box's
    centre, a freer problem than ours: a ``DynamicQuantizeLinear`` whose outputs 0 and 2 feed
    one ``ConvInteger`` while output 1 feeds a ``Mul`` crosses there in any drawing with
    ports, and in none without. ``clusters``: the open groups of ``dg`` become dot clusters,
    so dot too keeps a group's members inside one rectangle, like our frames."""
    index = {b.key: i for i, b in enumerate(dg.boxes)}
    shape = "record" if ports else "box"
    lines = ["digraph G {", f"  node [shape={shape} fixedsize=true label=\"\"];"]
    decl: dict[str, list[str]] = {}
    for i, b in enumerate(dg.boxes):
        label = ""
        if ports:
            n_in = len(b.in_ports) or b.n_in
            n_out = len(b.out_ports) or b.n_out
            rows = [r for r in ("|".join(f"<i{k}>" for k in range(n_in)),
                                "|".join(f"<o{k}>" for k in range(n_out))) if r]
            label = f' label="{{{"|".join("{" + r + "}" for r in rows)}}}"'
        group = dg.box_groups.get(b.key, "") if clusters else ""
        decl.setdefault(group, []).append(f"n{i} [width={b.width / PT:.4f} height={b.height / PT:.4f}{label}];")
    kids: dict[str, list[str]] = {}
    for g, parent in (dg.group_parents.items() if clusters else ()):
        kids.setdefault(parent, []).append(g)

    def emit(g: str, depth: int) -> None:
        pad = "  " * depth
        for k, child in enumerate(sorted(kids.get(g, ()))):
            lines.append(f"{pad}subgraph cluster_{len(lines)}_{k} {{")
            emit(child, depth + 1)
            lines.append(pad + "}")
        lines.extend(pad + d for d in decl.get(g, ()))

    emit("", 1)
    by_key = {b.key: b for b in dg.boxes}
    for e in dg.edges:
        if e.key in routed:
            if ports:
                sp = _slot(by_key[e.src].out_ports, e.src_port, by_key[e.src].out_x)
                dp = _slot(by_key[e.dst].in_ports, e.dst_port, by_key[e.dst].in_x)
                lines.append(f"  n{index[e.src]}:o{sp}:s -> n{index[e.dst]}:i{dp}:n;")
            else:
                lines.append(f"  n{index[e.src]} -> n{index[e.dst]};")
    lines.append("}")
    return "\n".join(lines)


def _bezier(ctrl: np.ndarray, steps: int = 8) -> list[tuple[float, float]]:
    """Sample a piecewise cubic Bezier (1 + 3k control points) into a polyline."""
    pts = [tuple(ctrl[0])]
    t = np.linspace(0, 1, steps + 1)[1:, None]
    for k in range(0, len(ctrl) - 3, 3):
        p0, p1, p2, p3 = ctrl[k:k + 4]
        c = ((1 - t) ** 3) * p0 + 3 * ((1 - t) ** 2) * t * p1 + 3 * (1 - t) * t * t * p2 + t ** 3 * p3
        pts += [tuple(p) for p in c]
    return pts


def run_dot(src: str, timeout: float) -> dict | None:
    """dot's drawing as routes, width, height and seconds; None when it timed out."""
    t = time.perf_counter()
    try:
        out = subprocess.run(["dot", "-Tplain"], input=src, capture_output=True, text=True, timeout=timeout,
                             check=True).stdout
    except subprocess.TimeoutExpired:
        return None
    secs = time.perf_counter() - t
    routes = []
    width = height = 0.0
    nodes: dict[str, tuple[float, float, float, float]] = {}
    for line in out.splitlines():
        f = line.split()
        if not f:
            continue
        if f[0] == "graph":
            width, height = float(f[2]) * PT, float(f[3]) * PT
        elif f[0] == "node":
            nodes[f[1]] = tuple(float(v) * PT for v in f[2:6])  # centre x, y, width, height
        elif f[0] == "edge":
            n = int(f[3])
            ctrl = np.array([float(v) for v in f[4:4 + 2 * n]]).reshape(n, 2) * PT
            pts = _bezier(ctrl)
            # dot's spline stops where its arrowhead begins: extend it to the nearest point
            # of the head box's border (the port, with ports), as our routes end at the box
            cx, cy, w, h = nodes[f[2]]
            x, y = pts[-1]
            bx = min(max(x, cx - w / 2), cx + w / 2)
            by = min(max(y, cy - h / 2), cy + h / 2)
            if (bx, by) != (x, y):
                pts.append((bx, by))
            routes.append(pts)
    return {"routes": routes, "width": width, "height": height, "seconds": secs}


def box_heights(dg, routes) -> float:
    """Mean edge length in box heights (the drawing's own mean box height)."""
    h = sum(b.height for b in dg.boxes) / max(len(dg.boxes), 1)
    return sum(polyline_length(r) for r in routes) / max(h, 1.0) / max(len(routes), 1)


def widest_layer(res) -> int:
    """Boxes in the fullest layer (rank) of a flat layout."""
    counts: dict[int, int] = {}
    for r in res.ranks.values():
        counts[r] = counts.get(r, 0) + 1
    return max(counts.values(), default=0)


def measure(path: Path, dot_timeout: float) -> dict:
    from editor.shapes import infer_model
    from editor.shapes.declare import label_value_info

    m = onnx.load(str(path), load_external_data=False)
    opsets = {o.domain: o.version for o in m.opset_import}
    ids = list(range(len(m.graph.node)))
    # the shapes the window and ``render`` label edges with (they also say which constants are small)
    vi = label_value_info(m.graph, infer_model(m))
    dg = build_display_graph(m.graph, ids, opsets=opsets, value_info=vi)
    t = time.perf_counter()
    res = layout_graph(dg)
    ours_s = time.perf_counter() - t
    routes = list(res.routes.values())
    row = {"model": path.name, "nodes": len(m.graph.node), "boxes": len(dg.boxes), "edges": len(routes),
           "cross": count_crossings(routes), "length": sum(polyline_length(r) for r in routes),
           "aspect": res.width / max(res.height, 1.0), "ours_s": ours_s, "widest": widest_layer(res),
           "len_boxh": box_heights(dg, routes)}
    d = run_dot(dot_source(dg, set(res.routes)), dot_timeout)
    if d is None:
        row.update(dot_cross=None, dot_length=None, dot_s=None)
    else:
        row.update(dot_cross=count_crossings(d["routes"]), dot_length=sum(polyline_length(r) for r in d["routes"]),
                   dot_s=d["seconds"], dot_aspect=d["width"] / max(d["height"], 1.0))
    # dot free of our ports (every edge at a box's centre): the figure earlier tables gave
    d = run_dot(dot_source(dg, set(res.routes), ports=False), dot_timeout)
    row["dot_free_cross"] = None if d is None else count_crossings(d["routes"])
    # the first collapsed view
    tree = group_tree(m.graph)
    exp = default_expanded(m.graph, groups=tree)
    t = time.perf_counter()
    cg = build_display_graph(m.graph, ids, opsets=opsets, expanded=exp, groups=tree, value_info=vi)
    cres = layout_graph(cg, wrap=True)   # as ``render`` draws it
    row["collapsed_s"] = time.perf_counter() - t
    row["collapsed_boxes"] = len(cg.boxes)
    croutes = list(cres.routes.values())
    row["collapsed_cross"] = count_crossings(croutes)
    row["collapsed_aspect"] = cres.width / max(cres.height, 1.0)
    row["collapsed_len_boxh"] = box_heights(cg, croutes)
    # dot on exactly the boxes, ports and edges of the first view, its open groups as clusters
    cd = run_dot(dot_source(cg, set(cres.routes), clusters=True), dot_timeout)
    row["collapsed_dot_cross"] = None if cd is None else count_crossings(cd["routes"])
    # and free of ports and groups (earlier tables' figure)
    cd = run_dot(dot_source(cg, set(cres.routes), ports=False), dot_timeout)
    row["collapsed_dot_free_cross"] = None if cd is None else count_crossings(cd["routes"])
    return row


def verdict(r: dict) -> str:
    if r["dot_cross"] is None:
        return "dot timed out"
    ok_c = r["cross"] <= 1.5 * r["dot_cross"] + 0.02 * r["edges"]
    ok_l = r["length"] <= 1.3 * r["dot_length"]
    ok_a = 1 / 8 <= r["collapsed_aspect"] <= 4
    if r.get("collapsed_dot_cross") is not None:
        ok_v = r["collapsed_cross"] <= 1.5 * r["collapsed_dot_cross"] + 0.02 * r["edges"]
        return " ".join(f"{k}:{'ok' if v else 'MISS'}" for k, v in (
            ("cross", ok_c), ("length", ok_l), ("aspect", ok_a), ("first-view cross", ok_v)))
    return " ".join(f"{k}:{'ok' if v else 'MISS'}" for k, v in (("cross", ok_c), ("length", ok_l), ("aspect", ok_a)))


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--extra", action="append", default=[],
                    help="folder with more .onnx models (e.g. fetch_more.sh's, or make_layout_fixtures.py's); repeatable")
    ap.add_argument("--dot-timeout", type=float, default=300.0)
    ap.add_argument("--only", default="", help="models whose file name contains this")
    ap.add_argument("--llama", action="store_true",
                    help="also time the flat layout of the synthetic 200-layer LLM (~10.4k nodes), ours and dot's")
    a = ap.parse_args()
    if shutil.which("dot") is None:
        sys.exit("error: Graphviz dot not found (apt-get install graphviz)")
    corpus = ROOT.parent / "shared" / "corpus"
    paths = sorted((corpus / "real").glob("*.onnx")) + sorted((corpus / "onnx-backend" / "light").glob("*.onnx"))
    for extra in a.extra:
        paths += sorted(Path(extra).rglob("*.onnx"))
    paths = [p for p in paths if a.only in p.name]
    print("| model | nodes | expanded: boxes, edges | crossings ours / dot (dot free) | length ours / dot | edge length "
          "(box heights) | widest layer | layout s ours / dot | first view: boxes, crossings ours / dot (dot free), "
          "aspect w:h, edge length (box heights), s | targets |")
    print("|---|---|---|---|---|---|---|---|---|---|")
    for p in paths:
        r = measure(p, a.dot_timeout)
        if r["dot_cross"] is None:
            dc, lr, ds = "?", "?", f"> {a.dot_timeout:.0f}"
        else:
            dc = str(r["dot_cross"])
            lr = f"{r['length'] / max(r['dot_length'], 1):.2f}x"
            ds = f"{r['dot_s']:.2f}"
        cdc = "?" if r["collapsed_dot_cross"] is None else r["collapsed_dot_cross"]
        dc += f" ({'?' if r['dot_free_cross'] is None else r['dot_free_cross']})"
        cdc = f"{cdc} ({'?' if r['collapsed_dot_free_cross'] is None else r['collapsed_dot_free_cross']})"
        print(f"| {r['model']} | {r['nodes']} | {r['boxes']}, {r['edges']} | {r['cross']} / {dc} | {lr} "
              f"| {r['len_boxh']:.1f} | {r['widest']} | {r['ours_s']:.3f} / {ds} "
              f"| {r['collapsed_boxes']}, {r['collapsed_cross']} / {cdc}, {r['collapsed_aspect']:.2f}, "
              f"{r['collapsed_len_boxh']:.1f}, {r['collapsed_s']:.3f} | {verdict(r)} |", flush=True)
    bodies = [r for r in (measure_bodies(p) for p in paths) if r is not None]
    if bodies:
        print("\nWith every group and If/Loop/Scan body open (`render --bodies`):\n")
        print("| model | boxes, frames, edges | crossings | longest edge / mean (box heights) | aspect w:h | layout s |")
        print("|---|---|---|---|---|---|")
        for r in bodies:
            print(f"| {r['model']} | {r['boxes']}, {r['frames']}, {r['edges']} | {r['cross']} | {r['longest']:.0f} / "
                  f"{r['mean']:.1f} | {r['aspect']:.2f} | {r['s']:.3f} |", flush=True)
    if a.llama:
        bench_llama(a.dot_timeout)


def measure_bodies(path: Path) -> dict | None:
    """The picture of ``render --bodies`` (None for a model without control flow): longest
    and mean edge in box heights, aspect, crossings (issue 30: bodies that connect)."""
    from editor.document import Document
    from editor.viewmodel import document_bodies
    from editor.viewmodel.bodies import all_body_paths

    doc = Document(onnx.load(str(path), load_external_data=False), path=str(path))
    opened = all_body_paths(doc, groups="all")
    if not opened:
        return None
    main = doc.scope(doc.index.main)
    dg = build_display_graph(main.graph, list(main.node_ids), opsets=doc.opsets(),
                             expanded=set(group_tree(main.graph).parent) | opened, bodies=document_bodies(doc))
    t = time.perf_counter()
    res = layout_graph(dg)
    secs = time.perf_counter() - t
    routes = list(res.routes.values())
    h = sum(b.height for b in dg.boxes) / max(len(dg.boxes), 1)
    lengths = [polyline_length(r) / h for r in routes]
    return {"model": path.name, "boxes": len(dg.boxes), "frames": len(res.frames), "edges": len(routes),
            "cross": count_crossings(routes), "longest": max(lengths, default=0.0),
            "mean": sum(lengths) / max(len(lengths), 1), "aspect": res.width / max(res.height, 1.0), "s": secs}


def bench_llama(dot_timeout: float) -> None:
    """Speed: the flat layout of an LLM-sized graph (best of 3), and dot on the same graph."""
    from bench_layout import synthetic_llm

    m = synthetic_llm(200)
    opsets = {o.domain: o.version for o in m.opset_import}
    dg = build_display_graph(m.graph, list(range(len(m.graph.node))), opsets=opsets)
    best, res = float("inf"), None
    for _ in range(3):
        t = time.perf_counter()
        res = layout_graph(dg)
        best = min(best, time.perf_counter() - t)
    routes = list(res.routes.values())
    print(f"\nsynthetic LLM 200 layers: {len(m.graph.node)} nodes, {len(dg.boxes)} boxes, {len(routes)} routed edges: "
          f"layout {best:.3f} s, {count_crossings(routes)} crossings", flush=True)
    d = run_dot(dot_source(dg, set(res.routes)), dot_timeout)
    if d is None:
        print(f"dot: > {dot_timeout:.0f} s (timed out); ours is > {dot_timeout / best:.0f}x faster")
    else:
        print(f"dot: {d['seconds']:.1f} s, {count_crossings(d['routes'])} crossings; ours {d['seconds'] / best:.0f}x faster")


if __name__ == "__main__":
    main()
