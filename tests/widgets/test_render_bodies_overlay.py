"""``render --bodies`` (control-flow bodies drawn in place) and ``render --overlay`` (node
data as colours with a legend), on real corpus models."""

from __future__ import annotations

import argparse
import json
import os
import re
import xml.etree.ElementTree as ET

import onnx
import pytest

from tests.conftest import CORPUS

os.environ.setdefault("QT_QPA_PLATFORM", "offscreen")

VAD = CORPUS / "real" / "silero_vad_16k_op15.onnx"
DET = CORPUS / "real" / "ppocrv4_det.onnx"
SMALL = CORPUS / "real" / "fw_silero_vad_v6.onnx"


def _run(argv: list[str]) -> int:
    from widgets.export import render
    parser = argparse.ArgumentParser()
    sub = parser.add_subparsers()
    render.add_parser(sub)
    args = parser.parse_args(["render", *argv])
    return args.func(args)


def _stats(capsys, argv: list[str]) -> dict:
    capsys.readouterr()
    assert _run([*argv, "--stats"]) == 0
    return json.loads(capsys.readouterr().out)


def _all_nodes(g: onnx.GraphProto):
    for n in g.node:
        yield n
        for a in n.attribute:
            if a.type == onnx.AttributeProto.GRAPH:
                yield from _all_nodes(a.g)


@pytest.mark.timeout(120)
def test_bodies_draw_every_if_branch_in_place(tmp_path, capsys) -> None:
    # every node a box (--plumbing: shape computations too, in the bodies as in the main graph)
    main = _stats(capsys, [str(VAD), "-o", str(tmp_path / "a.svg"), "--expanded", "--plumbing"])
    out = tmp_path / "b.svg"
    both = _stats(capsys, [str(VAD), "-o", str(out), "--expanded", "--bodies", "--plumbing"])
    model = onnx.load(str(VAD), load_external_data=False)
    in_bodies = sum(1 for n in _all_nodes(model.graph)) - len(model.graph.node)
    assert in_bodies > 200
    # the bodies' own nodes are drawn (weights folded into their consumers, as in the window)
    assert both["boxes"] >= main["boxes"] + 100
    svg = out.read_text(encoding="utf-8")
    ET.fromstring(svg)
    # every body is framed under its attribute's name
    frames = re.findall(r">(then_branch|else_branch)<", svg)
    ifs = sum(1 for n in _all_nodes(model.graph) if n.op_type == "If")
    assert len(frames) == 2 * ifs


def test_collapsed_bodies_open_the_bodies_too(tmp_path, capsys) -> None:
    plain = _stats(capsys, [str(VAD), "-o", str(tmp_path / "a.svg")])
    bodies = _stats(capsys, [str(VAD), "-o", str(tmp_path / "b.svg"), "--bodies"])
    assert bodies["boxes"] > plain["boxes"] + 50


def _profile(tmp_path, model_path, numeric: bool = True):
    model = onnx.load(str(model_path), load_external_data=False)
    names = [n.name for n in model.graph.node if n.op_type in ("Conv", "Relu", "HardSigmoid", "Add")]
    if numeric:
        f = tmp_path / "p.json"
        f.write_text(json.dumps({name: float(k % 7) - 2.0 for k, name in enumerate(names)} | {"ghost": 1.0}))
    else:
        f = tmp_path / "p.csv"
        f.write_text("node,kind\n" + "".join(f"{name},{'a' if k % 2 else 'b'}\n" for k, name in enumerate(names)))
    return f, names


def test_overlay_svg_colours_each_matched_box_and_has_a_legend(tmp_path, capsys) -> None:
    f, names = _profile(tmp_path, DET)
    out = tmp_path / "o.svg"
    assert _run([str(DET), "-o", str(out), "--expanded", "--overlay", str(f)]) == 0
    err = capsys.readouterr().err
    assert "1 names in the file match no node" in err
    root = ET.fromstring(out.read_text(encoding="utf-8"))
    ns = {"s": "http://www.w3.org/2000/svg"}
    cells = root.find(".//s:g[@id='node-data']", ns)
    legend = root.find(".//s:g[@id='legend']", ns)
    assert cells is not None and legend is not None
    # one cell and one badge per node named in the file (every one is drawn when expanded)
    assert len(cells.findall("s:text", ns)) == len(names)
    texts = [t.text for t in legend.findall("s:text", ns)]
    assert float(texts[1]) == -2.0 and float(texts[-1]) == 4.0
    # the legend sits above the graph: the view box grew upward
    vb = [float(v) for v in root.get("viewBox").split()]
    assert float(legend.find("s:rect", ns).get("y")) == pytest.approx(vb[1], abs=0.2)


def test_overlay_png_adds_a_legend_and_colours(tmp_path, capsys) -> None:
    from PySide6.QtGui import QColor, QImage

    f, names = _profile(tmp_path, SMALL, numeric=False)
    assert len(names) >= 4
    plain, coloured = tmp_path / "a.png", tmp_path / "b.png"
    assert _run([str(SMALL), "-o", str(plain), "--expanded", "--scale", "1"]) == 0
    assert _run([str(SMALL), "-o", str(coloured), "--expanded", "--scale", "1", "--overlay", str(f)]) == 0
    a, b = QImage(str(plain)), QImage(str(coloured))
    assert b.height() > a.height() and b.width() >= a.width()
    # saturated overlay colours appear that the plain picture does not have
    def saturated(img: QImage) -> int:
        return sum(1 for y in range(0, img.height(), 9) for x in range(0, img.width(), 9)
                   if QColor(img.pixel(x, y)).hsvSaturationF() > 0.6)
    assert saturated(b) > saturated(a) + 20


def test_overlay_bad_file_is_one_error_line(tmp_path, capsys) -> None:
    bad = tmp_path / "bad.json"
    bad.write_text("{nope")
    assert _run([str(DET), "-o", str(tmp_path / "x.png"), "--overlay", str(bad)]) != 0
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and err[0].startswith("error:")


def test_tiles_keep_a_picture_too_tall_for_one_png_readable(tmp_path, capsys) -> None:
    from onnx import TensorProto, helper
    from PySide6.QtGui import QImage

    from widgets.canvas.export import HARD_MAX_SIDE, READABLE_SCALE
    from widgets.canvas.tiles import TILE_PX

    nodes, x = [], "x"
    for i in range(450):
        nodes += [helper.make_node("Relu", [x], [f"r{i}"], name=f"/m/b{i}/Relu"),
                  helper.make_node("Add", [x, f"r{i}"], [f"o{i}"], name=f"/m/b{i}/Add")]
        x = f"o{i}"
    graph = helper.make_graph(nodes, "tall", [helper.make_tensor_value_info("x", TensorProto.FLOAT, ["n", 4])],
                              [helper.make_tensor_value_info(x, TensorProto.FLOAT, None)])
    path = tmp_path / "tall.onnx"
    onnx.save(helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)]), str(path))
    stats = _stats(capsys, [str(path), "-o", str(tmp_path / "t.svg"), "--expanded", "--strip"])
    assert stats["height"] * READABLE_SCALE > HARD_MAX_SIDE  # one PNG would shrink its text
    out = tmp_path / "t.png"
    capsys.readouterr()
    assert _run([str(path), "-o", str(out), "--expanded", "--strip", "--tiles"]) == 0
    assert "tiles" in capsys.readouterr().err
    tiles = sorted(tmp_path.glob("t-r*c*.png"), key=lambda p: int(p.stem.split("-r")[1].split("c")[0]))
    assert len(tiles) >= 2 and not out.exists()
    images = [QImage(str(p)) for p in tiles]
    assert all(not im.isNull() and max(im.width(), im.height()) <= TILE_PX for im in images)
    # together the tiles are the whole picture at a readable scale (1 px per unit)
    total = sum(im.height() for im in images)
    assert total >= stats["height"] * 0.99
