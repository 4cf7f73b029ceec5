"""Validation: problems as data, checked live after each edit and in full on demand.

* :class:`Validator` follows a document and re-checks only what each command touched
  (schema of the op at the model's opset, SSA and undefined names, graph order, declared vs
  inferred types of the touched neighbourhood).
* :func:`full_check` runs ``onnx.checker`` (full) and strict shape inference;
  :class:`BackgroundChecker` runs it off the calling thread and merges the results into a
  validator.
"""

from editor.validation.full import BackgroundChecker, full_check
from editor.validation.problems import CODES, ERROR, INFO, SEVERITIES, WARNING, Problem, count_errors
from editor.validation.validator import Validator

__all__ = [
    "CODES",
    "ERROR",
    "INFO",
    "SEVERITIES",
    "WARNING",
    "BackgroundChecker",
    "Problem",
    "Validator",
    "count_errors",
    "full_check",
]
