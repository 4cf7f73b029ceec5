"""Text generation through a decoder: tokens as they come, time per token, any value at step k.

Two engines give the same greedy tokens (a test holds them to it):

- ``genai``: onnxruntime-genai's own generator (optional, like Ray: ``pip install
  onnxruntime-genai``), on a folder with ``genai_config.json``: the reference users compare
  with;
- ``loop``: a plain loop through our :class:`~editor.runtime.Runner` (the child-process
  worker the Run dock uses), with the ``tokenizers`` library for text. One run per token:
  the prompt in one step over an empty cache (prefill), then one token per step with the
  presents fed back as the past (decode). Because each step is an ordinary run, any
  intermediate value can be captured at a chosen step (``capture`` at ``capture_step``),
  exactly as a Run captures it.

``auto`` takes ``genai`` when it is installed, the folder has its config and nothing is to
be captured; ``loop`` otherwise.
"""

from __future__ import annotations

import threading
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np
import onnx

from editor.decoder.layout import CacheInput, DecoderLayout, find_layout
from editor.decoder.tokenizer import load_tokenizer, special_token_ids
from editor.errors import GenerationError

__all__ = ["GenerateOptions", "Generation", "TokenStep", "generate", "genai_available", "model_files"]

ENGINES = ("auto", "genai", "loop")


@dataclass(frozen=True)
class GenerateOptions:
    max_new_tokens: int = 32
    #: argmax at every step; otherwise sampling with the config's temperature/top-k/top-p
    greedy: bool = True
    engine: str = "auto"
    #: intermediate values to capture, and the step to capture them at (0 = the prefill)
    capture: tuple[str, ...] = ()
    capture_step: int = 0
    seed: int = 0
    #: run the loop engine's steps on this backend ("ort" or "reference")
    backend: str = "ort"


@dataclass(frozen=True)
class TokenStep:
    """One generated token: ``index`` 0 is the prefill (the prompt's step)."""

    index: int
    token: int
    text: str
    seconds: float
    #: tokens the step ran on (the prompt's length at the prefill, then 1)
    tokens_in: int

    @property
    def phase(self) -> str:
        return "prefill" if self.index == 0 else "decode"


@dataclass
class Generation:
    engine: str
    prompt_ids: list[int]
    steps: list[TokenStep] = field(default_factory=list)
    text: str = ""
    #: why it stopped: "eos", "max_new_tokens", "context" or "cancelled"
    stopped: str = ""
    captured: dict[str, np.ndarray] = field(default_factory=dict)

    @property
    def tokens(self) -> list[int]:
        return [s.token for s in self.steps]

    @property
    def prefill_seconds(self) -> float:
        return self.steps[0].seconds if self.steps else 0.0

    @property
    def decode_seconds_per_token(self) -> float | None:
        decode = [s.seconds for s in self.steps[1:]]
        return sum(decode) / len(decode) if decode else None

    def to_json(self) -> dict:
        per = self.decode_seconds_per_token
        return {"engine": self.engine, "prompt_ids": self.prompt_ids, "tokens": self.tokens, "text": self.text,
                "stopped": self.stopped, "prefill_ms": round(self.prefill_seconds * 1e3, 3),
                "decode_ms_per_token": None if per is None else round(per * 1e3, 3),
                "steps": [{"index": s.index, "token": s.token, "text": s.text, "ms": round(s.seconds * 1e3, 3),
                           "phase": s.phase} for s in self.steps],
                "captured": {k: list(v.shape) for k, v in self.captured.items()}}


def genai_available() -> bool:
    try:
        import onnxruntime_genai  # noqa: F401
    except ImportError:
        return False
    return True


def model_files(path: str | Path) -> tuple[Path, Path]:
    """(model file, its folder) of a model file or of a folder holding one."""
    p = Path(path)
    if p.is_dir():
        from editor.decoder.layout import read_genai_config

        name = read_genai_config(p).get("model", {}).get("decoder", {}).get("filename")
        candidates = [p / name] if name else sorted(p.glob("*.onnx"))
        if not candidates or not candidates[0].is_file():
            raise GenerationError(f"no .onnx model in {str(p)!r}")
        return candidates[0], p
    if not p.is_file():
        raise GenerationError(f"cannot read {str(p)!r}: no such file or folder")
    return p, p.parent


OnStep = Callable[[TokenStep], None]


def generate(path: str | Path, prompt: str | None = None, options: GenerateOptions = GenerateOptions(), *,
             prompt_ids: Sequence[int] | None = None, on_step: OnStep | None = None,
             cancel: threading.Event | None = None, runner=None) -> Generation:  # noqa: ANN001
    """Generate up to ``options.max_new_tokens`` tokens after ``prompt`` (or ``prompt_ids``).

    ``on_step`` is called with each token as it comes; ``cancel`` stops between steps;
    ``runner``: the :class:`~editor.runtime.Runner` to run the loop engine's steps on (one
    of its own otherwise)."""
    if options.engine not in ENGINES:
        raise GenerationError(f"engine {options.engine!r}: one of {', '.join(ENGINES)}")
    if options.max_new_tokens < 1:
        raise GenerationError("--max-new-tokens must be at least 1")
    if prompt is None and prompt_ids is None:
        raise GenerationError("give a prompt (text) or prompt ids")
    model_path, folder = model_files(path)
    engine = options.engine
    if engine == "auto":
        usable = genai_available() and (folder / "genai_config.json").is_file() and not options.capture
        engine = "genai" if usable else "loop"
    if engine == "genai":
        if options.capture:
            raise GenerationError("onnxruntime-genai cannot capture intermediate values: use the loop engine")
        return _genai(folder, prompt, prompt_ids, options, on_step, cancel)
    return _loop(model_path, folder, prompt, prompt_ids, options, on_step, cancel, runner)


# ----------------------------------------------------------------------------- onnxruntime-genai


def _genai(folder: Path, prompt: str | None, prompt_ids: Sequence[int] | None, options: GenerateOptions,
           on_step: OnStep | None, cancel: threading.Event | None) -> Generation:
    try:
        import onnxruntime_genai as og
    except ImportError:
        raise GenerationError("the genai engine needs onnxruntime-genai: pip install onnxruntime-genai") from None
    if not (folder / "genai_config.json").is_file():
        raise GenerationError(f"onnxruntime-genai needs genai_config.json in {str(folder)!r}")
    try:
        model = og.Model(str(folder))
        tokenizer = og.Tokenizer(model)
        ids = list(prompt_ids) if prompt_ids is not None else [int(t) for t in tokenizer.encode(prompt)]
        params = og.GeneratorParams(model)
        search = {"max_length": len(ids) + options.max_new_tokens, "do_sample": not options.greedy}
        if options.greedy:
            search["top_k"] = 1
        params.set_search_options(**search)
        generator = og.Generator(model, params)
        stream = tokenizer.create_stream()
        out = Generation("onnxruntime-genai", ids)
        start = time.perf_counter()
        generator.append_tokens(np.asarray(ids, dtype=np.int32))
        while not generator.is_done():
            if cancel is not None and cancel.is_set():
                out.stopped = "cancelled"
                break
            generator.generate_next_token()
            token = int(generator.get_next_tokens()[0])
            now = time.perf_counter()
            step = TokenStep(len(out.steps), token, stream.decode(token), now - start, len(ids) if not out.steps else 1)
            start = now
            out.steps.append(step)
            if on_step is not None:
                on_step(step)
    except GenerationError:
        raise
    except Exception as exc:  # noqa: BLE001 - onnxruntime-genai raises plain RuntimeErrors
        raise GenerationError(f"onnxruntime-genai: {exc}") from None
    out.text = tokenizer.decode(np.asarray(out.tokens, dtype=np.int32)) if out.tokens else ""
    if not out.stopped:
        out.stopped = "max_new_tokens" if len(out.steps) >= options.max_new_tokens else "eos"
    return out


# ----------------------------------------------------------------------------- our own loop


@dataclass
class _Feeds:
    """The inputs of one step, kept between steps (the past is the last step's present)."""

    layout: DecoderLayout
    dtypes: dict[str, np.dtype]
    past: dict[str, np.ndarray]
    total: int = 0

    def step(self, ids: list[int]) -> dict[str, np.ndarray]:
        lay = self.layout
        self.total += len(ids)
        feeds = dict(self.past)
        if lay.input_ids:
            feeds[lay.input_ids] = np.asarray([ids], dtype=self.dtypes[lay.input_ids])
        if lay.attention_mask:
            feeds[lay.attention_mask] = np.ones((1, self.total), dtype=self.dtypes[lay.attention_mask])
        if lay.position_ids:
            start = self.total - len(ids)
            feeds[lay.position_ids] = np.arange(start, self.total, dtype=self.dtypes[lay.position_ids])[None, :]
        return feeds


def _empty_cache(c: CacheInput, dtype: np.dtype) -> np.ndarray:
    batch_axis = 1 if c.kind == "kv" else 0
    shape = []
    for axis, d in enumerate(c.shape):
        if axis == c.seq_axis:
            shape.append(0)
        elif axis == batch_axis and not isinstance(d, int):
            shape.append(1)
        elif axis in c.required:
            shape.append(c.required[axis])
        elif isinstance(d, int):
            shape.append(d)
        else:
            raise GenerationError(f"cannot size the empty cache {c.name!r}: axis {axis} ({d!r}) is named, and neither "
                              "the attention op nor genai_config.json says its size")
    return np.zeros(shape, dtype=dtype)


def _loop(model_path: Path, folder: Path, prompt: str | None, prompt_ids: Sequence[int] | None,
          options: GenerateOptions, on_step: OnStep | None, cancel: threading.Event | None,
          runner=None) -> Generation:  # noqa: ANN001
    from editor.runtime import ModelSource, Runner
    from editor.runtime.inputs import input_specs

    model = onnx.load(str(model_path), load_external_data=False)
    layout = find_layout(model, folder)
    if layout is None or not layout.logits or not layout.input_ids:
        raise GenerationError(f"{model_path.name} is not a decoder: no KV-cache inputs, input ids and logits found")
    missing = [c.name for c in layout.caches if not c.present]
    if missing:
        raise GenerationError(f"no present output carries {missing[0]!r} forward")
    tokenizer = _optional_tokenizer(folder) if prompt_ids is not None else load_tokenizer(folder)
    ids = list(prompt_ids) if prompt_ids is not None else tokenizer.encode(prompt or "")
    if not ids:
        raise GenerationError("the prompt encodes to no tokens")
    _pad, eos = special_token_ids(folder, layout.config)
    context = int(layout.config.get("search", {}).get("max_length") or 0) if layout.config else 0
    dtypes = {s.name: s.dtype for s in input_specs(model)}
    feeds = _Feeds(layout, dtypes, {c.name: _empty_cache(c, dtypes[c.name]) for c in layout.caches})
    wanted = [layout.logits] + [c.present for c in layout.caches if c.present]
    source = ModelSource.from_path(model_path)
    rng = np.random.default_rng(options.seed)
    out = Generation("loop", ids)
    own = runner is None
    runner = runner or Runner()
    try:
        step_ids = ids
        for index in range(options.max_new_tokens):
            if cancel is not None and cancel.is_set():
                out.stopped = "cancelled"
                break
            capture = list(options.capture) if index == options.capture_step else []
            result = runner.run(source, feeds.step(step_ids), outputs=wanted + capture, backend=options.backend)
            # the step's own run in the session: without the first step's session creation
            # and the values' way to and from the worker, like onnxruntime-genai's figure
            seconds = float(result.run_seconds or 0.0)
            if not result.ok:
                raise GenerationError(f"step {index}: {result.error}")
            logits = np.asarray(result.value(layout.logits))[0, -1].astype(np.float64)
            token = int(np.argmax(logits)) if options.greedy else _sample(logits, layout.config, rng)
            for name in capture:
                out.captured[name] = np.array(result.value(name))
            feeds.past = {c.name: np.array(result.value(c.present)) for c in layout.caches}
            before = tokenizer.decode(out.tokens) if tokenizer else ""
            after = tokenizer.decode(out.tokens + [token]) if tokenizer else ""
            step = TokenStep(index, token, after[len(before):], seconds, len(step_ids))
            out.steps.append(step)
            if on_step is not None:
                on_step(step)
            if token in eos:
                out.stopped = "eos"
                break
            if context and feeds.total + 1 >= context:
                out.stopped = "context"
                break
            step_ids = [token]
        else:
            out.stopped = "max_new_tokens"
    finally:
        if own:
            runner.close()
    out.text = tokenizer.decode(out.tokens) if tokenizer else ""
    return out


def _optional_tokenizer(folder: Path):  # noqa: ANN202
    """Token ids given: text is a bonus (none without a tokenizer)."""
    try:
        return load_tokenizer(folder)
    except GenerationError:
        return None


def _sample(logits: np.ndarray, config: dict, rng: np.random.Generator) -> int:
    search = config.get("search", {}) if config else {}
    temperature = float(search.get("temperature", 1.0) or 1.0)
    top_k = int(search.get("top_k", 50) or 0)
    top_p = float(search.get("top_p", 1.0) or 1.0)
    scores = logits / max(temperature, 1e-6)
    order = np.argsort(-scores)
    if top_k > 0:
        order = order[:top_k]
    probs = np.exp(scores[order] - scores[order].max())
    probs /= probs.sum()
    if top_p < 1.0:
        keep = np.searchsorted(np.cumsum(probs), top_p) + 1
        order, probs = order[:keep], probs[:keep] / probs[:keep].sum()
    return int(rng.choice(order, p=probs))
