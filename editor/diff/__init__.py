"""Structural diff of two models: which nodes match, what changed, what came and went.

:func:`diff_models` pairs the nodes of two graphs without trusting list order and only
partly trusting names, then compares the pairs. The result, :class:`ModelDiff`, lists
nodes added / removed / changed (op type, attributes with old and new values, inputs
rewired, subgraph bodies), values renamed, initializers added / removed / changed (dtype,
shape, values beyond a tolerance), graph inputs and outputs changed, and model-level
changes (IR version, opsets, metadata, producer, functions). ``status_a`` / ``status_b``
map every node id of each side (all scopes) to ``"same" | "changed" | "added" |
"removed"`` for a canvas to colour; ``pairs`` maps matched A ids to B ids.


The package: :mod:`~editor.diff.records` (what a diff lists), :mod:`~editor.diff.matcher`
(pairing nodes: anchors, hashing rounds, grounding), :mod:`~editor.diff.canonical` (a
round on a canonical view: QLinearConv as Conv, Quantize/Dequantize see-through, folded
BatchNormalization / bias / Relu), :mod:`~editor.diff.rewrites` (regions of unmatched
nodes read as one quantization or fusion), :mod:`~editor.diff.values` (attributes and
tensor values compared chunk by chunk). For pictures: :mod:`~editor.diff.display`
(:func:`display_of`: a status per node and side, counterparts, the changes as stops in
A's topological order; the view, ``diff --render`` and HTML export share it), made by
:mod:`~editor.diff.stops` in the order of :mod:`~editor.diff.walk`; :mod:`~editor.diff.picture`
(one side laid out for a picture, a status per drawn box);
:mod:`~editor.diff.side_by_side` (both models opened, diffed and displayed in phases) and
:mod:`~editor.diff.weight_stats` (a change's weights before / after, quantized ones read
back to float).
"""

from editor.diff.display import DiffDisplay, Stop, display_of
from editor.diff.matcher import diff_models
from editor.diff.records import (
    AttributeChange,
    FieldChange,
    IOChange,
    InitializerChange,
    ModelDiff,
    NodeChange,
    NodeRef,
    PortChange,
    Rewrite,
    ValueRename,
)

__all__ = [
    "AttributeChange",
    "DiffDisplay",
    "Stop",
    "FieldChange",
    "IOChange",
    "InitializerChange",
    "ModelDiff",
    "NodeChange",
    "NodeRef",
    "PortChange",
    "Rewrite",
    "ValueRename",
    "diff_models",
    "display_of",
]
