"""A decoder LLM in the window: the Generate dock (a prompt in, tokens shown as they come, the
same tokens as the core's generator, a value captured at a chosen step, Stop between steps),
the Run dock on its KV cache, and its int4 weights read as values."""

from __future__ import annotations

import pytest

from editor.decoder.generate import GenerateOptions, generate
from tests.editor.decoders import write_decoder_folder
from tests.widgets.conftest import open_model

PROMPT = "the quick brown fox"
# each test opens the window and starts a run worker: a loaded machine takes more than 60 s
pytestmark = pytest.mark.timeout(240)


@pytest.fixture(scope="module")
def decoder(tmp_path_factory):
    return write_decoder_folder(tmp_path_factory.mktemp("generate") / "int4", "int4")


def test_generate_dock_streams_the_greedy_tokens_and_captures_a_value(qtbot, window, decoder) -> None:
    tab = open_model(qtbot, window, decoder)
    dock = window.generate_dock
    assert window.registry.action("tools.generate") is dock.show_action
    dock.show_action.trigger()
    assert dock.isVisible()
    dock.prompt.setPlainText(PROMPT)
    dock.max_new.setValue(6)
    dock.engine.setCurrentIndex(dock.engine.findData("loop"))
    gqa = next(n for n in tab.doc.model.graph.node if n.op_type == "GroupQueryAttention")
    tab.selection.select([_node_target(tab, gqa.name)], "test")
    dock.capture_selection()
    assert dock.capture.text().split(", ")[0] == gqa.output[0], dock.capture.text()
    dock.capture_step.setValue(2)
    dock.start_button.click()
    qtbot.waitUntil(lambda: dock.generation is not None or "Cannot" in dock.status.text(), timeout=60_000)
    assert dock.generation is not None, dock.status.text()
    expected = generate(decoder.parent, PROMPT, GenerateOptions(max_new_tokens=6, engine="loop"))
    assert [s.token for s in dock.steps] == expected.tokens, "the dock showed other tokens than the core generates"
    assert dock.table.rowCount() == 6 and dock.table.item(0, 4).text() == "prefill"
    assert dock.output.toPlainText().startswith(PROMPT) and "prefill" in dock.status.text()
    assert dock.captured.rowCount() == len(dock.generation.captured) >= 1
    assert dock.generation.captured[gqa.output[0]].shape == (1, 1, 64)  # one new token at step 2


def test_stop_ends_a_generation_between_steps(qtbot, window, decoder) -> None:
    open_model(qtbot, window, decoder)
    dock = window.generate_dock
    dock.prompt.setPlainText(PROMPT)
    dock.max_new.setValue(4000)
    dock.engine.setCurrentIndex(dock.engine.findData("loop"))
    dock.start_button.click()
    qtbot.waitUntil(lambda: len(dock.steps) >= 2, timeout=60_000)
    dock.stop_button.click()
    qtbot.waitUntil(lambda: dock.generation is not None or "Cannot" in dock.status.text(), timeout=60_000)
    assert dock.start_button.isEnabled() and not dock.stop_button.isEnabled()
    # a stop, or the model's context (64 positions) ending it first: never all 4000 steps
    assert dock.generation is not None and dock.generation.stopped in ("cancelled", "context"), dock.status.text()
    assert len(dock.generation.steps) < 4000


def _node_target(tab, name):
    from widgets.common.selection import Target

    for _scope, nid, node in tab.doc.index.iter_nodes():
        if node.name == name:
            return Target.of_node(tab.doc.index.node_scope[nid], nid)
    raise AssertionError(f"no node {name!r}")


def test_run_dock_runs_a_decoder_with_an_empty_cache(qtbot, window, decoder) -> None:
    open_model(qtbot, window, decoder)
    dock = window.run_dock
    inputs = dock.controller.input_panel
    dock.show()
    dock.raise_()
    # the dock shows the core's plan (plan_inputs, worked out off the GUI thread once seen)
    qtbot.waitUntil(lambda: inputs.plan is not None, timeout=60_000)
    dims = inputs.dim_values()
    assert dims["past_sequence_length"] == 0 and dims["kv_cache_dim"] == 16, dims
    assert dims["total_sequence_length"] == dims["sequence_length"], dims
    mask = next(u for u in inputs.plan.inputs if u.name == "attention_mask")
    assert (mask.low, mask.high) == (1, 1), mask  # every token attends
    assert inputs.editors["attention_mask"].why.text().startswith("ones: the attention mask")
    with qtbot.waitSignal(dock.controller.finished, timeout=90_000) as blocker:
        assert dock.run()
    qtbot.waitUntil(lambda: not dock.service.busy)
    result = blocker.args[0]
    assert result.ok, result.error
    assert result.value("present.0.key").shape == (1, 2, dims["total_sequence_length"], 16)


def test_weights_view_shows_int4_weights_as_values(qtbot, window, decoder) -> None:
    from widgets.common.selection import Target

    tab = open_model(qtbot, window, decoder)
    view = window.weights
    view.show_tensor(tab.doc, Target.of_value(tab.doc.index.main, "/lm_head.weight_Q4"))
    assert "int4 (MatMulNBits) [64×320]" in view.header.text(), view.header.text()
    qtbot.waitUntil(lambda: view.stats is not None, timeout=30_000)
    assert view.stats.dtype == "int4 (MatMulNBits)" and "dequantized" in view.note.text()
    assert view.table_model.rowCount() == 64 and view.table_model.columnCount() == 320  # K x N values
    assert view.blocks_model.rowCount() == 320 and view.blocks_model.columnCount() == 2  # a scale per block
    assert view.tabs.isTabEnabled(3) and not view.tabs.isTabEnabled(2)
