"""Reduce with a pool of runners (the remote fan-out) takes the sequential bisection's path
exactly: the same cuts decide, so the same nodes come out, even for a failure that is not
monotone in the cut (where a k-ary search would part ways). Runs without Ray: the
speculation does not care where the runners are."""

from __future__ import annotations

from collections.abc import Iterator, Mapping
from typing import Any

import onnx
import pytest

from editor.debug import FailureCheck, reduce_model
from editor.runtime import Runner
from tests.editor.test_debug import DIMS, VAD


class _Quirky(FailureCheck):
    """Fails when the cut holds the LSTM and its node count is not 2 mod 3: an arbitrary,
    non-monotone rule, decided without running (the runner is not used)."""

    values_backend = "ort"

    def __init__(self) -> None:
        super().__init__()
        self.asked: list[frozenset[str]] = []

    def fails(self, runner: Any, model: onnx.ModelProto, feeds: Mapping[str, Any]) -> bool:
        names = frozenset(n.name or n.op_type for n in model.graph.node)
        self.asked.append(names)
        return any(n.op_type == "LSTM" for n in model.graph.node) and len(model.graph.node) % 3 != 2

    def describe(self) -> str:
        return "quirky"


@pytest.fixture(scope="module")
def runner() -> Iterator[Runner]:
    with Runner() as r:
        yield r


def test_speculative_bisection_takes_the_sequential_path(runner: Runner) -> None:
    model = onnx.load(VAD)
    seq_check, par_check = _Quirky(), _Quirky()
    seq = reduce_model(model, seq_check, dims=DIMS, runner=runner, use_hints=False)
    par = reduce_model(model, par_check, dims=DIMS, pool=[runner] * 4, use_hints=False)
    assert par.nodes == seq.nodes and par.log == seq.log
    assert par.model.SerializeToString() == seq.model.SerializeToString()
    # every cut the sequential run asked about was asked in the fanned-out run too, in fewer rounds
    assert set(seq_check.asked) <= set(par_check.asked)
    assert par.rounds < seq.rounds
