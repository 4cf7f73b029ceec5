"""One quantization workflow, the same for the command line and the window: quantize (or
search with ``--auto``), prove, and rank the nodes, keeping what is expensive to make again.

A :class:`QuantizeSession` holds the :class:`~editor.quantize.engine.Quantizer` (the
prepared float model and onnxruntime's calibration cache), the child-process runner and the
float model's outputs on the held-back sets, so the window's one-step re-quantize (more
nodes or op types kept in float) costs a quantizer pass, the candidate's runs and the
sensitivity runs: no calibration, no float runs. :meth:`QuantizeSession.run` gives an
:class:`Outcome`: the model, its proof, the sensitivity ranking and the search's record.

Held-back data: a static quantization is measured on the sets held back from calibration;
dynamic and int4 calibrate on nothing, so every set given measures them
(:meth:`~editor.quantize.calibration.CalibrationData.measuring_only`).
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

import onnx

from editor.quantize.auto import AutoResult, auto_quantize
from editor.quantize.calibration import CalibrationData
from editor.quantize.engine import Progress, QuantizeCancelled, Quantized, Quantizer
from editor.quantize.options import QuantizeOptions
from editor.quantize.proof import Proof, Reference, make_proof
from editor.quantize.sensitivity import Sensitivity, measure_sensitivity

if TYPE_CHECKING:
    from editor.io import ExternalDataStore
    from editor.runtime import Runner

__all__ = ["Outcome", "QuantizeSession"]


@dataclass
class Outcome:
    """What one :meth:`QuantizeSession.run` made and measured."""

    quantized: Quantized
    proof: Proof
    calibration: CalibrationData
    sensitivity: Sensitivity | None = None
    auto: AutoResult | None = None

    @property
    def ok(self) -> bool:
        """The checker passes and ``--auto`` (when asked) reached its tolerance."""
        return self.proof.checker is None and (self.auto is None or self.auto.reached)

    def lines(self, top: int = 10) -> list[str]:
        """The whole report, one line each (what ``onnx-studio quantize`` prints)."""
        out = list(self.calibration.lines())
        out.append(self.quantized.summary())
        out += [f"note: {n}" for n in self.quantized.notes]
        if self.auto is not None:
            out += self.auto.lines()
        if self.sensitivity is not None:
            out += self.sensitivity.lines(top)
        return out + self.proof.lines()

    def to_json(self) -> dict[str, Any]:
        q = self.quantized
        out: dict[str, Any] = {"ok": self.ok, "options": q.options.to_json(), "calibration": self.calibration.to_json(),
                               "result": q.summary(), "quantized_nodes": q.quantized, "kept_in_float": q.excluded,
                               "notes": q.notes, "seconds": q.seconds, "proof": self.proof.to_json()}
        if self.auto is not None:
            out["auto"] = self.auto.to_json()
        if self.sensitivity is not None:
            out["sensitivity"] = self.sensitivity.to_json()
        return out


class QuantizeSession:
    """See the module docstring. Close it (or use ``with``): it owns a temporary folder
    and a child process."""

    def __init__(self, model: onnx.ModelProto, calibration: CalibrationData, *,
                 store: ExternalDataStore | None = None, source: str | None = None,
                 dims: Mapping[str, int] | None = None, progress: Progress | None = None,
                 cancel: Callable[[], bool] | None = None, runner: Runner | None = None) -> None:
        self.model = model
        self.calibration = calibration
        self.dims = dict(dims or {})
        self.source = source
        self.progress: Progress = progress or (lambda _f, _m: None)
        self.cancel: Callable[[], bool] = cancel or (lambda: False)
        self.quantizer = Quantizer(model, calibration, store=store, progress=self._progress, cancel=self._cancelled)
        self._runner = runner
        self._own_runner = runner is None
        self._references: dict[bool, Reference] = {}

    def _progress(self, fraction: float | None, message: str) -> None:
        self.progress(fraction, message)

    def _cancelled(self) -> bool:
        return self.cancel()

    def __enter__(self) -> QuantizeSession:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def close(self) -> None:
        self.quantizer.close()
        for reference in self._references.values():
            reference.abandon()  # early float runs (Reference.start) stop before their next set
        if self._own_runner and self._runner is not None:
            self._runner.close()  # ends a float run under way
            for reference in self._references.values():
                reference.join()
            self._runner.close()  # and a worker one started meanwhile
            self._runner = None

    @property
    def runner(self) -> Runner:
        if self._runner is None:
            from editor.runtime import Runner

            self._runner = Runner()
        return self._runner

    def data_for(self, options: QuantizeOptions) -> CalibrationData:
        """The data ``options`` calibrate on and are measured on (module docstring)."""
        return self.calibration if options.calibrated else self.calibration.measuring_only()

    def reference(self, options: QuantizeOptions) -> Reference:
        key = options.calibrated
        if key not in self._references:
            self._references[key] = Reference(self.model, self.data_for(options).held_back, self.runner,
                                              source=self.source)
        return self._references[key]

    def _check(self) -> None:
        if self.cancel():
            raise QuantizeCancelled("quantization cancelled")

    def run(self, options: QuantizeOptions, *, auto: float | None = None, metric: str = "cosine",
            sensitivity: bool = False, sensitivity_sets: int = 2, methods: Sequence[str] = ("percentile",)) -> Outcome:
        """Quantize with ``options`` (or search, ``auto`` the tolerance on ``metric``, free to
        switch from minmax to the calibration ``methods`` when they do better), prove the result, and rank
        its nodes when ``sensitivity`` (always with ``auto``)."""
        data = self.data_for(options)
        self.quantizer.calibration = data if options.calibrated else None
        reference = self.reference(options)
        reference.start()  # the float runs go on in the worker while this process quantizes
        say = lambda m: self.progress(None, m)  # noqa: E731
        found = sens = None
        if auto is not None:
            found = auto_quantize(self.quantizer, options, reference, auto, metric=metric,
                                  sensitivity_sets=sensitivity_sets, methods=methods if options.method == "minmax" else (),
                                  dims=self.dims or None,
                                  say=self._say_checked)
            result, measured, sens = found.quantized, (found.outputs, found.ran_on), found.sensitivity
        else:
            result, measured = self.quantizer.quantize(options), None
        self._check()
        say("proving the result: checker, onnxruntime, error on held-back inputs")
        proof = make_proof(result, reference, independent=data.independent, dims=self.dims or None, measured=measured)
        self._check()
        if sensitivity and sens is None:
            sens = measure_sensitivity(result, data.held_back[:max(1, sensitivity_sets)], self.runner,
                                       macs=proof.macs.per_node if proof.macs else None, progress=say)
        elif sens is not None and proof.macs is not None:
            for row in sens.rows:
                row.macs = proof.macs.per_node.get(row.node)
        return Outcome(result, proof, data, sens, found)

    def _say_checked(self, message: str) -> None:
        self._check()
        self.progress(None, message)
