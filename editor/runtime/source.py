"""Where a model to run comes from: a file path or serialized bytes, with a cache key.

The key names the model for the worker's session cache: for a path, the resolved path with
its size and modification time (a stat, not a 50 MB hash, so warm runs stay cheap); for
bytes, a BLAKE2 digest unless the caller supplies a key (the editor can pass its document
revision). ``load_model`` is the one place a model file is parsed here; it goes through
``editor.io`` so runs get the same checks and error messages as opening a file.

``document`` names what the key is a revision *of* (an editor tab, a file path): the worker
keeps one revision per document, so editing and re-running a big model replaces the older
copy instead of piling up dead ones, and closing a tab can release everything it held.
"""

from __future__ import annotations

import hashlib
import os
from dataclasses import dataclass
from pathlib import Path

import onnx

from editor.errors import LoadError

__all__ = ["ModelSource", "load_model"]


def load_model(path: str | Path) -> onnx.ModelProto:
    """Parse ``path`` without reading external data (onnxruntime reads it from beside the file).

    External references are still checked (present, long enough, inside the model's folder).
    """
    from editor.io import load_model as io_load

    loaded = io_load(path)
    loaded.close()  # nothing is mapped yet; the runtime hands the path to onnxruntime
    return loaded.model


@dataclass(frozen=True)
class ModelSource:
    """A model to run: ``path`` or ``data`` (serialized ModelProto), and its cache ``key``."""

    key: str
    path: str | None = None
    data: bytes | None = None
    #: for bytes: the folder its external data files live in, if any
    external_dir: str | None = None
    #: what this is a revision of: a newer revision replaces it in the worker (None: no such tie)
    document: str | None = None

    @classmethod
    def from_path(cls, path: str | Path, *, document: str | None = None) -> ModelSource:
        """``document``: default the file itself, so a rewritten file replaces its older version."""
        p = Path(path).resolve()
        try:
            st = p.stat()
        except OSError as exc:
            raise LoadError(f"model file not found: {str(path)!r}") from exc
        return cls(key=f"path:{p}:{st.st_size}:{st.st_mtime_ns}", path=str(p), document=document or f"path:{p}")

    @classmethod
    def from_bytes(cls, data: bytes, key: str | None = None, *, base_dir: str | None = None,
                   document: str | None = None) -> ModelSource:
        """``base_dir``: folder where external data files of this model live, if any."""
        if key is None:
            key = "bytes:" + hashlib.blake2b(data, digest_size=16).hexdigest()
        return cls(key=key, data=data, external_dir=base_dir, document=document)

    @property
    def size(self) -> int:
        """Bytes of the model: its serialized form, or its file plus external data beside it."""
        if self.data is not None:
            return len(self.data)
        if self.path is None:
            return 0
        try:
            return os.stat(self.path).st_size
        except OSError:
            return 0

    @classmethod
    def from_any(cls, model: ModelSource | str | Path | bytes | onnx.ModelProto) -> ModelSource:
        if isinstance(model, ModelSource):
            return model
        if isinstance(model, (bytes, bytearray, memoryview)):
            return cls.from_bytes(bytes(model))
        if isinstance(model, onnx.ModelProto):
            return cls.from_bytes(model.SerializeToString())
        return cls.from_path(model)

    @property
    def is_file(self) -> bool:
        return self.data is None and self.path is not None

    @property
    def base_dir(self) -> str | None:
        """Folder external data paths are relative to (None for bytes without one)."""
        if self.path is not None:
            return os.path.dirname(self.path)
        return self.external_dir

    def load_proto(self) -> onnx.ModelProto:
        """The ModelProto, external data not loaded."""
        if self.data is not None:
            try:
                return onnx.load_model_from_string(self.data)
            except Exception as exc:
                raise LoadError(f"cannot parse model bytes ({len(self.data)} bytes): {exc}") from exc
        assert self.path is not None
        return load_model(self.path)

    def without_data(self) -> ModelSource:
        """The same source with its bytes dropped (sent once; the worker caches them)."""
        if self.data is None:
            return self
        return ModelSource(key=self.key, external_dir=self.external_dir, document=self.document)
