"""The live validator agrees with onnx.checker on the corpus.

* Every corpus model the checker (full) accepts gets no live *errors* (the corpus's fixed
  sample by default, every model under ``--corpus=all``: tests/conftest.py).
* Deliberate breakages (unknown op, wrong attribute type, missing required attribute,
  duplicate output name, undefined input, wrong input count, out-of-order node) made with
  commands on real models and a sample of backend models are reported live with the
  expected code on the expected node, the checker rejects the broken model, and the full
  check names the same kind of problem.
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

import onnx
import pytest

from editor.commands import AddNode, AddNodePort, RemoveAttribute, RemoveNodePort, SetAttribute, SetNodeField, SetNodeInput
from editor.document import Document, FunctionCommand
from editor.document.ops import InsertItem, RemoveItem, ReplaceItem, node_target, scope_target
from editor.schema import get_schema
from editor.validation import Validator, full_check
from tests.conftest import corpus_models, corpus_walk, in_walk, real_models, walk_share

A = onnx.AttributeProto
VARIADIC = 2**31 - 1


def _load(path: Path) -> onnx.ModelProto:
    return onnx.load(str(path), load_external_data=False)


def _checker_accepts(model: onnx.ModelProto) -> bool:
    try:
        onnx.checker.check_model(model, full_check=True)
    except Exception:  # noqa: BLE001 - ValidationError, InferenceError, anything: rejected
        return False
    return True


def test_no_live_errors_on_corpus_models_the_checker_accepts(corpus_dir: Path) -> None:
    false_errors = []
    accepted = 0
    models = corpus_walk()
    for path in models:
        model = _load(path)
        if not _checker_accepts(model):
            continue
        accepted += 1
        errors = [p for p in Validator(Document(model), live=False).validate_all() if p.severity == "error"]
        if errors:
            false_errors.append(f"{path.relative_to(corpus_dir)}: {errors[0].code}: {errors[0].message}")
    # the checker accepts nearly every corpus model (more than 1,900 of the whole walk)
    floor = walk_share(1900, len(models), len(corpus_models()))
    assert accepted > floor, f"the checker accepts {accepted} of {len(models)} models, expected more than {floor}"
    assert false_errors == [], "\n".join(false_errors[:20])


# -- breakages ------------------------------------------------------------------------------

def _main_nodes(doc: Document) -> list[tuple[int, onnx.NodeProto, onnx.defs.OpSchema | None]]:
    out = []
    for nid in doc.main.node_ids:
        node = doc.node(nid)
        schema = get_schema(node.op_type, node.domain, doc.opset(node.domain)) if doc.opset(node.domain) else None
        out.append((nid, node, schema))
    return out


def _first_input(doc: Document) -> str:
    main = doc.main
    names = main.input_names() + main.initializer_names()
    if names:
        return names[0]
    return doc.node(main.node_ids[0]).output[0]


def break_unknown_op(doc: Document):  # noqa: ANN201
    for nid, node, schema in _main_nodes(doc):
        if schema is not None and node.domain in ("", "ai.onnx"):
            return SetNodeField(nid, "op_type", "NoSuchOp"), nid
    return None


def break_attr_type(doc: Document):  # noqa: ANN201
    simple = {A.INT: (1.5, A.FLOAT), A.FLOAT: (2, A.INT), A.INTS: (1.5, A.FLOAT), A.FLOATS: (2, A.INT),
              A.STRING: (2, A.INT)}
    for nid, node, schema in _main_nodes(doc):
        if schema is None:
            continue
        for attr in node.attribute:
            spec = schema.attributes.get(attr.name)
            if spec is not None and attr.type in simple:
                value, wrong = simple[attr.type]
                return SetAttribute(nid, attr.name, value, wrong, check_schema=False), nid
    return None


def break_attr_missing(doc: Document):  # noqa: ANN201
    for nid, node, schema in _main_nodes(doc):
        if schema is None:
            continue
        for attr in node.attribute:
            spec = schema.attributes.get(attr.name)
            if spec is not None and spec.required:
                return RemoveAttribute(nid, attr.name), nid
    cmd = AddNode(doc.index.main, "Cast", name="__cast_no_to", inputs=[_first_input(doc)], outputs=["__cast_out"])
    return cmd, None  # the node id is known after execution


def break_duplicate_output(doc: Document):  # noqa: ANN201
    nodes = [(nid, n) for nid, n, _ in _main_nodes(doc) if n.output and n.output[0]]
    if len(nodes) < 2:
        return None
    (_, first), (later, _) = nodes[0], nodes[-1]
    name = first.output[0]
    return FunctionCommand("dup", lambda d, tx: tx.apply(ReplaceItem(node_target(later), "output", 0, name))), later


def break_undefined_input(doc: Document):  # noqa: ANN201
    for nid, node, _ in _main_nodes(doc):
        for k, name in enumerate(node.input):
            if name:
                return SetNodeInput(nid, k, "__nowhere__"), nid
    return None


def break_input_count(doc: Document):  # noqa: ANN201
    for nid, node, schema in _main_nodes(doc):
        if schema is None:
            continue
        if schema.max_input != VARIADIC and len(node.input) == schema.max_input and node.input:
            return AddNodePort(nid, "input", node.input[0]), nid
        if len(node.input) == schema.min_input > 0 and len(schema.inputs) >= 1:
            return RemoveNodePort(nid, "input", len(node.input) - 1), nid
    return None


def break_order(doc: Document):  # noqa: ANN201
    main = doc.main
    for pos, nid in enumerate(main.node_ids):
        node = doc.node(nid)
        if pos > 0 and any(main.producers.get(i) is not None for i in node.input if i):
            def move(d: Document, tx, nid: int = nid) -> None:  # noqa: ANN001
                sid = d.index.main
                inv = tx.apply(RemoveItem(scope_target(sid), "node", d.scope(sid).position(nid)))
                tx.apply(InsertItem(scope_target(sid), "node", 0, inv.value, inv.ids))
            return FunctionCommand("move to front", move), nid
    return None


#: (name, make breakage, live code, codes the full check may name for it)
BREAKAGES: list[tuple[str, Callable, str, set[str]]] = [
    ("unknown op", break_unknown_op, "unknown-op", {"unknown-op"}),
    ("wrong attribute type", break_attr_type, "attr-type", {"attr-type"}),
    ("missing required attribute", break_attr_missing, "attr-missing", {"attr-missing"}),
    ("duplicate output name", break_duplicate_output, "ssa", {"ssa"}),
    ("undefined input", break_undefined_input, "undefined-value", {"undefined-value"}),
    ("wrong input count", break_input_count, "input-count", {"input-count"}),
    ("out-of-order node", break_order, "graph-order", {"graph-order"}),
]


def _sample() -> list[Path]:
    # the light/ CNNs take 5-11 s each here: the walk's share of them by default, all of them
    # under --corpus=all
    backend = [p for p in corpus_models(real=False) if "/light/" in str(p) and in_walk(p)]
    node_tests = [p for p in corpus_models(real=False) if "/light/" not in str(p)]
    return real_models() + backend + node_tests[::60]


@pytest.mark.parametrize("path", _sample(), ids=lambda p: p.parent.name if p.name == "model.onnx" else p.stem)
def test_breakages_are_reported_live_and_rejected_by_the_checker(path: Path) -> None:
    model = _load(path)
    if not _checker_accepts(model):
        pytest.skip("the checker rejects the unbroken model")
    original = model.SerializeToString()
    applied = 0
    for label, make, code, full_codes in BREAKAGES:
        doc = Document(onnx.ModelProto.FromString(original))
        v = Validator(doc)
        # as in the window: the declared-shape comparison (whole-model inference, warnings only;
        # tests/editor/test_validation_deferred.py) leaves the edit, so 21 passes of it do not
        # make this the suite's slowest test
        v.defer_declared()
        assert [p for p in v.validate_all() if p.severity == "error"] == []
        made = make(doc)
        if made is None:
            continue
        cmd, nid = made
        doc.execute(cmd)
        if nid is None:
            nid = cmd.node_id
        applied += 1
        live = {(p.code, p.node_id) for p in v.problems if p.severity == "error"}
        assert (code, nid) in live, f"{label}: live problems {sorted(live)}"
        assert not _checker_accepts(doc.model), f"{label}: the checker accepts the broken model"
        full = {p.code for p in full_check(doc.model, doc)}
        assert full & full_codes, f"{label}: full check says {sorted(full)}"
        fresh_validator = Validator(doc, live=False)
        fresh_validator.defer_declared()
        fresh = fresh_validator.validate_all()
        assert sorted(map(repr, v.problems)) == sorted(map(repr, fresh)), label
        doc.undo()
        assert [p for p in v.problems if p.severity == "error"] == [], label
        assert doc.serialize() == original
    assert applied >= 4
