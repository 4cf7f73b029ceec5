"""Conversions between numpy arrays and TensorProtos for commands (every ONNX dtype)."""

from __future__ import annotations

import numpy as np
import onnx
from onnx import numpy_helper

from editor.errors import CommandError


def array_to_tensor(array: np.ndarray, name: str, elem_type: int | None = None) -> onnx.TensorProto:
    """A TensorProto holding ``array`` (ml_dtypes arrays give float8/int4/bfloat16 ...)."""
    array = np.asarray(array)
    # an object array is a STRING tensor only if it holds text; anything else (None, ints
    # boxed as objects) failed deep inside onnx with an error that is not a refusal
    if array.dtype == object and not all(isinstance(v, (str, bytes)) for v in array.flat):
        bad = next(v for v in array.flat if not isinstance(v, (str, bytes)))
        raise CommandError(f"cannot make a tensor {name!r} from an object array holding {bad!r}: "
                           "only text is stored that way (give numbers a numeric dtype)")
    try:
        if elem_type is not None:
            np_type = onnx.helper.tensor_dtype_to_np_dtype(elem_type)
            array = np.asarray(array).astype(np_type)
            return _from_array(array, name, elem_type)
        return _from_array(np.asarray(array), name, None)
    except (TypeError, ValueError, KeyError) as exc:
        raise CommandError(f"cannot make a tensor {name!r} from {array.dtype} data: {exc}") from exc


def _from_array(array: np.ndarray, name: str, elem_type: int | None) -> onnx.TensorProto:
    tensor = numpy_helper.from_array(array, name)
    if elem_type is not None and tensor.data_type != elem_type:
        raise ValueError(f"numpy gave data type {tensor.data_type}, wanted {elem_type}")
    return tensor


def tensor_to_array(tensor: onnx.TensorProto, store=None) -> np.ndarray:  # noqa: ANN001
    """The tensor's values; external data is read through the document's store."""
    if tensor.data_location == onnx.TensorProto.EXTERNAL:
        from editor.io import tensor_to_numpy

        return tensor_to_numpy(tensor, store)
    return numpy_helper.to_array(tensor)
