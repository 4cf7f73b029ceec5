"""The shape engine: element type and (symbolic) shape of every value in a model.

:func:`infer_model` gives a :class:`ShapeTable` per graph (bodies included) whose dims are
ints or :mod:`symbolic <editor.shapes.symbolic>` formulas over the model's named dims.
"""

from editor.shapes.engine import ShapeTable, ValueShape, infer_graph, infer_model, shape_of_type
from editor.shapes.symbolic import Dim, Expr, evaluate, free_symbols, to_text

__all__ = ["Dim", "Expr", "ShapeTable", "ValueShape", "evaluate", "free_symbols", "infer_graph", "infer_model",
           "shape_of_type", "to_text"]
