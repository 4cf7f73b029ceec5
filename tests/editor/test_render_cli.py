"""``onnx-studio render``: PNG/SVG of real corpus models, modes, scope, errors, Qt-free import."""

from __future__ import annotations

import argparse
import os
import subprocess
import sys
import xml.etree.ElementTree as ET
from pathlib import Path

import pytest

from tests.conftest import CORPUS, ROOT

os.environ.setdefault("QT_QPA_PLATFORM", "offscreen")

REAL = [
    CORPUS / "real" / "silero_vad_16k_op15.onnx",
    CORPUS / "real" / "magika_standard_v3_3.onnx",
    CORPUS / "onnx-backend" / "light" / "light_squeezenet.onnx",
]


def _run(argv: list[str]) -> int:
    from widgets.export import render
    parser = argparse.ArgumentParser()
    sub = parser.add_subparsers()
    render.add_parser(sub)
    args = parser.parse_args(["render", *argv])
    return args.func(args)


def test_importing_render_does_not_load_qt():
    code = "import sys, widgets.export.render; assert not any(m.startswith(('PySide6', 'shiboken6')) for m in sys.modules), 'Qt loaded'"
    subprocess.run([sys.executable, "-c", code], check=True, cwd=ROOT, env={**os.environ, "PYTHONPATH": str(ROOT)})


@pytest.mark.parametrize("model", REAL, ids=lambda p: p.stem)
def test_render_real_model_png(model: Path, tmp_path):
    if not model.is_file():
        pytest.fail(f"corpus model missing: {model}")
    from PySide6.QtGui import QImage

    out = tmp_path / "g.png"
    assert _run([str(model), "-o", str(out), "--expanded", "--scale", "1"]) == 0
    image = QImage(str(out))
    assert not image.isNull() and image.width() > 50 and image.height() > 50
    # not a blank canvas: some pixels differ from the background colour of the corner
    corner = image.pixel(0, 0)
    step = max(1, image.height() // 200)
    assert any(image.pixel(x, y) != corner for y in range(0, image.height(), step) for x in range(0, image.width(), 7))


def test_render_collapsed_svg_is_valid_xml(tmp_path):
    model = CORPUS / "real" / "silero_vad_16k_op15.onnx"
    if not model.is_file():
        pytest.fail("corpus model missing")
    out = tmp_path / "g.svg"
    assert _run([str(model), "-o", str(out), "--collapsed"]) == 0
    root = ET.parse(out).getroot()
    assert root.tag.endswith("svg")
    assert any(el.tag.endswith("text") for el in root.iter())


def test_render_scope_draws_only_that_scope(tmp_path):
    model = CORPUS / "real" / "silero_vad_16k_op15.onnx"
    if not model.is_file():
        pytest.fail("corpus model missing")
    scopes = ["/model/encoder"]  # 8 of the model's 121 nodes
    whole, part = tmp_path / "whole.png", tmp_path / "part.png"
    # every node drawn (--plumbing: shape computations as boxes too), in one column like the scope
    assert _run([str(model), "-o", str(whole), "--expanded", "--plumbing", "--strip", "--scale", "1"]) == 0
    assert _run([str(model), "-o", str(part), "--scope", scopes[0], "--expanded", "--plumbing", "--scale", "1"]) == 0
    from PySide6.QtGui import QImage

    a, b = QImage(str(whole)), QImage(str(part))
    # NOTE: the encoder is a chain of 8 of the 53 boxes, about half the height of the
    # one-column whole (it was compared with a picture in columns, 4x its area)
    assert b.width() < a.width() * 0.6 and b.height() < a.height() * 0.6, (b.size(), a.size())
    assert b.width() * b.height() < a.width() * a.height() / 3, (b.size(), a.size())


def test_render_errors(tmp_path, capsys):
    assert _run([str(tmp_path / "missing.onnx"), "-o", str(tmp_path / "x.png")]) == 2
    assert "error:" in capsys.readouterr().err
    bad = tmp_path / "bad.onnx"
    bad.write_bytes(b"not a model at all \x00\xff")
    assert _run([str(bad), "-o", str(tmp_path / "x.png")]) == 2
    model = CORPUS / "real" / "ort_logreg_iris.onnx"
    if model.is_file():
        assert _run([str(model), "-o", str(tmp_path / "x.bmp")]) == 1
        assert _run([str(model), "-o", str(tmp_path / "x.png"), "--scope", "/nope"]) == 2


def test_render_large_png_draws_the_overview_without_a_scene(tmp_path):
    import onnx
    from onnx import TensorProto, helper

    from widgets.export.render import configure_parser, render_model

    nodes, x = [], "x"
    for i in range(500):
        nodes += [helper.make_node("Relu", [x], [f"r{i}"], name=f"/m/b{i}/Relu"),
                  helper.make_node("Add", [x, f"r{i}"], [f"o{i}"], name=f"/m/b{i}/Add"),
                  helper.make_node("Sigmoid", [f"o{i}"], [f"s{i}"], name=f"/m/b{i}/Sigmoid")]
        x = f"s{i}"
    graph = helper.make_graph(nodes, "big", [helper.make_tensor_value_info("x", TensorProto.FLOAT, [4])],
                              [helper.make_tensor_value_info(x, TensorProto.FLOAT, [4])])
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)])
    path = tmp_path / "big.onnx"
    onnx.save(model, str(path))
    parser = argparse.ArgumentParser()
    configure_parser(parser)
    out = tmp_path / "big.png"
    facts = render_model(model, out, parser.parse_args([str(path), "-o", str(out), "--expanded", "--max-size", "4000",
                                                             "--strip"]))
    assert "scene" not in facts["timings"]  # drawn straight from the layout
    from PySide6.QtGui import QImage

    image = QImage(str(out))
    assert not image.isNull() and max(image.width(), image.height()) <= 4000
    corner = image.pixel(0, 0)
    assert any(image.pixel(x, y) != corner for y in range(0, image.height(), 5) for x in range(image.width()))


def test_render_stats_prints_the_drawing_figures(tmp_path, capsys):
    import json

    model = CORPUS / "onnx-backend" / "light" / "light_resnet50.onnx"
    out = tmp_path / "r.svg"
    assert _run([str(model), "-o", str(out), "--expanded", "--stats"]) == 0
    stats = json.loads(capsys.readouterr().out)
    assert {"boxes", "edges", "crossings", "length", "width", "height"} <= set(stats)
    assert stats["boxes"] > 100 and stats["edges"] >= stats["boxes"] - 2
    # ResNet-50 is planar: a layered drawing without crossings exists, and we find it
    assert stats["crossings"] == 0
    assert stats["length"] > 0 and stats["width"] > 0 and stats["height"] > stats["width"]


def test_tall_png_keeps_its_text_readable(tmp_path, capsys):
    """A graph taller than the old 8192-px cap is not squeezed until the text vanishes."""
    from PySide6.QtGui import QImage

    from widgets.canvas.export import READABLE_SCALE

    model = CORPUS / "onnx-backend" / "light" / "light_resnet50.onnx"
    out = tmp_path / "r.png"
    assert _run([str(model), "-o", str(out), "--expanded", "--stats", "--strip"]) == 0
    import json

    stats = json.loads(capsys.readouterr().out)
    image = QImage(str(out))
    assert image.height() > 8192
    assert image.height() >= READABLE_SCALE * stats["height"] * 0.99
    # an explicit cap is honoured, and the picture says it is unreadable
    assert _run([str(model), "-o", str(out), "--expanded", "--max-size", "2000", "--strip"]) == 0
    assert QImage(str(out)).height() <= 2000
    assert "too small" in capsys.readouterr().err


def test_tall_graph_is_drawn_in_columns_without_crossings(tmp_path, capsys):
    """ResNet-50 is 30x taller than wide in one column; the picture sets it in columns."""
    import json

    model = CORPUS / "onnx-backend" / "light" / "light_resnet50.onnx"
    out = tmp_path / "r.svg"
    assert _run([str(model), "-o", str(out), "--stats"]) == 0
    stats = json.loads(capsys.readouterr().out)
    assert 1 / 8 <= stats["width"] / stats["height"] <= 4
    assert stats["crossings"] == 0


def test_a_png_too_big_to_draw_quickly_says_so_and_draws_an_overview(tmp_path, capsys, monkeypatch):
    """Readable text on an 11.8k-node graph is ~400 million pixels and took a minute to
    draw (issue 30): beyond QUICK_PNG_PIXELS the PNG is the quick overview, and the note
    says how to get a readable picture instead. (The bound is lowered here so that a
    ResNet-50 strip stands in for the big graph.)"""
    from PySide6.QtGui import QImage

    import widgets.canvas.export as export

    monkeypatch.setattr(export, "QUICK_PNG_PIXELS", 2_000_000)
    model = CORPUS / "onnx-backend" / "light" / "light_resnet50.onnx"
    out = tmp_path / "r.png"
    assert _run([str(model), "-o", str(out), "--expanded", "--strip"]) == 0
    err = capsys.readouterr().err
    for hint in ("--tiles", ".svg", "--max-size"):
        assert hint in err, f"the note offers {hint}: {err!r}"
    quick = QImage(str(out))
    assert max(quick.width(), quick.height()) <= export.MAX_SIDE, (
        f"drew {quick.width()}x{quick.height()}, not the picture within the default caps")
    # asked for explicitly, the big one is drawn
    assert _run([str(model), "-o", str(out), "--expanded", "--strip", "--max-size", "32000"]) == 0
    assert "most of a minute" not in capsys.readouterr().err
    big = QImage(str(out))
    assert big.width() * big.height() > 2_000_000 and big.height() > quick.height(), (
        f"--max-size drew {big.width()}x{big.height()}")


def test_render_scope_of_one_call_draws_that_call(tmp_path):
    """``--scope /layer#2`` (one call of a reused scope) draws the boxes the display model
    put in that call: its nodes' raw names say ``/layer/``, which is every call."""
    import onnx

    from tests.editor.test_viewmodel_truth import _reused

    path = tmp_path / "reused.onnx"
    onnx.save(onnx.helper.make_model(_reused(3), opset_imports=[onnx.helper.make_opsetid("", 18)]), str(path))
    out = tmp_path / "call2.svg"
    assert _run([str(path), "-o", str(out), "--scope", "/layer#2"]) == 0
    texts = ["".join(el.itertext()) for el in ET.parse(out).getroot().iter() if el.tag.endswith("text")]
    ops = sorted(t for t in texts if t in ("Relu", "Sigmoid", "Neg", "Abs", "x", "d2"))
    assert ops == ["Relu", "Sigmoid"], f"call 2's two boxes only (the whole model: 12 boxes), drew {ops}"
    assert any("layer #2" in t for t in texts), f"the frame of call 2, not another call's: {texts}"
