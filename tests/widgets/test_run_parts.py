"""Parts of the Run dock that need no run worker: item models, image conversion, the input
editors, symbolic dims and their memory, histogram and value views, the heat-map colours."""

from __future__ import annotations

import numpy as np
import pytest
from onnx import TensorProto, helper

from editor.runtime import OutputRecord, input_specs
from editor.runtime.profiling import NodeTime


def _model(inputs, outputs=None, nodes=None):
    nodes = nodes or [helper.make_node("Identity", [inputs[0].name], ["y"], name="id")]
    outputs = outputs or [helper.make_tensor_value_info("y", TensorProto.FLOAT, None)]
    graph = helper.make_graph(nodes, "g", inputs, outputs)
    return helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)])


def _png(path, w, h, colour=(255, 0, 0)):
    from PySide6.QtGui import QColor, QImage

    img = QImage(w, h, QImage.Format.Format_RGB32)
    img.fill(QColor(*colour))
    img.setPixelColor(0, 0, QColor(0, 0, 255))
    assert img.save(str(path))
    return path


# -- item models -------------------------------------------------------------------------------
def test_results_model_passes_modeltester(qtmodeltester) -> None:
    from widgets.run.models import SORT_ROLE, ResultsModel

    model = ResultsModel()
    x = np.array([[1.0, np.nan, np.inf, -2.0]], np.float32)
    model.set_records([
        OutputRecord("y", x),
        OutputRecord("names", np.array(["a", "b"], dtype=object), role="intermediate"),
        OutputRecord("seq", [np.zeros(2)], role="output"),
    ])
    qtmodeltester.check(model, force_py=True)
    assert model.rowCount() == 3 and model.columnCount() == 10
    assert model.index(0, 2).data() == "[1, 4]"
    assert model.index(0, 4).data() == "-2" and model.index(0, 5).data() == "1"
    assert model.index(0, 8).data() == "1" and model.index(0, 9).data() == "1"  # one NaN, one Inf
    assert model.index(0, 4).data(SORT_ROLE) == -2.0
    assert model.index(2, 2).data() == "sequence of 1 (tensor)"
    assert model.row_of("names") == 1 and model.row_of("nope") == -1


def test_profile_model_sorts_by_time(qtmodeltester, qtbot) -> None:
    from PySide6.QtCore import QSortFilterProxyModel, Qt

    from widgets.run.models import SORT_ROLE, ProfileModel

    model = ProfileModel()
    times = {n: NodeTime(n, "Conv", us, 1, "CPUExecutionProvider") for n, us in (("a", 5.0), ("b", 1200.0), ("c", 40.0))}
    model.set_times(times)
    qtmodeltester.check(model, force_py=True)
    proxy = QSortFilterProxyModel()
    proxy.setSourceModel(model)
    proxy.setSortRole(SORT_ROLE)
    proxy.sort(2, Qt.SortOrder.AscendingOrder)
    assert [proxy.index(r, 0).data() for r in range(3)] == ["a", "c", "b"]  # numerically, not "1,200" < "40"
    assert model.index(0, 3).data().endswith("%") and model.index(0, 5).data() == "CPU"


def test_array_slice_model_and_take_slice(qtmodeltester) -> None:
    from widgets.run.models import ArraySliceModel, take_slice

    a = np.arange(2 * 3 * 4).reshape(2, 3, 4)
    s = take_slice(a, 1, 2, {0: 1})
    np.testing.assert_array_equal(s, a[1])
    np.testing.assert_array_equal(take_slice(a, 2, 0, {1: 2}), a[:, 2, :].T)
    model = ArraySliceModel()
    model.set_slice(s)
    qtmodeltester.check(model, force_py=True)
    assert (model.rowCount(), model.columnCount()) == (3, 4)
    assert model.index(2, 3).data() == str(a[1, 2, 3])
    model.set_slice(np.float32(2.5))
    assert (model.rowCount(), model.columnCount()) == (1, 1) and model.index(0, 0).data() == "2.5"


# -- images ------------------------------------------------------------------------------------
@pytest.mark.parametrize("shape,layout", [
    ((1, 3, 224, 224), "NCHW"), (("N", 3, "H", "W"), "NCHW"), ((1, 224, 224, 3), "NHWC"),
    ((3, 32, 32), "CHW"), ((32, 32, 1), "HWC"), ((1, 1000), None), ((1, 16, 8, 8), None), (None, None),
])
def test_image_layout(shape, layout) -> None:
    from widgets.run.imaging import image_layout

    assert image_layout(shape) == layout


def test_image_to_tensor_layouts_and_normalisation(qapp, tmp_path) -> None:
    from widgets.run.imaging import ImageOptions, image_to_tensor

    path = str(_png(tmp_path / "red.png", 6, 4))
    nchw = image_to_tensor(path, ImageOptions(layout="NCHW", height=4, width=6), np.float32)
    assert nchw.shape == (1, 3, 4, 6) and nchw.dtype == np.float32
    assert nchw[0, 0, 1, 1] == pytest.approx(1.0) and nchw[0, 1, 1, 1] == 0.0
    assert nchw[0, 2, 0, 0] == pytest.approx(1.0)  # the blue corner pixel
    nhwc = image_to_tensor(path, ImageOptions(layout="NHWC", height=8, width=8, scale=1.0), np.uint8)
    assert nhwc.shape == (1, 8, 8, 3) and nhwc.dtype == np.uint8 and nhwc[0, 4, 4, 0] == 255
    norm = image_to_tensor(path, ImageOptions(layout="CHW", height=4, width=6, mean=(0.5, 0.5, 0.5),
                                              std=(0.5, 0.5, 0.5), bgr=True), np.float32)
    assert norm.shape == (3, 4, 6)
    assert norm[2, 1, 1] == pytest.approx(1.0) and norm[0, 1, 1] == pytest.approx(-1.0)  # BGR: red last


def test_tensor_to_display_image() -> None:
    from widgets.run.imaging import rgb_to_qimage, tensor_image_planes, to_display_rgb

    assert tensor_image_planes((1, 3, 8, 8)) == "NCHW"
    assert tensor_image_planes((8, 8, 3)) == "HWC"
    assert tensor_image_planes((8, 8)) == "HW"
    assert tensor_image_planes((1, 1000)) is None
    a = np.zeros((1, 3, 2, 2), np.float32)
    a[0, 1] = 10.0  # green channel only
    a[0, 0, 0, 0] = np.nan
    rgb = to_display_rgb(a, "NCHW")
    assert rgb.shape == (2, 2, 3) and rgb.dtype == np.uint8
    assert tuple(rgb[1, 1]) == (0, 255, 0)
    img = rgb_to_qimage(rgb)
    assert (img.width(), img.height()) == (2, 2) and img.pixelColor(1, 1).green() == 255
    grey = to_display_rgb(a, "NCHW", channel=1)
    assert tuple(grey[1, 1]) == (255, 255, 255)


# -- input editors -------------------------------------------------------------------------------
def test_input_editor_modes(qtbot, tmp_path) -> None:
    from widgets.run.inputs_panel import InputEditor

    x = helper.make_tensor_value_info("x", TensorProto.INT64, ["batch", 5])
    editor = InputEditor(input_specs(_model([x]))[0])
    qtbot.addWidget(editor)
    assert editor.mode.findData("image") < 0  # not image-like
    v = editor.value({"batch": 3})
    assert v.shape == (3, 5) and v.dtype == np.int64 and v.min() >= -10 and v.max() <= 10
    editor.low.setValue(4)
    editor.high.setValue(4)
    assert (editor.value({"batch": 2}) == 4).all()
    editor.set_mode("constant")
    editor.constant.setText("7")
    assert (editor.value({"batch": 1}) == 7).all()
    editor.constant.setText("seven")
    with pytest.raises(Exception, match="not a number"):
        editor.value({"batch": 1})
    editor.set_mode("ones")
    assert editor.value({"batch": 2}).sum() == 10
    np.save(tmp_path / "x.npy", np.full((2, 5), 9, np.int64))
    editor.set_mode("file")
    editor.file_path.setText(str(tmp_path / "x.npy"))
    assert (editor.value({}) == 9).all()
    state = editor.state()
    other = InputEditor(editor.spec)
    qtbot.addWidget(other)
    other.restore(state)
    assert other.current_mode() == "file" and other.file_path.text() == str(tmp_path / "x.npy")


def test_text_input_for_strings(qtbot) -> None:
    from widgets.run.inputs_panel import InputEditor

    s = helper.make_tensor_value_info("s", TensorProto.STRING, ["n"])
    editor = InputEditor(input_specs(_model([s], [helper.make_tensor_value_info("y", TensorProto.STRING, None)]))[0])
    qtbot.addWidget(editor)
    assert editor.current_mode() == "text"
    editor.text.setPlainText("hello\nworld\n")
    v = editor.value({"n": 2})
    assert v.dtype == object and v.tolist() == ["hello", "world"]


def test_image_mode_offered_and_read(qtbot, tmp_path) -> None:
    from widgets.run.inputs_panel import InputEditor

    x = helper.make_tensor_value_info("img", TensorProto.FLOAT, ["N", 3, "H", "W"])
    editor = InputEditor(input_specs(_model([x]))[0])
    qtbot.addWidget(editor)
    editor.set_mode("image")
    assert editor.image_layout.currentText() == "NCHW"
    editor.image_path.setText(str(_png(tmp_path / "i.png", 10, 10)))
    editor.image_norm.setCurrentIndex(editor.image_norm.findData("imagenet"))
    v = editor.value({"N": 2, "H": 16, "W": 12})
    assert v.shape == (2, 3, 16, 12)
    assert v[0, 0, 5, 5] == pytest.approx((1.0 - 0.485) / 0.229, rel=1e-4)
    editor.image_path.setText(str(tmp_path / "missing.png"))
    with pytest.raises(Exception, match="cannot read"):
        editor.value({"N": 1, "H": 4, "W": 4})


def test_dims_editor_guesses_and_remembers(qtbot, settings_dir) -> None:
    from widgets.run.inputs_panel import DimsMemory, InputPanel

    a = helper.make_tensor_value_info("a", TensorProto.FLOAT, ["batch", "seq_len", 8])
    b = helper.make_tensor_value_info("b", TensorProto.FLOAT, ["batch", None])
    nodes = [helper.make_node("Identity", ["a"], ["y"]), helper.make_node("Identity", ["b"], ["z"])]
    model = _model([a, b], [helper.make_tensor_value_info("y", TensorProto.FLOAT, None),
                            helper.make_tensor_value_info("z", TensorProto.FLOAT, None)], nodes)
    panel = InputPanel()
    qtbot.addWidget(panel)
    panel.set_model(model, "/models/m.onnx")
    assert panel.dims.keys() == ["batch", "seq_len", "b[1]"]
    assert panel.dim_values() == {"batch": 1, "seq_len": 16, "b[1]": 1}  # the runtime's guesses
    panel.dims.set_value("seq_len", 40)
    panel.dims.set_value("b[1]", 3)
    feeds = panel.feeds()
    assert feeds["a"].shape == (1, 40, 8) and feeds["b"].shape == (1, 3)
    # remembered per model path in QSettings (the test's own settings folder)
    again = InputPanel(memory=DimsMemory())
    qtbot.addWidget(again)
    again.set_model(model, "/models/m.onnx")
    assert again.dim_values()["seq_len"] == 40 and again.dim_values()["b[1]"] == 3
    other = InputPanel()
    qtbot.addWidget(other)
    other.set_model(model, "/models/other.onnx")
    assert other.dim_values()["seq_len"] == 16
    assert any(settings_dir.rglob("*.ini"))


# -- views -------------------------------------------------------------------------------------
def test_histogram_counts_finite_values(qtbot) -> None:
    from widgets.run.views import HistogramWidget, histogram

    counts, edges = histogram(np.array([0, 1, 1, 2, 2, 2], np.int32))
    assert counts.tolist() == [1, 2, 3] and len(edges) == 4
    counts, _ = histogram(np.array([np.nan, 1.0, np.inf, 2.0]))
    assert counts.sum() == 2
    assert histogram(np.array(["a"], dtype=object)) is None
    w = HistogramWidget()
    qtbot.addWidget(w)
    w.resize(300, 150)
    w.set_array(np.random.default_rng(0).standard_normal(1000))
    assert w.counts.sum() == 1000
    img = w.grab().toImage()
    assert img.width() == 300  # painted without error


def test_value_detail_image_and_grid(qtbot) -> None:
    from widgets.run.views import ValueDetail

    d = ValueDetail()
    qtbot.addWidget(d)
    d.resize(400, 300)
    d.show()
    a = np.random.default_rng(0).random((2, 3, 8, 8)).astype(np.float32)
    d.set_value("x", a)
    assert d.isTabVisible(1) and not d.image.pixmap().isNull()
    assert d.image.batch.maximum() == 1
    grid = d.grid
    assert (grid.model.rowCount(), grid.model.columnCount()) == (8, 8)
    grid.row_axis.setCurrentIndex(1)  # rows along axis 1 (3), columns along axis 3 (8)
    assert (grid.model.rowCount(), grid.model.columnCount()) == (3, 8)
    list(grid._fixed.values())[0].setValue(1)  # axis 0 = 1
    np.testing.assert_array_equal(grid.current_slice(), a[1, :, 0, :])
    d.set_value("v", np.arange(5))
    assert not d.isTabVisible(1) and grid.model.rowCount() == 5


def test_heat_colour_and_units() -> None:
    from widgets.overlays.heatmap import fmt_us, heat_colour

    cold, hot = heat_colour(0.0), heat_colour(1.0)
    assert cold.red() > 200 and cold.green() > 200  # yellowish
    assert hot.red() > 150 and hot.green() < 60  # red
    assert fmt_us(12) == "12 µs" and fmt_us(1500) == "1.50 ms" and fmt_us(2.5e6) == "2.50 s"


def test_options_provider_list(qtbot, settings_dir) -> None:
    from PySide6.QtCore import Qt

    from widgets.run.options import RunOptionsPanel

    opts = RunOptionsPanel()
    qtbot.addWidget(opts)
    assert opts.settings().providers is None
    opts.set_available_providers(["CUDAExecutionProvider", "CPUExecutionProvider", "AzureExecutionProvider"])
    assert opts.providers.count() == 2 and opts.settings().providers is None  # default order
    opts.providers.item(0).setCheckState(Qt.CheckState.Unchecked)
    assert opts.settings().providers == ("CPUExecutionProvider",)
    opts.backend.setCurrentIndex(opts.backend.findData("reference"))
    opts.timeout.setValue(7)
    again = RunOptionsPanel()
    qtbot.addWidget(again)
    assert again.settings().backend == "reference" and again.settings().timeout == 7.0




def test_box_times_sum_collapsed_groups() -> None:
    from types import SimpleNamespace

    from widgets.overlays.heatmap import box_times

    def item(name):
        return SimpleNamespace(box=SimpleNamespace(name=name))

    class Scene:
        def node_items(self):
            return {"n:1": item("/a/conv"), "g:/enc": item("/enc"), "g:/enc/block": item("/enc/block")}

    times = box_times(Scene(), {1: 5.0, 2: 10.0, 3: 7.0, 4: 1.0},
                      {1: "/a/conv", 2: "/enc/x", 3: "/enc/block/y", 4: "/elsewhere/z"})
    assert times == {"n:1": 5.0, "g:/enc": 10.0, "g:/enc/block": 7.0}


def test_auto_fallback_with_chosen_providers() -> None:
    """Providers chosen with the automatic backend: onnxruntime gets them, and the reference
    evaluator still takes over (without them) when onnxruntime cannot load the model."""
    from editor.runtime import ModelSource, Runner
    from editor.runtime.backends import _ort_max_opset
    from tests.editor.test_runtime_models import chain_model, new_opset_model
    from widgets.run.controller import RunRequest, execute

    x = np.array([[1.0, -2.0, 3.0]], np.float32)
    with Runner() as runner:
        ok = execute(runner, RunRequest(ModelSource.from_any(chain_model()), {"x": x},
                                        auto_providers=("CPUExecutionProvider",)))
        assert ok.ok and ok.backend == "ort"
        model = new_opset_model(_ort_max_opset() + 1)
        feeds = {i.name: np.ones([d.dim_value for d in i.type.tensor_type.shape.dim], np.float32)
                 for i in model.graph.input}
        result = execute(runner, RunRequest(ModelSource.from_any(model), feeds,
                                            auto_providers=("CPUExecutionProvider",)))
    assert [a.backend for a in result.attempts] == ["ort", "reference"]
    assert result.attempts[0].status in ("skipped", "failed")
    import onnx

    if _ort_max_opset() + 1 <= onnx.defs.onnx_opset_version():
        assert result.ok and result.backend == "reference", result.error
    else:  # the reference evaluator does not know an opset that new either; it must have tried
        assert "no backend could run the model" in result.error


@pytest.mark.timeout(120)
def test_a_big_value_does_not_freeze_the_window(qtbot) -> None:
    """Choosing a 50 MB value: the window keeps ticking while its histogram is counted (off
    the GUI thread, in chunks), the picture is a screenful, and the bars come."""
    import time

    from PySide6.QtCore import QTimer

    from widgets.run.views import ValueDetail

    a = np.random.default_rng(0).standard_normal((3200, 4096), dtype=np.float32)  # 50 MB
    a[0, 0] = np.nan
    d = ValueDetail()
    qtbot.addWidget(d)
    d.resize(500, 400)
    d.show()
    ticks: list[float] = []
    timer = QTimer()
    timer.setInterval(5)
    timer.timeout.connect(lambda: ticks.append(time.perf_counter()))
    timer.start()
    qtbot.waitUntil(lambda: len(ticks) >= 2)
    start = time.perf_counter()
    d.set_value("big", a)
    assert d.histogram.busy, "a 50 MB value should be counted off the GUI thread"
    qtbot.waitUntil(lambda: not d.histogram.busy and not d.image.busy, timeout=60_000)
    counted_s = time.perf_counter() - start
    timer.stop()
    gaps = np.diff(ticks)
    print(f"longest GUI-thread gap {gaps.max() * 1e3:.0f} ms over {len(ticks)} ticks, counted in {counted_s:.2f} s")
    # counted on the GUI thread, one gap would be the whole count; a ratio of the two (not a
    # bound in seconds: a busy machine stalls every thread now and then)
    assert gaps.max() < max(0.5, counted_s / 4), f"the GUI thread stalled {gaps.max():.2f} s of {counted_s:.2f} s"
    assert d.histogram.counts.sum() == a.size - 1
    assert max(d.image.pixmap().width(), d.image.pixmap().height()) <= 2048
