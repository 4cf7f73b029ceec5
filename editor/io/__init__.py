"""Model files in and out: the one place in ONNX Studio that touches them.

* :func:`load_model` / :func:`load_model_from_bytes` parse binary protobuf or the ONNX text
  syntax into a :class:`LoadedModel`; external tensors are validated (stat only) but not read.
* :class:`ExternalDataStore` reads external tensors lazily through memory maps.
* :func:`tensor_to_numpy`, :func:`numpy_to_tensor`, :func:`tensor_nbytes` convert tensors for
  every ONNX element type (ml_dtypes for bfloat16, float8, int4, int2, float4 ...).
* :func:`save_model` writes atomically: binary or text, external data preserved, inlined or
  gathered in one file; an unchanged model saves to the bytes it was read from.

Errors: :class:`~editor.errors.LoadError`, :class:`~editor.errors.ExternalDataError`,
:class:`~editor.errors.SaveError`, each with a one-line message quoting the bad value.
"""

from __future__ import annotations

from editor.io.external import ExternalDataStore, ExternalRef
from editor.io.load import LoadedModel, load_model, load_model_from_bytes
from editor.io.save import SaveOptions, save_model
from editor.io.tensors import (
    NUMPY_DTYPES,
    TensorSite,
    iter_tensors,
    numpy_to_tensor,
    tensor_nbytes,
    tensor_to_numpy,
    uses_external_data,
)
from editor.io.text import parse_model_text, serialize_model_text

__all__ = [
    "NUMPY_DTYPES",
    "ExternalDataStore",
    "ExternalRef",
    "LoadedModel",
    "SaveOptions",
    "TensorSite",
    "iter_tensors",
    "load_model",
    "load_model_from_bytes",
    "numpy_to_tensor",
    "parse_model_text",
    "save_model",
    "serialize_model_text",
    "tensor_nbytes",
    "tensor_to_numpy",
    "uses_external_data",
]
