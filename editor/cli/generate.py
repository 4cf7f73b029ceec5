"""``onnx-studio generate MODEL_OR_FOLDER --prompt TEXT [--max-new-tokens N] [--greedy]``.

Generates text with a decoder (:mod:`editor.decoder.generate`): the tokens are printed as
they come, then the time of the prefill and per decode step. ``--engine genai`` uses
onnxruntime-genai's generator (optional: ``pip install onnxruntime-genai``), ``--engine loop``
our loop through the runner (``pip install tokenizers`` for the text); ``auto`` prefers
onnxruntime-genai. ``--capture NAME --at-step K`` keeps intermediate values of step K
(0 = the prefill; the loop engine) and ``--save DIR`` writes them as ``.npy``.

Exit codes: 0 generated, 2 cannot run (not a decoder, no tokenizer, a failed step).
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

import numpy as np

from editor.decoder.generate import ENGINES, GenerateOptions, TokenStep, generate
from editor.errors import GenerationError


def add_parser(subparsers: argparse._SubParsersAction) -> argparse.ArgumentParser:
    p = subparsers.add_parser(
        "generate",
        help="generate text with a decoder LLM (tokens as they come, time per token)",
        description="Generate text with the decoder in MODEL_OR_FOLDER (a .onnx file or the folder "
        "onnxruntime-genai's builder wrote: model, genai_config.json, tokenizer files).",
    )
    p.add_argument("model", metavar="MODEL_OR_FOLDER")
    p.add_argument("--prompt", required=True, help="the text to continue")
    p.add_argument("--max-new-tokens", type=int, default=32, metavar="N")
    p.add_argument("--greedy", action="store_true",
                   help="always take the most likely token (default: sample as genai_config.json says)")
    p.add_argument("--engine", choices=ENGINES, default="auto",
                   help="genai: onnxruntime-genai's generator; loop: ours, through the runner (default: auto)")
    p.add_argument("--capture", action="append", default=[], metavar="NAME",
                   help="an intermediate value to capture (repeatable; the loop engine)")
    p.add_argument("--at-step", type=int, default=0, metavar="K", help="the step to capture at (0 = prefill)")
    p.add_argument("--save", metavar="DIR", help="write the captured values there as NAME.npy")
    p.add_argument("--seed", type=int, default=0, help="seed of the sampling")
    p.add_argument("--json", action="store_true", help="print the whole generation as JSON at the end")
    return p


def run(args: argparse.Namespace) -> int:
    options = GenerateOptions(max_new_tokens=args.max_new_tokens, greedy=args.greedy, engine=args.engine,
                              capture=tuple(args.capture), capture_step=args.at_step, seed=args.seed)
    if args.capture and args.engine == "genai":
        raise GenerationError("--capture needs the loop engine (onnxruntime-genai cannot capture intermediates)")

    def show(step: TokenStep) -> None:
        if not args.json:
            sys.stdout.write(step.text)
            sys.stdout.flush()

    if not args.json:
        sys.stdout.write(args.prompt)
    result = generate(args.model, args.prompt, options, on_step=show)
    if args.save and result.captured:
        folder = Path(args.save)
        folder.mkdir(parents=True, exist_ok=True)
        for name, value in result.captured.items():
            np.save(folder / (name.replace("/", "_").strip("_") + ".npy"), value)
    if args.json:
        from editor.cli import emit_json

        emit_json(result.to_json())
        return 0
    sys.stdout.write("\n")
    per = result.decode_seconds_per_token
    decode = f"{len(result.steps) - 1} tokens, {per * 1e3:.2f} ms/token ({1 / per:.0f} tokens/s)" if per else "none"
    print(f"[{result.engine}] prompt {len(result.prompt_ids)} tokens; prefill {result.prefill_seconds * 1e3:.2f} ms; "
          f"decode {decode}; stopped: {result.stopped}", file=sys.stderr)
    for name, value in result.captured.items():
        print(f"captured at step {options.capture_step}: {name} {value.dtype} {list(value.shape)}", file=sys.stderr)
    return 0
