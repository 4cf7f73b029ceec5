"""What the one-commit-point save costs: an in-place rewrite of a model's own data file
(fresh name, commit, then a copy onto the final name) against the same save into a folder
where the data file name is free (a rename places it). Ratio in the same process.

    python tests/benchmarks/bench_save_commit.py [--mb 200]
"""

from __future__ import annotations

import argparse
import shutil
import tempfile
import time
from pathlib import Path

import numpy as np
from onnx import helper, numpy_helper

from editor.document import Document
from editor.io import SaveOptions


def model(mb: int):
    rng = np.random.default_rng(0)
    n = mb * (1 << 20) // 4 // 4
    inits = [numpy_helper.from_array(rng.standard_normal(n).astype(np.float32), f"w{i}") for i in range(4)]
    nodes = [helper.make_node("Identity", [f"w{i}"], [f"y{i}"]) for i in range(4)]
    outs = [helper.make_tensor_value_info(f"y{i}", 1, [n]) for i in range(4)]
    return helper.make_model(helper.make_graph(nodes, "g", [], outs, initializer=inits),
                             opset_imports=[helper.make_opsetid("", 17)])


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--mb", type=int, default=200)
    ap.add_argument("--repeat", type=int, default=3)
    args = ap.parse_args()
    root = Path(tempfile.mkdtemp(prefix="bench-save-"))
    try:
        src = root / "src"
        src.mkdir()
        Document(model(args.mb)).save(src / "m.onnx", options=SaveOptions(external="single-file", size_threshold=1024))
        first = SaveOptions(external="single-file", size_threshold=1024)
        other = SaveOptions(external="single-file", size_threshold=4096)
        fresh, in_place = [], []
        for r in range(args.repeat):
            doc = Document.open(src / "m.onnx")
            out = root / f"fresh{r}"
            out.mkdir()
            t = time.perf_counter()
            doc.save(out / "m.onnx", options=first)
            fresh.append(time.perf_counter() - t)
            doc.store.close()
            work = root / f"inplace{r}"
            shutil.copytree(src, work)
            doc = Document.open(work / "m.onnx")
            t = time.perf_counter()
            doc.save(options=other if r % 2 == 0 else first)
            in_place.append(time.perf_counter() - t)
            doc.store.close()
        f, i = min(fresh), min(in_place)
        print(f"{args.mb} MB of weights: save to a free data name {f:.2f} s; in-place rewrite of its own "
              f"data file {i:.2f} s; ratio {i / f:.2f}x (best of {args.repeat})")
    finally:
        shutil.rmtree(root, ignore_errors=True)


if __name__ == "__main__":
    main()
