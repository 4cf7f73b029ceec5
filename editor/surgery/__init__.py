"""Graph surgery: the whole-model edits people ask for most, each one undoable command.

* :mod:`~editor.surgery.precision`: fp32 -> fp16 / bf16 that follows the operator schemas;
* :mod:`~editor.surgery.merge`: chain two models (renaming clashes, reconciling opsets);
* :mod:`~editor.surgery.io_types`: change a graph input's or output's element type;
* :mod:`~editor.surgery.weights_inputs`: initializer <-> graph input;
* :mod:`~editor.surgery.patterns`: find a pattern of nodes and replace every occurrence.

Each command checks its preconditions before it changes anything.
"""

from editor.surgery.io_types import SetIOTypes
from editor.surgery.merge import MergeModel, merge_models
from editor.surgery.patterns import Match, Op, Pattern, ReplacePattern, find_matches
from editor.surgery.precision import ConvertPrecision, convert_precision
from editor.surgery.weights_inputs import InitializerToInput, InputToInitializer

__all__ = ["ConvertPrecision", "InitializerToInput", "InputToInitializer", "Match", "MergeModel", "Op", "Pattern",
           "ReplacePattern", "SetIOTypes", "convert_precision", "find_matches", "merge_models"]
