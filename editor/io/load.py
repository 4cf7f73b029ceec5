"""Opening model files: binary protobuf or ONNX text syntax, with external data checked.

``load_model`` reads the model file once, parses it with ``ModelProto.ParseFromString``
(never ``onnx.load(load_external_data=True)``), checks that what came out is a sane model,
and validates every tensor's dims and every external reference with ``stat`` alone. External
payloads stay on disk; an :class:`~editor.io.external.ExternalDataStore` maps them on demand.

Every failure raises :class:`~editor.errors.LoadError` (or its subclass
:class:`~editor.errors.ExternalDataError`) with one line quoting the offending path or value.
"""

from __future__ import annotations

import os
import stat
from dataclasses import dataclass, field
from collections.abc import Callable
from pathlib import Path
from typing import Literal

import onnx
from google.protobuf.message import DecodeError

from editor.errors import LoadError, StudioError
from editor.io.external import ExternalDataStore
from editor.io.names import RawName, repair_names
from editor.io.prefetch import identity
from editor.io.prefetch import take as take_prefetched
from editor.io.tensors import NUMPY_DTYPES, element_count, iter_tensors, raw_nbytes, uses_external_data
from editor.io.text import TEXT_SUFFIXES, looks_like_text, parse_model_text

#: IR versions above this are not ONNX (the spec is at 13 in 2026); random bytes that happen
#: to parse as a ModelProto usually land far above it.
MAX_IR_VERSION = 100



@dataclass
class LoadedModel:
    """A parsed model and what is needed to read and save it back."""

    model: onnx.ModelProto
    path: Path | None
    format: Literal["binary", "text"]
    store: ExternalDataStore
    file_size: int
    #: string fields that were not UTF-8 (repaired in ``model``; see editor.io.names)
    raw_names: list[RawName] = field(default_factory=list)

    def close(self) -> None:
        self.store.close()


def load_model(path: str | os.PathLike, *, data_dir: str | os.PathLike | None = None) -> LoadedModel:
    """Open ``path`` (binary ``.onnx`` or text syntax); external data resolves against
    ``data_dir`` when given, else the model's folder. Nothing external is read."""
    raw_path = Path(path)
    try:
        st = os.stat(raw_path)
    except FileNotFoundError:
        raise LoadError(f"no such file: '{raw_path}'") from None
    except OSError as exc:
        raise LoadError(f"cannot open '{raw_path}': {exc.strerror or exc}") from None
    if stat.S_ISDIR(st.st_mode):
        raise LoadError(f"'{raw_path}' is a folder, not a model file")
    if not stat.S_ISREG(st.st_mode):
        raise LoadError(f"'{raw_path}' is not a regular file")
    resolved = raw_path.resolve()
    prefetched = take_prefetched(resolved, st)  # read already, while the application started
    data, probe = (prefetched.data, prefetched.probe) if prefetched is not None else (None, None)
    if data_dir is not None:
        base = Path(data_dir)
        if not base.is_dir():
            raise LoadError(f"external data folder '{base}' is not a folder")
    else:
        base = resolved.parent
    if data is None:
        try:
            with open(resolved, "rb") as f:
                data = f.read()
        except OSError as exc:
            raise LoadError(f"cannot read '{raw_path}': {exc.strerror or exc}") from None
    force_text = resolved.suffix.lower() in TEXT_SUFFIXES
    try:
        return _load(data, resolved, base, force_text=force_text, display=str(raw_path),
                     names_clean=(lambda: probe.verdict(identity(st)) is True) if probe else None)
    finally:
        if probe is not None:
            probe.cancel()  # a no-op once it answered; stops it when the load ended early


def load_model_from_bytes(data: bytes, *, base_dir: str | os.PathLike | None = None) -> LoadedModel:
    """Parse a model held in memory (binary or text); external data resolves against ``base_dir``."""
    return _load(bytes(data), None, Path(base_dir) if base_dir is not None else None, force_text=False,
                 display="<bytes>")


def _load(data: bytes, path: Path | None, base: Path | None, *, force_text: bool, display: str,
          names_clean: Callable[[], bool] | None = None) -> LoadedModel:
    """Parse ``data``; ``names_clean`` answers True once something else knows that every
    string field is UTF-8 (the start-up's probe, :mod:`editor.io.utf8_probe`): the loader's
    own walk of the names stops then."""
    try:
        if not data:
            raise LoadError(f"'{display}' is empty, not an ONNX model")
        fmt: Literal["binary", "text"]
        if force_text and not looks_like_text(data):
            # a text extension on binary content (a renamed file): judge by content instead
            model, _ = _parse_binary(data)
            if model is not None:
                force_text = False
        if force_text:
            model, fmt = _parse_text(data, display), "text"
        else:
            model, problem = _parse_binary(data)
            fmt = "binary"
            if model is None:
                if looks_like_text(data):
                    model, fmt = _parse_text(data, display), "text"
                else:
                    raise LoadError(f"'{display}' is not an ONNX model: {problem}")
        raw_names = repair_names(model, names_clean) if fmt == "binary" else []
        store = ExternalDataStore(base)
        # text spells values out, so only a binary file bounds the size of raw data
        _validate_tensors(model, store, len(data) if fmt == "binary" else None, display)
        return LoadedModel(model=model, path=path, format=fmt, store=store, file_size=len(data), raw_names=raw_names)
    except StudioError:
        raise
    except MemoryError:
        raise LoadError(f"'{display}' is too large to open in the memory available") from None
    except Exception as exc:  # noqa: BLE001 - the promise is: LoadError and nothing else
        raise LoadError(f"cannot open '{display}': {type(exc).__name__}: {str(exc).splitlines()[0] if str(exc) else ''}") from exc


def _parse_binary(data: bytes) -> tuple[onnx.ModelProto | None, str]:
    """Parse protobuf bytes; ``(None, reason)`` when they are not a sane ModelProto."""
    model = onnx.ModelProto()
    try:
        model.ParseFromString(data)
    except (DecodeError, RuntimeError, ValueError) as exc:
        return None, f"protobuf parse failed ({str(exc).splitlines()[0] if str(exc) else 'truncated or corrupt'})"
    reason = sanity_problem(model)
    return (None, reason) if reason else (model, "")


def sanity_problem(model: onnx.ModelProto) -> str:
    """Why a parsed ModelProto is not a model (protobuf happily 'parses' many random bytes)."""
    if model.ir_version <= 0:
        return "no ir_version (the bytes parse as protobuf but not as an ONNX model)"
    if model.ir_version > MAX_IR_VERSION:
        return f"ir_version {model.ir_version} is not a known ONNX IR version"
    if not model.HasField("graph") and not len(model.functions):
        return "it has neither a graph nor functions"
    if not len(model.opset_import):
        return "it declares no opset_import (truncated?)"
    return ""


def _parse_text(data: bytes, display: str) -> onnx.ModelProto:
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError as exc:
        raise LoadError(f"'{display}' is not UTF-8 text (byte {exc.start}) and not a binary ONNX model") from None
    try:
        return parse_model_text(text)
    except LoadError as exc:
        raise LoadError(f"'{display}': {exc.message}") from None


def _validate_tensors(
    model: onnx.ModelProto, store: ExternalDataStore, file_size: int | None, display: str
) -> None:
    """Check dims of every tensor and every external reference, reading nothing."""
    for site in iter_tensors(model):
        t = site.tensor
        if uses_external_data(t):
            store.ref(t)  # stat + bounds; raises ExternalDataError
            continue
        count = element_count(t.dims, t.name)  # negative / overflowing dims
        # NOTE: inline raw_data cannot be longer than the file it came from, so a tensor whose
        # dims claim more is corrupt. The exact size check happens when the tensor is read
        # (asking upb for len(raw_data) here would copy every weight at open).
        if file_size is not None and t.data_type in NUMPY_DTYPES and t.HasField("raw_data"):
            need = raw_nbytes(t.data_type, count)
            if need > file_size:
                raise LoadError(
                    f"tensor {t.name!r} in '{display}' claims dims {list(t.dims)} ({need} bytes) "
                    f"but the file has only {file_size} bytes"
                )
