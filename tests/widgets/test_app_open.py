"""Every real model of the corpus (and the CNNs of the backend suite) opens in the window
through the background loader, with no dialog, and the panels show what the model holds:
the outline, the status bar and the summary agree with ``editor.summary`` (the numbers
``onnx-studio info --json`` prints)."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.conftest import CORPUS, corpus_models, real_models
from tests.widgets.conftest import open_model, show_outline, show_panel


@pytest.fixture(scope="module")
def shared_window(qapp, tmp_path_factory):
    """One window for the walks over many models: each test opens its model in a tab and
    closes it (``walk_window``). A window per model cost 0.7-2 s of set-up and teardown, half
    of this file's time; what a new window starts from is checked by the other tests here."""
    from PySide6.QtCore import QSettings

    from resources import sample_model_path
    from widgets.settings.store import Settings
    from widgets.settings.theme import ThemeManager
    from widgets.window.main_window import MainWindow

    QSettings.setPath(QSettings.Format.IniFormat, QSettings.Scope.UserScope, str(tmp_path_factory.mktemp("settings")))
    theme = ThemeManager(qapp, "light")
    win = MainWindow(settings=Settings(), theme=theme, sample=sample_model_path())
    win.resize(1280, 800)
    win.show()
    yield win
    win.close()
    win.deleteLater()
    theme.setParent(None)


@pytest.fixture
def walk_window(shared_window, settings_dir):
    """The shared window with no tab open, its tabs closed again after the test."""
    assert shared_window.tabs.count() == 0, "a walk test left a tab open"
    yield shared_window
    while shared_window.tabs.count():
        shared_window.tab_list()[0].doc.stack.set_clean()  # no "discard changes?" question
        shared_window.close_tab(0)

LIGHT = sorted((CORPUS / "onnx-backend" / "light").glob("*.onnx"))


def _outline_counts(model) -> dict[str, int]:
    """Section sizes of the main graph in the outline, and nodes over all non-function graphs."""
    root = model._root
    graph = next(c for c in root.children if c.label == "Graph")
    counts = {c.label: len(c.children) for c in graph.children}

    def nodes_below(scope_item) -> int:
        total = 0
        for section in scope_item.children:
            if section.label != "Nodes":
                continue
            total += len(section.children)
            for node in section.children:
                for sub in node.children:
                    total += nodes_below(sub)
        return total

    counts["nodes_total"] = nodes_below(graph)
    return counts


@pytest.mark.parametrize("path", real_models() + LIGHT[:3], ids=lambda p: p.name)
def test_open_model_shows_what_it_holds(qtbot, walk_window, path: Path):
    from editor.document import Document

    window = walk_window
    from editor.summary import summarize

    tab = open_model(qtbot, window, path)
    show_outline(qtbot, window)
    assert window.tabs.count() == 1 and window.current_tab() is tab
    assert tab.is_ready and tab.canvas.scene.node_items(), "nothing drawn"

    expected = summarize(Document.open(path)).to_json()
    counts = _outline_counts(window.outline.model)
    assert counts["Nodes"] == expected["nodes"]
    assert counts["nodes_total"] == expected["nodes_total"]
    assert counts.get("Outputs", 0) == len(expected["outputs"])
    graph_inputs = [i for i in expected["inputs"] if not i.get("initializer")]
    assert counts.get("Inputs", 0) == len(graph_inputs)
    main_inits = len(tab.doc.main.initializer_names())
    assert counts.get("Initializers", 0) == main_inits
    # status bar: main node count
    assert f"{expected['nodes']:,} nodes" in window.model_info.text()
    # summary view (made when shown): the same summary as the CLI
    show_panel(qtbot, window.summary)
    qtbot.waitUntil(lambda: window.summary.summary is not None, timeout=10_000)
    assert window.summary.summary.to_json() == expected
    # properties default to the model
    rows = window.properties.rows()
    assert rows["Main graph/Nodes"] == str(expected["nodes"])
    assert rows["Model/IR version"] == str(expected["ir_version"])


def test_several_models_in_tabs(qtbot, window):
    a, b = real_models()[:2]
    open_model(qtbot, window, a)
    open_model(qtbot, window, b)
    assert window.tabs.count() == 2
    assert [t.path.name for t in window.tab_list()] == [a.name, b.name]
    # opening an open file switches to its tab instead of loading it twice
    window.tabs.setCurrentIndex(1)
    open_model(qtbot, window, a)
    assert window.tabs.count() == 2 and window.tabs.currentIndex() == 0
    # the panels follow the current tab
    assert window.outline.model._doc is window.current_tab().doc
    window.close_tab(0)
    assert window.tabs.count() == 1 and window.current_tab().path.name == b.name
    window.close_tab(0)
    assert window.stack.currentWidget() is window.start_page


def test_recent_files_kept(qtbot, window):
    path = real_models()[0]
    open_model(qtbot, window, path)
    assert window.settings.recent_files()[0] == str(path.resolve())
    assert window.start_page.recent.count() == 1
    titles = [a.text() for a in window.recent_menu.actions()]
    assert path.name in titles


def test_window_state_saved(qtbot, window, settings_dir):
    from widgets.settings.store import Settings

    window.close()
    geometry, state = Settings().window_state()
    assert geometry is not None and state is not None
    assert any(settings_dir.rglob("*.ini"))


def test_sample_opens_from_start_page(qtbot, window):
    from resources import sample_model_path

    assert window.stack.currentWidget() is window.start_page
    assert window.start_page.sample_button.isEnabled()
    with qtbot.waitSignal(window.modelShown, timeout=60_000):
        window.start_page.sample_button.click()
    assert window.current_tab().path == sample_model_path().resolve()


BACKEND_SAMPLE = corpus_models(real=False)[::97]  # ~20 models across node/, pytorch-*, simple/, light/


@pytest.mark.parametrize("path", BACKEND_SAMPLE, ids=lambda p: f"{p.parent.name}/{p.name}")
def test_backend_models_open_and_every_panel_follows(qtbot, walk_window, path: Path):
    """A spread of the ONNX backend suite: opens with no dialog and every node, graph
    input and initializer can be selected (properties, op docs, outline, canvas follow)."""
    from widgets.common.selection import Target

    window = walk_window

    tab = open_model(qtbot, window, path)
    show_outline(qtbot, window)
    doc = tab.doc
    targets = [Target.model()]
    for scope in doc.index.scopes.values():
        targets += [Target.of_node(scope.id, nid) for nid in scope.node_ids]
        targets += [Target.of_value(scope.id, n) for n in scope.input_names()]
        targets += [Target.of_tensor(scope.id, n) for n in scope.initializer_names()]
        targets.append(Target("scope", scope.id))
    for target in targets[:60]:
        tab.selection.select([target], "test")
        assert window.properties.rows(), target
    assert window.outline.model.rowCount() >= 2
