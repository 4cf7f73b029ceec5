"""Decoders from onnxruntime-genai's builder, measured against issue 32's "done when".

    python tests/benchmarks/bench_llm_decoders.py FP32_FOLDER INT4_FOLDER [--tokens N]

Each folder is what the builder writes (model.onnx, genai_config.json, tokenizer files);
make them in a separate environment (``pip install onnxruntime-genai transformers torch
onnx-ir``) from a tiny random-weight checkpoint saved with ``save_pretrained`` (no download:
``python -m onnxruntime_genai.models.builder -i CHECKPOINT -o FOLDER -p int4 -e cpu``).

Per model: ``check --full`` errors, warnings and notes; values with a full shape and how
many equal a real run's; MatMul MACs against an independent count (K x N per token from the
weights' shapes); ``run --random``; greedy tokens of our loop engine against
onnxruntime-genai's generator, with the time per token of both (same process, same load:
a ratio, not absolute speed). Then fp32 vs int4: the share of A's tensors ``compare`` maps.
"""

from __future__ import annotations

import argparse
import os
import subprocess
import sys
from pathlib import Path

import numpy as np
import onnx

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT))

from editor.cli.check import check_document  # noqa: E402
from editor.cost import model_cost  # noqa: E402
from editor.debug.mapping import map_tensors  # noqa: E402
from editor.decoder import find_layout  # noqa: E402
from editor.decoder.generate import GenerateOptions, generate  # noqa: E402
from editor.document import Document  # noqa: E402
from editor.runtime import ModelSource, Runner  # noqa: E402
from editor.runtime.input_plan import plan_inputs  # noqa: E402
from editor.shapes import evaluate, infer_model  # noqa: E402


def independent_macs(model: onnx.ModelProto, tokens: int) -> int:
    """K x N per token of every MatMul / MatMulNBits, read from the weights' shapes."""
    inits = {t.name: list(t.dims) for t in model.graph.initializer}
    total = 0
    for node in model.graph.node:
        if node.op_type == "MatMulNBits":
            attrs = {a.name: a.i for a in node.attribute}
            total += attrs["K"] * attrs["N"] * tokens
        elif node.op_type == "MatMul" and node.input[1] in inits:
            k, n = inits[node.input[1]][-2:]
            total += k * n * tokens
    return total


def measure(folder: Path, runner: Runner, tokens: int, prompt: str) -> dict:
    path = folder / "model.onnx"
    doc = Document.open(path)
    problems = check_document(doc, full=True)
    counts = {s: sum(1 for p in problems if p.severity == s) for s in ("error", "warning", "info")}
    model = onnx.load(str(path), load_external_data=False)
    layout = find_layout(model, folder)
    plan = plan_inputs(model, dims={layout.sequence_dim: 5, layout.past_dim: 3})
    dims = plan.dims.values()
    table = infer_model(model, dims)
    values = [o for n in model.graph.node for o in n.output if o]
    result = runner.run(ModelSource.from_path(path), plan.feeds, outputs=values, backend="ort", timeout=300)
    full = equal = 0
    for v in values:
        vs = table.get(v)
        stated = None if vs.dims is None else [evaluate(d, dims) for d in vs.dims]
        if stated is None or None in stated:
            continue
        full += 1
        equal += result.ok and list(np.shape(result.value(v))) == stated
    cost = model_cost(model, {**dims, layout.sequence_dim: 7, layout.past_dim: 0, layout.total_dim: 7})
    ours = sum(n.macs for n in cost.nodes if n.op_type in ("MatMul", "MatMulNBits"))
    theirs = independent_macs(model, 7)
    run = subprocess.run([sys.executable, "-m", "editor.cli", "run", str(path), "--random"], capture_output=True,
                         text=True, cwd=ROOT, env={**os.environ, "PYTHONPATH": str(ROOT)})
    genai = generate(folder, prompt, GenerateOptions(max_new_tokens=tokens, engine="genai"))
    loop = generate(folder, prompt, GenerateOptions(max_new_tokens=tokens, engine="loop"), runner=runner)
    return {"model": folder.name, "nodes": len(model.graph.node), "check": counts,
            "full_shapes": f"{full}/{len(values)}", "equal_to_run": f"{equal}/{full}",
            "matmul_macs_ours_vs_independent": f"{ours} / {theirs} ({100 * (ours - theirs) / theirs:+.2f}%)",
            "run_random_exit": run.returncode, "greedy_equal": loop.tokens == genai.tokens,
            "ms_per_token_genai": round(1e3 * (genai.decode_seconds_per_token or 0), 3),
            "ms_per_token_loop": round(1e3 * (loop.decode_seconds_per_token or 0), 3)}


def main() -> int:
    p = argparse.ArgumentParser()
    p.add_argument("fp32", type=Path)
    p.add_argument("int4", type=Path)
    p.add_argument("--tokens", type=int, default=16)
    p.add_argument("--prompt", default="the quick brown fox")
    args = p.parse_args()
    print(f"load average {os.getloadavg()[0]:.2f}")
    with Runner() as runner:
        for folder in (args.fp32, args.int4):
            for k, v in measure(folder, runner, args.tokens, args.prompt).items():
                print(f"  {k:34} {v}")
    a = onnx.load(str(args.fp32 / "model.onnx"), load_external_data=False)
    b = onnx.load(str(args.int4 / "model.onnx"), load_external_data=False)
    tm = map_tensors(a, b)
    print(f"  fp32 -> int4 tensors mapped        {tm.mapped}/{len(tm.pairs)} ({100 * tm.coverage():.1f}%)")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
