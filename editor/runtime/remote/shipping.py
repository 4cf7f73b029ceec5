"""Getting a model to the cluster once per version: by path when the node can read it,
else uploaded once into Ray's object store.

A :class:`Shipment` is what travels with every run: the model's key (the same cache key the
local runner uses: path + size + mtime for a file, a content hash or the editor's document
revision for bytes), its document, and how the host gets the model:

- ``path``: the host's node reads the same file (a shared or synced file system, or the
  driver's own machine in a local cluster); nothing is uploaded. External data beside it is
  read in place too.
- a *bundle* in the object store (``ModelStore.put``): the model's bytes, plus its external
  data files unless the node can read them at the same folder (``external_dir``). The
  bundle is put once per key and referenced by every later run; the host fetches it once
  and keeps its local copy (a folder of its own when there are external files).

The driver's :class:`ModelStore` keeps one revision per document, so editing and re-running
a big model releases the older upload instead of piling them up in the object store.
"""

from __future__ import annotations

import hashlib
import os
import threading
from dataclasses import dataclass
from typing import Any

import onnx

from editor.errors import LoadError
from editor.runtime.source import ModelSource

__all__ = ["ModelStore", "Shipment", "external_files", "materialize"]


@dataclass(frozen=True)
class Shipment:
    """How a host finds a model (see module docstring)."""

    key: str
    document: str | None = None
    #: the node reads the model file at this path (no bundle)
    path: str | None = None
    #: bundle of bytes whose external data the node reads from this folder
    external_dir: str | None = None

    def local_source(self) -> ModelSource:
        assert self.path is not None
        return ModelSource.from_path(self.path, document=self.document)


def external_files(source: ModelSource) -> list[str]:
    """Relative names of the external data files ``source`` refers to (none for most)."""
    proto = onnx.ModelProto()
    try:
        if source.data is not None:
            proto = onnx.load_model_from_string(source.data, load_external_data=False)
        elif source.path is not None:
            proto = onnx.load(source.path, load_external_data=False)
    except Exception as exc:  # noqa: BLE001 - the local run would say the same
        raise LoadError(f"cannot parse the model to ship it: {exc}") from None
    names: list[str] = []
    for tensor in onnx.external_data_helper._get_all_tensors(proto):
        if tensor.data_location == onnx.TensorProto.EXTERNAL:
            for entry in tensor.external_data:
                if entry.key == "location" and entry.value not in names:
                    names.append(entry.value)
    return names


def _bundle(source: ModelSource, with_external: bool) -> dict[str, Any]:
    """The bytes to upload: the model and, when asked, its external data files."""
    if source.data is not None:
        model = source.data
    else:
        assert source.path is not None
        with open(source.path, "rb") as f:
            model = f.read()
    files: dict[str, bytes] = {}
    if with_external:
        base = source.base_dir
        for name in external_files(source):
            if base is None:
                raise LoadError("the model uses external data but its folder is unknown")
            full = os.path.normpath(os.path.join(base, name))
            if not full.startswith(os.path.normpath(base) + os.sep):
                raise LoadError(f"external data {name!r} points outside the model's folder")
            with open(full, "rb") as f:
                files[name] = f.read()
    return {"model": model, "external": files}


def materialize(shipment: Shipment, bundle: dict[str, Any], folder: str) -> ModelSource:
    """The host's local ModelSource for a fetched bundle (files written under ``folder``
    when it carries external data, which onnxruntime reads from beside the model)."""
    files: dict[str, bytes] = bundle.get("external") or {}
    if not files:
        return ModelSource.from_bytes(bundle["model"], key=shipment.key, base_dir=shipment.external_dir,
                                      document=shipment.document)
    digest = hashlib.blake2b(shipment.key.encode(), digest_size=8).hexdigest()
    root = os.path.join(folder, digest)
    os.makedirs(root, exist_ok=True)
    path = os.path.join(root, "model.onnx")
    with open(path, "wb") as f:
        f.write(bundle["model"])
    for name, data in files.items():
        target = os.path.normpath(os.path.join(root, name))
        if not target.startswith(root + os.sep):
            raise LoadError(f"external data {name!r} points outside the model's folder")
        os.makedirs(os.path.dirname(target), exist_ok=True)
        with open(target, "wb") as f:
            f.write(data)
    return ModelSource.from_path(path, document=shipment.document)


#: uploads of no document kept at once (a reduce uploads one cut per check)
MAX_LOOSE = 16


class ModelStore:
    """The driver's uploads: model key -> object reference, one revision per document.

    Shared by every host of a pool, so a model is uploaded once however many hosts run it.
    ``uploads`` counts the puts made (tests and benchmarks check "once").
    """

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._refs: dict[tuple[str, bool], Any] = {}
        self._documents: dict[tuple[str, bool], str | None] = {}
        self.uploads = 0
        self.uploaded_bytes = 0

    def put(self, source: ModelSource, with_external: bool) -> Any:
        import ray

        key = (source.key, with_external)
        with self._lock:
            ref = self._refs.get(key)
            if ref is not None:
                return ref
            bundle = _bundle(source, with_external)
            ref = ray.put(bundle)
            if source.document is not None:  # the older revisions of this document go
                stale = [k for k, d in self._documents.items() if d == source.document and k != key]
            else:  # models of no document (reduce's cuts): the most recent few stay
                loose = [k for k, d in self._documents.items() if d is None]
                stale = loose[: max(0, len(loose) - MAX_LOOSE + 1)]
            for old in stale:
                self._refs.pop(old, None)
                self._documents.pop(old, None)
            self._refs[key] = ref
            self._documents[key] = source.document
            self.uploads += 1
            self.uploaded_bytes += len(bundle["model"]) + sum(len(b) for b in bundle["external"].values())
            return ref

    def release(self, document: str) -> None:
        with self._lock:
            for key in [k for k, d in self._documents.items() if d == document]:
                self._refs.pop(key, None)
                self._documents.pop(key, None)
