"""Panels one by one: the outline's item model (qtmodeltester), operator docs, weights
(initializers and Constant payloads: stats, histogram, value grid, conv filters, .npy
export), summary, undo/redo wiring, theme, About."""

from __future__ import annotations

import numpy as np
import pytest

from tests.conftest import CORPUS
from tests.widgets.conftest import open_model, show_outline, show_panel
from widgets.common.selection import Target

#: the ONNX backend suite's SqueezeNet (it was the bundled sample; these tests know its nodes)
SQUEEZENET = CORPUS / "onnx-backend" / "light" / "light_squeezenet.onnx"

SILERO = CORPUS / "real" / "silero_vad_16k_op15.onnx"
PPOCR = CORPUS / "real" / "ppocr_mobile_v2_cls.onnx"
LOGREG = CORPUS / "real" / "ort_logreg_iris.onnx"


@pytest.mark.parametrize("path", [SQUEEZENET, SILERO, LOGREG], ids=lambda p: p.name)
def test_outline_model_is_a_valid_item_model(qtmodeltester, path):
    from editor.document import Document
    from widgets.panels.outline import OutlineModel

    doc = Document.open(path)
    model = OutlineModel(doc)
    qtmodeltester.check(model, force_py=True)
    # every node of every graph has a row that maps back to it
    for scope, nid, _node in doc.index.iter_nodes():
        index = model.index_for(Target.of_node(scope.id, nid))
        assert index.isValid() and model.target(index) == Target.of_node(scope.id, nid)


def test_outline_follows_edits_and_filters(qtbot, window):
    from editor.commands import RenameValue, SetNodeField

    tab = open_model(qtbot, window, SILERO)
    show_outline(qtbot, window)
    doc = tab.doc
    nid = doc.main.node_ids[0]
    outline = window.outline
    nodes = outline.proxy.mapFromSource(outline.model.index_for(Target.of_node(doc.index.main, nid))).parent()
    outline.tree.expand(nodes)
    # a rename relabels its own row at once, without rebuilding the tree
    doc.execute(SetNodeField(nid, "name", "renamed_by_test"))
    index = outline.model.index_for(Target.of_node(doc.index.main, nid))
    assert index.data() == "renamed_by_test"
    assert not outline.model._rebuild_timer.isActive(), "a rename should not rebuild the outline"  # noqa: SLF001
    # other edits rebuild it (coalesced); what the user had opened stays open across that
    with qtbot.waitSignal(outline.model.rebuilt, timeout=5000):
        doc.execute(RenameValue(doc.index.main, doc.node(nid).output[0], "renamed_value_by_test"))
    index = outline.model.index_for(Target.of_node(doc.index.main, nid))
    assert index.data() == "renamed_by_test"
    assert outline.tree.isExpanded(outline.proxy.mapFromSource(index).parent())
    window.outline.filter.setText("renamed_by")
    assert window.outline.proxy.rowCount() >= 1
    window.outline.filter.clear()


def test_a_closed_outline_is_made_when_opened_and_follows_what_happened_meanwhile(qtbot, window, monkeypatch):
    """The tree reads the whole model (0.2 s on an 11,812-node export): a closed or hidden
    Outline builds nothing when a model opens or its structure is edited; opened, it shows
    the model as it is now, once, with the current selection."""
    from editor.commands import RenameValue
    from widgets.common.seen import is_seen
    from widgets.panels.outline import OutlineModel

    built = []
    real = OutlineModel._build
    monkeypatch.setattr(OutlineModel, "_build", lambda self: built.append(self._doc) or real(self))
    outline = window.outline
    tab = open_model(qtbot, window, SILERO)
    doc = tab.doc
    assert not is_seen(outline) and not any(built), "a closed Outline built its tree"
    nid = doc.main.node_ids[0]
    doc.execute(RenameValue(doc.index.main, doc.node(nid).output[0], "renamed_while_closed"))
    qtbot.wait(400)  # past the outline's coalescing delay
    assert not any(built)
    tab.selection.select([Target.of_node(doc.index.main, nid)], "test")
    show_outline(qtbot, window)
    assert len([d for d in built if d is doc]) == 1
    current = outline.model.target(outline.proxy.mapToSource(outline.tree.currentIndex()))
    assert current == Target.of_node(doc.index.main, nid), "the selection made while closed is shown"
    outline.filter.setText("renamed_while_closed")
    assert outline.proxy.rowCount() >= 1
    outline.filter.clear()
    # hidden again (behind Find's tab): edits wait; its tab chosen, the tree is the model's
    window.find_dock.show()
    window.tabifyDockWidget(window.outline_dock, window.find_dock)
    window.find_dock.raise_()
    qtbot.waitUntil(lambda: not is_seen(outline), timeout=5000)
    del built[:]
    doc.execute(RenameValue(doc.index.main, "renamed_while_closed", "renamed_while_behind"))
    qtbot.wait(400)
    assert not built and outline.model.stale
    show_outline(qtbot, window)
    assert len(built) == 1
    outline.filter.setText("renamed_while_behind")
    assert outline.proxy.rowCount() >= 1


def test_op_docs_at_model_opset(qtbot):
    from widgets.panels.op_docs import OpDocsPanel

    panel = OpDocsPanel()
    qtbot.addWidget(panel)
    panel.show_op("Conv", "", 9)
    text = panel.text()
    for part in ("Conv", "Inputs", "kernel_shape", "Type constraints", "tensor(float)"):
        assert part in text
    # opset 9 gets the version-1 schema, not today's
    assert "version 1" in text
    panel.show_op("Resize", "", 18)
    assert "antialias" in panel.text()
    panel.show_op("FusedConv", "com.microsoft", 1)  # onnxruntime's contrib ops are documented too
    assert "onnxruntime's registry" in panel.text() and "activation" in panel.text()
    panel.show_op("Fancy", "com.example", 1)
    assert "No schema" in panel.text()


def test_undo_redo_labels_and_modified_title(qtbot, window):
    from editor.commands import SetNodeField

    tab = open_model(qtbot, window, SILERO)
    doc = tab.doc
    nid = next(n for n in doc.main.node_ids if doc.node(n).name)
    old = doc.node(nid).name
    assert not window.registry.action("edit.undo").isEnabled()
    doc.execute(SetNodeField(nid, "name", "conv1"))
    label = doc.stack.undo_label
    assert label and window.registry.action("edit.undo").text() == f"&Undo {label}" and window.registry.action("edit.undo").isEnabled()
    assert window.isWindowModified() and window.tabs.tabText(0).endswith("*")
    window.registry.action("edit.undo").trigger()
    assert doc.node(nid).name == old
    assert not window.isWindowModified() and not window.tabs.tabText(0).endswith("*")
    assert window.registry.action("edit.redo").text() == f"&Redo {label}"
    window.registry.action("edit.redo").trigger()
    assert doc.node(nid).name == "conv1"
    # the properties panel shows the edit
    tab.selection.select([Target.of_node(doc.index.main, nid)], "test")
    assert window.properties.rows()["Node/Name"] == "conv1"


def test_standard_shortcuts(window):
    from PySide6.QtGui import QKeySequence

    K = QKeySequence.StandardKey
    pairs = [(window.registry.action("file.open"), K.Open), (window.registry.action("file.save"), K.Save), (window.registry.action("file.close"), K.Close),
             (window.registry.action("edit.find"), K.Find), (window.registry.action("view.zoom_in"), K.ZoomIn), (window.registry.action("view.zoom_out"), K.ZoomOut),
             (window.registry.action("edit.undo"), K.Undo), (window.registry.action("edit.redo"), K.Redo), (window.registry.action("edit.select_all"), K.SelectAll)]
    for action, key in pairs:
        assert action.shortcuts() == QKeySequence.keyBindings(key), action.text()


def test_select_all_and_names_toggle(qtbot, window):
    tab = open_model(qtbot, window, SQUEEZENET)
    window.registry.action("edit.select_all").trigger()
    assert set(tab.canvas.scene.selected_keys()) == set(tab.canvas.scene.node_items())
    window.registry.action("view.names").setChecked(True)
    assert tab.canvas.scene.show_names()
    assert window.settings.view_option("show_names")
    window.registry.action("view.names").setChecked(False)
    assert not tab.canvas.scene.show_names()


def test_theme_switch_recolours(qtbot, window, qapp):
    from PySide6.QtGui import QPalette

    tab = open_model(qtbot, window, SQUEEZENET)
    window.set_theme("dark")
    assert qapp.palette().color(QPalette.ColorRole.Window).lightness() < 100
    assert tab.canvas.scene.is_dark()
    assert window.settings.theme() == "dark"
    window.set_theme("light")
    assert not tab.canvas.scene.is_dark()


def test_about_lists_versions():
    from widgets.window.about import about_html, versions

    v = versions()
    for key in ("ONNX", "onnxruntime", "Qt"):
        assert key in v and v[key] and v[key] != "not installed"
    import onnx
    import onnxruntime

    html = about_html()
    assert onnx.__version__ in html and onnxruntime.__version__ in html


def test_status_bar_shows_size_and_nodes(qtbot, window):
    tab = open_model(qtbot, window, SILERO)
    text = window.model_info.text()
    assert "1.2 MB" in text and f"{len(tab.doc.main.node_ids)} nodes" in text and "with subgraphs" in text


weights_needed = pytest.mark.skipif(
    __import__("importlib.util", fromlist=["find_spec"]).find_spec("editor.weights") is None,
    reason="editor.weights not merged yet")


@weights_needed
def test_weights_of_constant_node_with_filters_and_export(qtbot, window, tmp_path):
    from editor.weights import list_weights, weight_array

    tab = open_model(qtbot, window, PPOCR)
    doc = tab.doc
    conv_w = next(w for w in list_weights(doc) if w.source == "constant" and len(w.shape) == 4
                  and w.shape[1] > 1)
    with qtbot.waitSignal(window.weights.statsReady, timeout=30_000) as blocker:
        tab.selection.select([Target.of_node(doc.index.main, conv_w.node)], "test")
    stats = blocker.args[0]
    arr = np.asarray(weight_array(doc, conv_w), dtype=np.float64)
    assert stats.min == pytest.approx(arr.min()) and stats.max == pytest.approx(arr.max())
    assert stats.mean == pytest.approx(arr.mean()) and stats.std == pytest.approx(arr.std())
    view = window.weights
    assert view.isVisibleTo(window)
    assert view.stat_labels["NaN"].text() == "0"
    assert sum(view.histogram._counts) == arr.size
    assert view.filter_count() == min(256, conv_w.shape[0] * conv_w.shape[1])
    # value grid: last axis across
    assert view.table_model.columnCount() == conv_w.shape[-1]
    assert view.table_model.rowCount() == arr.size // conv_w.shape[-1]
    assert float(view.table_model.index(0, 0).data()) == pytest.approx(arr.reshape(-1)[0], rel=1e-5)
    out = view.export(tmp_path / "w.npy")
    assert np.array_equal(np.load(out), weight_array(doc, conv_w))


@weights_needed
def test_weights_hidden_for_nodes_without_tensors(qtbot, window):
    tab = open_model(qtbot, window, SQUEEZENET)
    doc = tab.doc
    nid = next(n for n in doc.main.node_ids if doc.node(n).op_type == "Relu")
    tab.selection.select([Target.of_node(doc.index.main, nid)], "test")
    assert not window.weights.isVisibleTo(window)
    name = doc.main.initializer_names()[0]
    with qtbot.waitSignal(window.weights.statsReady, timeout=30_000):
        tab.selection.select([Target.of_tensor(doc.index.main, name)], "test")
    assert window.weights.isVisibleTo(window) and window.weights.weight.name == name


def test_filter_images_normalised():
    from widgets.panels.weights import filter_images

    arr = np.stack([np.full((2, 3, 3), -1.0), np.full((2, 3, 3), 1.0)])
    images = filter_images(arr)
    assert len(images) == 4
    assert images[0][1].pixelColor(0, 0).value() == 0 and images[3][1].pixelColor(1, 1).value() == 255
    assert filter_images(np.zeros((3, 3))) == []


validation_needed = pytest.mark.skipif(
    __import__("importlib.util", fromlist=["find_spec"]).find_spec("editor.validation") is None,
    reason="editor.validation not merged yet")


@validation_needed
def test_problems_follow_edits_and_select(qtbot, window):
    from editor.commands import SetNodeField

    tab = open_model(qtbot, window, SQUEEZENET)
    doc = tab.doc
    panel = window.problems
    assert tab.validator is not None and panel.problems() == tab.validator.problems
    assert panel.tree.topLevelItemCount() == len(tab.validator.problems)
    nid = next(n for n in doc.main.node_ids if doc.node(n).op_type == "Relu")
    with qtbot.waitSignal(panel.countChanged, timeout=5_000):
        doc.execute(SetNodeField(nid, "op_type", "NoSuchOp"))
    errors = [p for p in panel.problems() if p.node_id == nid and p.severity == "error"]
    assert errors, panel.problems()
    assert "Problems (" in window.problems_dock.windowTitle()
    row = next(i for i in range(panel.tree.topLevelItemCount())
               if panel.tree.topLevelItem(i).text(1) == errors[0].message)
    panel._on_clicked(panel.tree.topLevelItem(row))
    assert tab.selection.current == Target.of_node(doc.index.main, nid)
    qtbot.waitUntil(lambda: f"n:{nid}" in tab.canvas.scene.selected_keys(), timeout=10_000)
    with qtbot.waitSignal(panel.countChanged, timeout=5_000):
        window.registry.action("edit.undo").trigger()
    assert not [p for p in panel.problems() if p.node_id == nid and p.severity == "error"]


@validation_needed
def test_full_check_runs_in_background(qtbot, window):
    tab = open_model(qtbot, window, CORPUS / "real" / "asr_prep_resample_44_16.onnx")
    panel = window.problems
    with qtbot.waitSignal(panel.countChanged, timeout=60_000):
        window.registry.action("tools.full_check").trigger()
        assert "Running" in panel.summary.text()
    assert panel.full_button.isEnabled()
    assert panel.summary.text() in ("No problems found.",) or "error" in panel.summary.text()
    checker = next(iter(panel._checkers.values()))
    assert not checker.last_dropped and isinstance(tab.validator.full_problems, list)


def test_boxes_show_toggles(qtbot, window):
    tab = open_model(qtbot, window, SQUEEZENET)
    scene = tab.canvas.scene

    def conv_boxes():
        return [i.box for i in scene.node_items().values() if i.box.label == "Conv"]

    assert all(b.details for b in conv_boxes()) and any(b.weights for b in conv_boxes())
    assert any(e.label for e in scene.graph.edges)
    tall = max(b.height for b in conv_boxes())
    with qtbot.waitSignal(tab.canvas.controller.laidOut, timeout=30_000):
        window.registry.action("view.attributes").setChecked(False)
    assert conv_boxes() and not any(b.details for b in conv_boxes())
    assert max(b.height for b in conv_boxes()) < tall
    with qtbot.waitSignal(tab.canvas.controller.laidOut, timeout=30_000):
        window.registry.action("view.initializers").setChecked(False)
    assert not any(b.weights for b in conv_boxes())
    with qtbot.waitSignal(tab.canvas.controller.laidOut, timeout=30_000):
        window.registry.action("view.shapes").setChecked(False)
    assert not any(e.label for e in scene.graph.edges)
    assert not window.settings.view_option("show_shapes")
    for act in (window.registry.action("view.attributes"), window.registry.action("view.initializers"), window.registry.action("view.shapes")):
        with qtbot.waitSignal(tab.canvas.controller.laidOut, timeout=30_000):
            act.setChecked(True)
    assert all(b.details for b in conv_boxes()) and any(e.label for e in scene.graph.edges)


def test_display_box_size_matches_viewmodel():
    from editor import viewmodel as vm
    from widgets.view.display_options import box_size

    lines = (("kernel_shape", "3x3"), ("strides", "2,2"))
    assert box_size("Conv", lines) == vm._box_size("Conv", lines)  # noqa: SLF001 - the metric we mirror
    assert box_size("Relu", ()) == vm._box_size("Relu", ())  # noqa: SLF001


def test_summary_links_select(qtbot, window):
    from PySide6.QtCore import QUrl

    tab = open_model(qtbot, window, SQUEEZENET)
    doc = tab.doc
    show_panel(qtbot, window.summary)
    qtbot.waitUntil(lambda: window.summary.summary is not None, timeout=10_000)
    text = window.summary.browser.toPlainText()
    assert "Operators" in text and "Conv" in text and "Parameters" in text
    window.summary._on_link(QUrl("op:Relu"))
    relus = {n for n in doc.main.node_ids if doc.node(n).op_type == "Relu"}
    assert {t.node for t in tab.selection.targets} == relus
    qtbot.waitUntil(lambda: {f"n:{n}" for n in relus} <= set(tab.canvas.scene.selected_keys()), timeout=10_000)
    window.summary._on_link(QUrl("value:data_0"))
    assert tab.selection.current == Target.of_value(doc.index.main, "data_0")
    assert "in:data_0" in tab.canvas.scene.selected_keys()


def test_op_docs_keep_angle_brackets(qtbot):
    from widgets.panels.op_docs import OpDocsPanel

    panel = OpDocsPanel()
    qtbot.addWidget(panel)
    panel.show_op("Relu", "", 14)
    text = panel.text()
    assert "(Tensor<T>)" in text and "y = max(0, x)" in text
    assert "Outputs" in text and "Y" in text
    # in a code block too (the formula is fenced with ```): no entity shows on screen
    panel.show_op("LayerNormalization", "", 17)
    text = panel.text()
    assert "ReduceMean<axes=normalized_axes>(X)" in text and "&lt;" not in text, text[:600]


@weights_needed
def test_outline_lists_constant_weights(qtbot, window):
    tab = open_model(qtbot, window, PPOCR)
    show_outline(qtbot, window)
    doc = tab.doc
    constants = [n for n in doc.main.node_ids if doc.node(n).op_type == "Constant"]
    model = window.outline.model
    assert model.count(("Graph", "Constants")) == len(constants)
    nid = constants[5]
    index = model.index_for(Target.of_tensor(doc.index.main, doc.node(nid).output[0], nid))
    assert index.isValid()
    with qtbot.waitSignal(window.weights.statsReady, timeout=30_000):
        window.outline.select_index(index)
    assert window.weights.weight.node == nid


def test_a_hidden_summary_waits_until_shown(qtbot, window, monkeypatch):
    """The summary reads the whole model: behind another tab it is made when shown, once,
    whatever the edits meanwhile."""
    import editor.summary
    from editor.commands import SetNodeField
    from widgets.common.seen import is_seen

    made = []
    real = editor.summary.summarize
    monkeypatch.setattr(editor.summary, "summarize", lambda doc: made.append(1) or real(doc))
    panel = window.summary
    tab = open_model(qtbot, window, SQUEEZENET)
    assert not is_seen(panel) and not made  # a tab behind Properties
    doc = tab.doc
    nid = next(n for n in doc.main.node_ids if doc.node(n).op_type == "Relu")
    for op in ("Sigmoid", "Relu", "Sigmoid"):  # not a rename: the summary changes (an edit to the same op is none)
        doc.execute(SetNodeField(nid, "op_type", op))
        qtbot.wait(300)
    assert not made
    show_panel(qtbot, panel)
    qtbot.waitUntil(lambda: panel.summary is not None, timeout=10_000)
    assert len(made) == 1
