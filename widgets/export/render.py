"""``onnx-studio render MODEL -o FILE.svg|FILE.png|FILE.html``: draw a model's graph headless.

``.html`` writes one self-contained interactive page (:mod:`editor.webpage`: pan, zoom,
groups that open, find, node details), made by the core alone: no Qt is loaded for it.

The same pipeline as the canvas: display model (``editor.viewmodel``) -> layout
(``editor.layout``) -> ``widgets.canvas`` scene -> PNG (QImage) or SVG (QSvgGenerator).
Qt is imported only inside :func:`run` (and with ``QT_QPA_PLATFORM=offscreen`` when there
is no display), so importing this module — and ``editor`` as a whole — never loads Qt.

``--collapsed`` (default) draws name-scope groups as single boxes, ``--expanded`` draws every
node; ``--scope PATH`` opens the groups down to PATH and draws only what lies inside it.
``--bodies`` opens every If/Loop/Scan body in place (:mod:`editor.viewmodel.bodies`);
``--overlay FILE`` colours the boxes by per-node data with a legend
(:mod:`widgets.canvas.overlay_export`); ``--tiles`` writes a PNG too big to stay readable as
readable tiles (:mod:`widgets.canvas.tiles`).
``--stats`` prints the drawing's quality figures (see :mod:`editor.layout.quality`) as one
JSON object on stdout. Exit codes: 0 written, 2 the model cannot be loaded or the scope does not exist, 1 other
errors (output not writable, unknown format).
"""

from __future__ import annotations

import argparse
import json
import sys
import time
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from editor.errors import LoadError, StudioError

FORMATS = (".png", ".svg", ".html")
#: pixels per layout unit of ``--tiles`` (box text ~10 px high)
TILE_SCALE = 1.0


def load_model(path: str | Path) -> Any:
    """The document at ``path`` (weights stay external). The one place render reads files."""
    from editor.document import Document

    return Document.open(path)


def add_parser(subparsers: Any) -> argparse.ArgumentParser:
    """Register the ``render`` sub-command on an ``argparse`` subparsers object."""
    p = subparsers.add_parser(
        "render",
        help="draw a model's graph to PNG or SVG, or an interactive web page (.html)",
        description="Draw a model's graph (as the canvas shows it) to a PNG or SVG file, or to one "
                    "self-contained interactive HTML page (pan, zoom, open groups, find, node details).",
    )
    configure_parser(p)
    return p


def configure_parser(p: argparse.ArgumentParser) -> None:
    p.add_argument("model", help="path of the .onnx model")
    p.add_argument("-o", "--output", required=True, help="output file, .png, .svg or .html")
    mode = p.add_mutually_exclusive_group()
    mode.add_argument("--collapsed", dest="expanded", action="store_false",
                      help="name scopes as group boxes, the editor's first view (default)")
    mode.add_argument("--expanded", dest="expanded", action="store_true", help="every node drawn (flat)")
    p.set_defaults(expanded=False)
    p.add_argument("--scope", default="", metavar="PATH", help="draw only the inside of this name scope, e.g. /model/layers.0")
    p.add_argument("--scale", type=float, default=2.0, help="PNG pixels per layout unit (default 2; reduced for huge graphs)")
    p.add_argument("--max-size", type=int, default=None, metavar="PX",
                   help="longest PNG side in pixels (default: 8192, raised up to 32000 when the text "
                        "would otherwise be too small to read)")
    p.add_argument("--names", action="store_true", help="show node names in the boxes")
    p.add_argument("--tiles", action="store_true",
                   help="when one PNG cannot hold the picture with readable text, write it as a grid of "
                        "readable tiles FILE-r1c1.png, FILE-r1c2.png, ... instead of shrinking it")
    p.add_argument("--bodies", action="store_true",
                   help="draw the bodies of If/Loop/Scan nodes in place, as the window's "
                        "'Expand bodies in place' does (all of them, at every depth)")
    p.add_argument("--declared-shapes", dest="no_inferred_shapes", action="store_true",
                   help="label edges with the shapes the file declares only (default: inferred ones too)")
    p.add_argument("--overlay", metavar="FILE", default=None,
                   help="colour the boxes by per-node data from a JSON or CSV file (node name -> number "
                        "or label), with a legend, as the window's View > Node Data Overlay does")
    p.add_argument("--overlay-column", metavar="NAME", default=None,
                   help="the CSV column (or JSON key) to colour by (default: the first beside the name)")
    p.add_argument("--dark", action="store_true", help="dark theme")
    p.add_argument("--plumbing", action="store_true",
                   help="draw shape computations (Shape -> Gather -> Concat ...) and shared small "
                        "constants as boxes (default: a row of each node that reads them)")
    p.add_argument("--strip", action="store_true",
                   help="keep a tall graph in one column (default: columns side by side when it is "
                        "more than 8 times taller than wide)")
    p.add_argument("--timings", action="store_true", help="print the time of each stage to stderr")
    p.add_argument("--stats", action="store_true",
                   help="print the drawing's figures as JSON on stdout: boxes, edges, crossings, "
                        "total edge length, width, height (layout units)")
    p.set_defaults(func=run)


def _opsets(model: Any) -> dict[str, int]:
    return {op.domain: op.version for op in model.opset_import}


def _expanded_for(model: Any, args: argparse.Namespace, tree: Any = None) -> set[str] | None:
    """Set of open group paths for the requested mode and scope (None = flat); ``tree``:
    the graph's group tree when the caller has it.

    ``--collapsed`` is the editor's first view (``editor.viewmodel.default_expanded``: the
    top groups opened while the picture stays small), not a single box.
    """
    from editor.viewmodel import default_expanded, group_tree

    scope = args.scope.rstrip("/")
    if not scope:
        return None if args.expanded else default_expanded(model.graph, groups=tree)
    if tree is None:
        tree = group_tree(model.graph)
    if scope not in tree:
        known = sorted(tree.parent)[:8]
        raise LoadError(f"no group {scope!r} in the model (groups include: {', '.join(known) or 'none'})")
    opened = {scope}
    p = tree.parent.get(scope, "")
    while p:
        opened.add(p)
        p = tree.parent.get(p, "")
    if args.expanded:
        prefix = scope + "/"
        opened |= {g for g in tree.parent if g.startswith(prefix)}
    return opened


def render_model(model: Any, output: str | Path, args: argparse.Namespace, *, log=None,
                 node_ids: Sequence[int] | None = None, doc: Any = None) -> dict[str, Any]:
    """Lay out and draw ``model``; returns facts about the result (sizes, counts, timings).

    ``node_ids`` are the document's ids of the main graph's nodes (indices if None);
    ``doc`` (the model's document) is needed for ``--bodies``: body nodes are drawn under
    their document ids, as in the window."""
    from editor.layout import layout_graph
    from editor.viewmodel import build_display_graph, group_tree

    out = Path(output)
    suffix = out.suffix.lower()
    if suffix not in FORMATS:
        raise StudioError(f"unknown output format {out.suffix!r} (use .png or .svg)")
    timings: dict[str, float] = {}
    t = time.perf_counter()
    graph = model.graph
    # grouped once: the first view, a scope's path and the build read the same tree
    tree = group_tree(graph) if args.scope or not args.expanded or getattr(args, "bodies", False) else None
    expanded = _expanded_for(model, args, tree)
    ids = list(node_ids) if node_ids is not None else list(range(len(graph.node)))
    bodies = None
    if getattr(args, "bodies", False) and doc is not None:
        from editor.viewmodel import document_bodies
        from editor.viewmodel.bodies import all_body_paths

        bodies = document_bodies(doc)
        flat = expanded is None
        if flat:  # every group open, and every body with every group inside it
            expanded = set(tree.parent)
        expanded = expanded | all_body_paths(doc, groups="all" if flat else "default")
    value_info = None
    if not getattr(args, "no_inferred_shapes", False):
        from editor.shapes import infer_model
        from editor.shapes.declare import label_value_info

        # every edge gets a shape: the file's where it has one, the shape engine's elsewhere
        value_info = label_value_info(graph, infer_model(model), bodies=bodies is not None)
    display = build_display_graph(graph, ids, opsets=_opsets(model), expanded=expanded, value_info=value_info,
                                  bodies=bodies, show_plumbing=getattr(args, "plumbing", False), groups=tree)
    overlay = _overlay(args, display, model, doc)
    timings["viewmodel"] = time.perf_counter() - t
    t = time.perf_counter()
    result = layout_graph(display, wrap=not args.scope and not getattr(args, "strip", False))
    timings["layout"] = time.perf_counter() - t
    stats = None
    if getattr(args, "stats", False):
        from editor.layout.quality import drawing_stats

        stats = drawing_stats(len(display.boxes), len(display.edges), result.routes, result.width, result.height)
        stats["references"] = len(result.references)
    t = time.perf_counter()
    # NOTE: drawing needs Qt, which lives in ``widgets``; the core only hands it the display
    # model and the layout (imported here, when a picture is asked for, never at import time)
    try:
        from widgets.canvas.export import (
            HARD_MAX_PIXELS, HARD_MAX_SIDE, export_png, export_svg, headless_application, overview_png,
        )
        from widgets.canvas.scene import GraphScene
    except ImportError as exc:  # the other subcommands work without Qt; drawing does not
        raise StudioError(f"render draws with Qt, which cannot be imported here ({exc}); "
                          "pip install PySide6-Essentials") from None

    headless_application()

    if suffix == ".svg":
        # no scene needed: the SVG is written from the display model and the layout
        from widgets.canvas.export import export_graph_svg

        keys = set(display.boxes_in(args.scope.rstrip("/"))) if args.scope else None
        size = export_graph_svg(display, result, out, dark=args.dark, show_names=args.names, title=graph.name,
                                keys=keys or None)
        if overlay is not None:
            from widgets.canvas.overlay_export import svg_with_overlay

            amounts, text, entries, title, numeric = overlay
            out.write_text(svg_with_overlay(out.read_text(encoding="utf-8"), display, result, amounts, text, entries,
                                            title, dark=args.dark, numeric=numeric), encoding="utf-8")
        timings["draw"] = time.perf_counter() - t
        return {"boxes": len(display.boxes), "edges": len(display.edges),
                "width": size.width(), "height": size.height(), "timings": timings, "stats": stats}
    scale, readable = _png_scale(display, result, args)
    caps = {"max_side": HARD_MAX_SIDE, "max_pixels": HARD_MAX_PIXELS}
    slow = args.max_size is None and _too_slow(display, result, scale)
    # --tiles: a picture one PNG cannot hold readably (or quickly) becomes readable tiles instead
    tiles = suffix == ".png" and getattr(args, "tiles", False) and (not readable or slow)
    if slow and not tiles:
        from widgets.canvas.export import QUICK_OVERVIEW_PIXELS, fit_scale, layout_rect, png_pixels

        rect = layout_rect(display, result)
        quick = fit_scale(rect, args.scale, max_pixels=QUICK_OVERVIEW_PIXELS)
        print(f"note: {out.name} at {'a readable ' if readable else ''}{scale:.2f} px per unit would be {_px(rect, scale)} "
              f"({png_pixels(rect, scale) / 1e6:,.0f} million pixels, most of a minute to draw); drawn at "
              f"{quick:.2f} px per unit ({_px(rect, quick)}) instead, too small to read: for readable text use "
              f"--tiles (readable tiles), .svg, or --max-size {HARD_MAX_SIDE} to draw the big one anyway",
              file=sys.stderr)
        scale, readable = quick, False
    elif tiles:
        scale = min(args.scale, TILE_SCALE)
    elif suffix == ".png" and not readable and not slow:
        print(f"note: {out.name} is drawn at {scale:.2f} px per unit, too small for its text to be read; "
              f"use .svg, --tiles or --scope for a readable picture", file=sys.stderr)
    if suffix == ".png" and (slow or not args.scope and len(display.boxes) >= 1500) and overlay is None and not tiles:
        # too big for text at the capped scale (or to draw quickly): the zoomed-out picture,
        # drawn directly
        size = overview_png(display, result, out, scale=scale, dark=args.dark, always=slow, **caps)
        if size is not None:
            timings["draw"] = time.perf_counter() - t
            return {"boxes": len(display.boxes), "edges": len(display.edges),
                    "width": size.width(), "height": size.height(), "timings": timings, "stats": stats}
    scene = GraphScene(dark=args.dark, show_names=args.names)
    scene.set_graph(display, result)
    if overlay is not None:
        from widgets.canvas.overlay_export import scene_overlay

        scene_overlay(scene, overlay[0], overlay[1], numeric=overlay[4])
    timings["scene"] = time.perf_counter() - t
    t = time.perf_counter()
    selection_only = False
    if args.scope:
        inside = display.boxes_in(args.scope.rstrip("/"))
        if inside:
            scene.select_keys(inside)
            selection_only = True
    if suffix == ".png":
        if selection_only:  # the selection's region is smaller than the graph: fit it anew
            from widgets.canvas.export import export_rect

            scale = _png_scale_for(export_rect(scene, selection_only=True), args)[0]
        if tiles:
            from widgets.canvas.tiles import export_png_tiles

            rows, cols, files, size = export_png_tiles(scene, out, scale=scale, selection_only=selection_only)
            print(f"note: {out.name} is {size.width()}x{size.height()} px at a readable {scale:.2f} px per unit: "
                  f"written as {rows}x{cols} tiles {files[0].name} … {files[-1].name}", file=sys.stderr)
            out = files[0]  # a legend goes on the first tile
        else:
            size = export_png(scene, out, selection_only=selection_only, scale=scale, **caps)
        if overlay is not None and tiles:
            from widgets.canvas.overlay_export import add_png_legend

            add_png_legend(out, overlay[2], overlay[3], scale=scale, dark=args.dark, numeric=overlay[4])
        elif overlay is not None:
            from widgets.canvas.overlay_export import add_png_legend

            size = add_png_legend(out, overlay[2], overlay[3], scale=scale, dark=args.dark, numeric=overlay[4])
    else:
        size = export_svg(scene, out, selection_only=selection_only, title=graph.name)
    timings["draw"] = time.perf_counter() - t
    return {
        "boxes": len(display.boxes),
        "edges": len(display.edges),
        "width": size.width(),
        "height": size.height(),
        "timings": timings,
        "stats": stats,
    }


def _overlay(args: argparse.Namespace, display: Any, model: Any, doc: Any) -> tuple | None:
    """(box key -> amount, amount -> text, legend entries, legend title, numeric) for ``--overlay``,
    None without it. Node names are matched over every scope (body nodes too)."""
    if not getattr(args, "overlay", None):
        return None
    from editor.node_data import box_values, legend_entries, load_node_data, overlay_amounts

    data = load_node_data(args.overlay, getattr(args, "overlay_column", None))
    if doc is not None:
        names = {nid: node.name for _scope, nid, node in doc.index.iter_nodes()}
        matched = data.match_doc(doc)
    else:
        names = {k: node.name for k, node in enumerate(model.graph.node)}
        matched = data.match(names)
    values = box_values(((b.key, b.name) for b in display.boxes), matched, names)
    amounts, text = overlay_amounts(values, data.numeric)
    note = f"; {len(data.unmatched)} names in the file match no node" if data.unmatched else ""
    print(f"overlay '{data.column}': {len(values)} boxes coloured{note}", file=sys.stderr)
    title = f"{data.column} ({Path(data.source).name})"
    return amounts, text, legend_entries(values, data.numeric), title, data.numeric


def _too_slow(display: Any, result: Any, scale: float) -> bool:
    """True when a whole-graph PNG at ``scale`` has more pixels than draw in a few seconds."""
    from widgets.canvas.export import QUICK_PNG_PIXELS, layout_rect, png_pixels

    rect = layout_rect(display, result)
    return rect is not None and png_pixels(rect, scale) > QUICK_PNG_PIXELS


def _px(rect: Any, scale: float) -> str:
    return f"{rect.width() * scale:,.0f} x {rect.height() * scale:,.0f} px"


def _png_scale(display: Any, result: Any, args: argparse.Namespace) -> tuple[float, bool]:
    """(scale, readable) of a whole-graph PNG; see ``widgets.canvas.export.readable_scale``."""
    from widgets.canvas.export import layout_rect

    rect = layout_rect(display, result)
    if rect is None:
        return args.scale, True
    return _png_scale_for(rect, args)


def _png_scale_for(rect: Any, args: argparse.Namespace) -> tuple[float, bool]:
    from widgets.canvas.export import MAX_SIDE, READABLE_SCALE, fit_scale, readable_scale

    if args.max_size is not None:  # the user's cap is the cap
        s = fit_scale(rect, args.scale, max_side=args.max_size)
        return s, s >= min(args.scale, READABLE_SCALE)
    return readable_scale(rect, args.scale, max_side=MAX_SIDE)


def run(args: argparse.Namespace) -> int:
    """Entry point of the sub-command; returns the process exit code."""
    try:
        t0 = time.perf_counter()
        doc = load_model(args.model)
        t_load = time.perf_counter() - t0
        if Path(args.output).suffix.lower() == ".html":
            return _render_page(doc, args, t_load)
        facts = render_model(doc.model, args.output, args, node_ids=doc.main.node_ids, doc=doc)
    except StudioError as exc:
        print(f"error: {exc}", file=sys.stderr)
        return exc.exit_code
    except OSError as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 1
    total = sum(facts["timings"].values())
    print(f"{args.output}: {facts['boxes']} boxes, {facts['edges']} edges, "
          f"{facts['width']}x{facts['height']} in {total:.2f} s", file=sys.stderr)
    if args.timings:
        parts = ", ".join(f"{k} {v:.3f}" for k, v in facts["timings"].items())
        print(f"timings (s): load {t_load:.3f}, {parts}", file=sys.stderr)
    if facts.get("stats") is not None:
        print(json.dumps(facts["stats"]))
    return 0


def _render_page(doc: Any, args: argparse.Namespace, t_load: float) -> int:
    """``-o view.html``: the interactive page (Qt-free: :mod:`editor.webpage`)."""
    from editor.webpage import document_page
    from editor.webpage.overlays import node_data_overlay

    t = time.perf_counter()
    expanded = _expanded_for(doc.model, args)
    if args.bodies:  # every If/Loop/Scan body open in the first view, as the picture draws them
        from editor.viewmodel import group_tree
        from editor.viewmodel.bodies import all_body_paths

        flat = expanded is None
        expanded = (set(group_tree(doc.model.graph).parent) if flat else set(expanded)) | all_body_paths(
            doc, groups="all" if flat else "default")
    overlays = []
    if getattr(args, "overlay", None):
        overlays.append(node_data_overlay(doc, args.overlay, getattr(args, "overlay_column", None)))
    page = document_page(doc, expanded=expanded, dark=args.dark, inferred_shapes=not args.no_inferred_shapes,
                         show_plumbing=args.plumbing, overlays=overlays)
    size = page.write(args.output)
    f = page.facts
    held = f"{f['views']} views" + (f", {f['missing']} groups not held (too big)" if f["missing"] else "")
    print(f"{args.output}: {f['boxes']} boxes, {f['edges']} edges in the first view, {held}, {f['nodes']} nodes; "
          f"{size / 1e6:.2f} MB in {time.perf_counter() - t:.2f} s", file=sys.stderr)
    if args.timings:
        parts = ", ".join(f"{k} {v:.3f}" for k, v in f["timings"].items())
        print(f"timings (s): load {t_load:.3f}, {parts}", file=sys.stderr)
    return 0


def main(argv: Sequence[str] | None = None) -> int:
    """``python -m widgets.export.render MODEL -o FILE`` (the same as ``onnx-studio render``)."""
    parser = argparse.ArgumentParser(prog="onnx-studio render")
    configure_parser(parser)
    return run(parser.parse_args(argv))


if __name__ == "__main__":
    raise SystemExit(main())
