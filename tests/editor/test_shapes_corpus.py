"""The shape engine and the cost model over the corpus: nothing raises, and every output
shape the engine states for an ONNX backend test equals the shape of its expected output (the
suite's reference data, computed by the ONNX project). Both walk the corpus's fixed sample by
default and every model under ``--corpus=all`` (tests/conftest.py)."""

from __future__ import annotations

import onnx
import pytest

from editor.cost import model_cost
from editor.shapes import infer_model
from editor.shapes.declare import values_json
from tests.conftest import CORPUS, corpus_models, corpus_walk, in_walk, walk_share


@pytest.mark.slow
def test_every_corpus_model_gets_shapes_and_costs(corpus_dir) -> None:
    failures = []
    for path in corpus_walk():
        try:
            model = onnx.load(str(path))
            table = infer_model(model)
            model_cost(model, table=table)
            values_json(model, table)
        except Exception as exc:  # noqa: BLE001 - collected and reported below
            failures.append(f"{path.relative_to(CORPUS)}: {type(exc).__name__}: {exc}")
    assert not failures, "\n".join(failures[:20])


@pytest.mark.slow
def test_stated_output_shapes_equal_the_backend_suite_expected_outputs(corpus_dir) -> None:
    stated, wrong, walked, total = 0, [], 0, 0
    for folder in sorted((CORPUS / "onnx-backend").glob("*/*/")):
        model_path, data = folder / "model.onnx", folder / "test_data_set_0"
        if not model_path.exists() or not data.exists():
            continue
        total += 1
        if not in_walk(model_path):
            continue
        walked += 1
        model = onnx.load(str(model_path))
        table = infer_model(model)
        for k, out in enumerate(model.graph.output):
            expected = data / f"output_{k}.pb"
            if not out.type.HasField("tensor_type") or not expected.exists():
                continue
            tensor = onnx.TensorProto()
            tensor.ParseFromString(expected.read_bytes())
            vs = table.get(out.name)
            if vs.dims is None or not all(isinstance(d, int) for d in vs.dims):
                continue
            stated += 1
            if list(vs.dims) != list(tensor.dims):
                wrong.append(f"{folder.name}/{out.name}: stated {list(vs.dims)}, expected {list(tensor.dims)}")
    assert not wrong, "\n".join(wrong[:20])
    # and it states nearly all of them (1,900 of the whole walk's outputs)
    floor = walk_share(1900, walked, total)
    assert stated >= floor, f"stated {stated} output shapes of {walked} backend tests, expected >= {floor}"
