"""Types from the shape engine wherever a type is shown (issue 29): Properties said "Type:
unknown" where the edge tooltip knew ``float32 [1, 24, 32, floor(...)]``; Make Graph Output
typed the new output ``[1,24,64,?]``. Now Properties, the Outline, Make Graph Output and Set
Dimension's list show the file's type, else the engine's, marked "(inferred)"."""

from __future__ import annotations

import numpy as np
import onnx
import pytest
from onnx import TensorProto, helper, numpy_helper

from tests.widgets.conftest import open_model, show_outline


@pytest.fixture
def model_path(tmp_path):
    """x [N, 3, H, W] -> Conv (stride 2) -> Relu -> y, with nothing declared inside and an
    output that declares no type at all."""
    x = helper.make_tensor_value_info("x", TensorProto.FLOAT, ["N", 3, "H", "W"])
    w = numpy_helper.from_array(np.ones((4, 3, 3, 3), np.float32), "w")
    nodes = [helper.make_node("Conv", ["x", "w"], ["c"], name="conv", strides=[2, 2], pads=[1, 1, 1, 1]),
             helper.make_node("Relu", ["c"], ["y"], name="relu")]
    graph = helper.make_graph(nodes, "g", [x], [onnx.ValueInfoProto(name="y")], [w])
    path = tmp_path / "untyped.onnx"
    onnx.save(helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)]), path)
    return path


def test_properties_and_outline_show_the_engines_type_marked_inferred(qtbot, window, model_path):
    from widgets.common.selection import Target

    tab = open_model(qtbot, window, model_path)
    show_outline(qtbot, window)
    main = tab.doc.index.main
    tab.selection.select([Target.of_value(main, "c")], "test")
    rows = window.properties.rows()
    kind = next(v for k, v in rows.items() if k.endswith("Type"))
    assert kind.startswith("float32") and kind.endswith("(inferred)") and "N" in kind, rows
    assert "unknown" not in kind
    # the graph output declared without a type: the Outline and the model's Properties
    outline = window.outline.model
    found = []

    def walk(index):
        for row in range(outline.rowCount(index)):
            child = outline.index(row, 0, index)
            found.append((child.data(), outline.index(row, 1, index).data()))
            walk(child)

    walk(outline.index(-1, -1))
    y = [t for name, t in found if name == "y"]
    assert y and y[0] == "Nx4xfloor((H + 1)/2)xfloor((W + 1)/2) (inferred)", found
    tab.selection.clear("test")
    rows = window.properties.rows()
    assert any(k.endswith("/y") and v.endswith("(inferred)") for k, v in rows.items()), rows


def test_make_graph_output_and_set_dimension_use_the_engines_type(qtbot, window, model_path, tmp_path):
    from tests.widgets.test_edit_support import install
    from widgets.common.selection import Target

    editing = install(window, tmp_path)
    tab = open_model(qtbot, window, model_path)
    editing.sync()
    main = tab.doc.index.main
    assert editing.make_output((main, "c"))
    out = next(o for o in tab.doc.model.graph.output if o.name == "c")
    dims = [d.dim_value or d.dim_param for d in out.type.tensor_type.shape.dim]
    assert out.type.tensor_type.elem_type == TensorProto.FLOAT and dims[:2] == ["N", 4], dims
    assert all(dims), f"the new output's dims must all be known (the engine knows them): {dims}"
    # Set Dimension lists a selected graph output with its inferred dims
    tab.selection.select([Target.of_value(main, "y")], "test")
    seen = {}

    def look(dialog):
        seen["items"] = [dialog.inputs.item(i).text() for i in range(dialog.inputs.count())]
        return False

    editing.run_dialog = look
    editing.set_dimension()
    y = next(t for t in seen["items"] if t.startswith("y "))
    assert y.endswith("(inferred)") and "N" in y, seen
