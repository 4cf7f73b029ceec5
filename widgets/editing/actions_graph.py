"""Graph and model edits as registry actions: graph inputs and outputs, dimensions and
batch size, unused initializers (Graph menu); model properties, opset conversion and the
clean-up passes (Model menu). The work is the controller's; see actions_nodes."""

from __future__ import annotations

from widgets.actions.registry import ActionSpec
from widgets.editing.model import PASS_TITLES


def register(window, ctl) -> None:
    has_tab = lambda: window.current_tab() is not None  # noqa: E731
    reg = window.registry
    reg.declare_menu("Model/Clean Up", "2_cleanup")
    reg.add_all([
        ActionSpec("graph.add_input", "Add Graph &Input…", lambda: ctl.add_graph_value("input"), menu="Graph",
                   section="1_io", enabled_when=has_tab, contexts=("canvas",), context_section="3_graph"),
        ActionSpec("graph.add_output", "Add Graph &Output…", lambda: ctl.add_graph_value("output"), menu="Graph",
                   section="1_io", enabled_when=has_tab, contexts=("canvas",), context_section="3_graph"),
        ActionSpec("graph.make_output", "Make Value a Graph Output", ctl.make_output, menu="Graph", section="1_io",
                   enabled_when=has_tab, contexts=("edge",), context_section="2_value",
                   visible_when=lambda t: t.value not in t.tab.doc.scope(t.scope).output_names()),
        ActionSpec("graph.edit_value", "&Edit Graph Input/Output…", ctl.edit_graph_value, menu="Graph",
                   section="1_io", enabled_when=has_tab, contexts=("value",), context_section="3_graph"),
        ActionSpec("graph.remove_value", "&Remove Graph Input/Output", ctl.remove_graph_value, menu="Graph",
                   section="1_io", enabled_when=has_tab, contexts=("value",), context_section="3_graph"),
        ActionSpec("graph.dimension", "Set &Dimension…", ctl.set_dimension, menu="Graph", section="2_dims",
                   enabled_when=has_tab, contexts=("value",), context_section="3_graph"),
        ActionSpec("graph.batch", "Set &Batch Size…", ctl.set_batch_size, menu="Graph", section="2_dims",
                   enabled_when=has_tab, contexts=("value", "canvas"), context_section="3_graph",
                   visible_when=lambda t: t.io != "out"),
        ActionSpec("graph.delete_unused", "Delete &Unused Initializers", ctl.delete_unused, menu="Graph",
                   section="3_weights", enabled_when=has_tab),
        ActionSpec("model.metadata", "Model &Properties…", ctl.edit_metadata, menu="Model", section="1_model",
                   enabled_when=has_tab),
        ActionSpec("model.opset", "Convert &Opset…", ctl.convert_opset, menu="Model", section="1_model",
                   enabled_when=has_tab),
    ])
    for key, title in PASS_TITLES.items():
        reg.add(ActionSpec(f"model.cleanup.{key}", f"{title}…", lambda k=key: ctl.cleanup(k), menu="Model/Clean Up",
                           enabled_when=has_tab, keywords="clean up pass"))
