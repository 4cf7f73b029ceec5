"""A real model with planted edits, for the diff's tests (editor and window alike)."""

from __future__ import annotations

from pathlib import Path

from editor.commands import DeleteNodes, RenameValue, SetAttribute
from editor.document import Document
from tests.conftest import CORPUS

#: a real model nobody on the team wrote (Paddle2ONNX, 566 nodes, weights in Constants)
CLS = CORPUS / "real" / "ppocr_mobile_v2_cls.onnx"


def planted(path) -> tuple[Document, Document, dict[str, object]]:  # noqa: ANN001
    """A real model and a copy with three edits: an attribute, a deleted node (its
    consumer reconnected), a renamed value."""
    a, b = Document.open(path), Document.open(path)
    ids = list(b.main.node_ids)
    conv = next(n for n in ids if b.node(n).op_type == "Conv"
                and [list(x.ints) for x in b.node(n).attribute if x.name == "strides"] == [[1, 1]])
    b.execute(SetAttribute(conv, "strides", [2, 2]))
    victim = next(n for n in ids[len(ids) // 2:] if b.node(n).op_type in ("Relu", "HardSigmoid", "Clip"))
    b.execute(DeleteNodes([victim], reconnect=True))
    renamed = next(n for n in ids[-len(ids) // 3:] if b.has_node(n) and b.node(n).op_type == "Conv")
    old = b.node(renamed).output[0]
    b.execute(RenameValue(b.index.main, old, old + "_renamed"))
    return a, b, {"conv": conv, "victim": victim, "renamed": renamed, "value": old}


def planted_file(path: Path, out: Path) -> tuple[Path, dict[str, str]]:
    """:func:`planted` saved to ``out``; the edits by node name (ids differ between two
    loads once a node is deleted): ``conv`` (attribute), ``victim`` (deleted),
    ``renamed`` (the node whose output value was renamed) and ``value`` (its old name)."""
    a, b, edit = planted(path)
    names = {key: a.node(edit[key]).name for key in ("conv", "victim", "renamed")}
    names["value"] = edit["value"]
    b.save(out)
    return out, names
