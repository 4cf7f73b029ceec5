"""Quantize on held-out fp32 real models: ours (`onnx-studio quantize`, default and `--auto`)
against onnxruntime's plain `quantize_static` defaults on the same calibration data, and the
time of ours against onnxruntime's own call on a 50 MB model with 32 calibration sets.

    python tests/benchmarks/bench_quantize.py [--models DIR] [--only NAME,...] [--sets 32]
                                              [--rows reference,default,auto]
                                              [--timing-only | --no-timing] [--md OUT.md]

Models: the corpus's PP-OCRv4 text detector and PP-OCR direction classifier, and from
`fetch_more.sh` (``--models``, default /tmp/onnx-corpus-extra; missing ones are skipped,
said) the PP-OCRv4 text recognizer, the ddddocr YOLOX detector and all-MiniLM-L6-v2 (its
int8-stored weights folded to fp32 by onnxruntime's pre-processing, so the file is a 90 MB
fp32 encoder). Calibration data is made here, like the data these models read: rendered
pages of Latin and Chinese text for the detector, text lines for the recognizer and the
classifier (half of them upside down), captcha-like characters on noise for YOLOX, and
text-like token sequences for the encoder (BERT's [CLS] ... [SEP] with Zipf-distributed
word ids; no tokenizer vocabulary is at hand offline). 32 calibration sets and 8 held-back
sets per model (40 pictures: ours holds back the last 8 by its own rule; the reference gets
the first 32).

Reference row: onnxruntime's `quantize_static(model, out, reader)` with its defaults (QDQ,
int8 activations and weights, per tensor, MinMax, no pre-processing), on a copy of the model
whose nodes are named (names only: so the MACs can be classified; nothing numeric changes).
Every row is measured the same way (editor.quantize.proof): onnx's full checker, a run in
onnxruntime CPU, the error per output against fp32 on the 8 held-back sets (worst cosine,
worst max abs error relative to the fp32 output's range), size ratio, and the share of the
Conv/MatMul MACs in int8 (the cost model on the float graph).

Timing: a 50 MB BERT-like encoder made here (4 layers, hidden 512, random weights), 32
calibration sets; ours = the whole `onnx-studio quantize` path (pre-processing, calibration,
quantization with per-channel weights, the proof on 8 held-back sets) vs `quantize_static`
alone on the same 32 sets, with its defaults (per-tensor weights) and with
``per_channel=True`` (ours' request); and ours with ``--per-tensor`` beside its defaults (the
same request on both sides). In this process, alternated, the ratios of medians reported
with the load average. Ours' quantize_static call is onnxruntime's per-channel call (about
0.4 s slower here, where the proof's float runs share the 2 cores with it); the rest is
the pre-processing (onnxruntime's optimizer on the 50 MB model: a serialization, a session,
the optimized model read back; about 0.5 s) and the proof's runs of the quantized model
(0.3 s); the float model's runs go on in the run worker while this process calibrates.
onnxruntime's per-channel weights cost it 1.5-1.8x its per-tensor call (a Python loop over
the 18,441 channels), which is why ours' default does not come within 2x of onnxruntime's
per-tensor defaults.
"""

from __future__ import annotations

import argparse
import logging
import os
import statistics
import sys
import tempfile
import time
from pathlib import Path

import numpy as np
import onnx

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT))

from tests.conftest import CORPUS  # noqa: E402

FONTS = ("/usr/share/fonts/truetype/dejavu/DejaVuSans.ttf", "/usr/share/fonts/truetype/dejavu/DejaVuSerif.ttf",
         "/usr/share/fonts/truetype/dejavu/DejaVuSansMono.ttf")
CJK_FONT = "/usr/share/ghostscript/10.00.0/Resource/CIDFSubst/DroidSansFallback.ttf"
IMAGENET = dict(mean="0.485,0.456,0.406", std="0.229,0.224,0.225")
HALF = dict(mean="0.5,0.5,0.5", std="0.5,0.5,0.5")


def _words() -> tuple[list[str], str]:
    """Latin words and CJK characters to render. The words are the Zen of Python's (the
    stdlib's ``this``): a text that does not change, so neither do the pictures (they were
    once the README's words, and every README edit changed the calibration data)."""
    import codecs
    import contextlib
    import io

    with contextlib.redirect_stdout(io.StringIO()):
        import this
    text = codecs.decode(this.s, "rot13")
    latin = sorted({w.strip("*!.,-'") for w in text.split() if w.isascii() and 2 < len(w.strip("*!.,-'")) < 14})
    chars = "的一是不了在人有我他这个们中来上大为和国地到以说时要就出会可也你对生能而子那得于着下自之年过发后作里用道行所然家种事成方多经么去法学如都同现当没动面起看定天分还进好小部其些主样理心她本前开但因只从想实"
    return latin, chars


def _font(size: int, cjk: bool = False, rng: np.random.Generator | None = None):  # noqa: ANN202
    from PIL import ImageFont

    path = CJK_FONT if cjk and Path(CJK_FONT).exists() else FONTS[int(rng.integers(len(FONTS))) if rng is not None else 0]
    return ImageFont.truetype(path, size)


def _phrase(rng: np.random.Generator, latin: list[str], chars: str) -> tuple[str, bool]:
    if rng.random() < 0.4:
        return "".join(rng.choice(list(chars), int(rng.integers(3, 12)))), True
    return " ".join(rng.choice(latin, int(rng.integers(1, 5)))), False


def pages(folder: Path, count: int, size: int, seed: int = 0) -> Path:
    """Document-like pictures: lines of text in several sizes and colours on paper."""
    from PIL import Image, ImageDraw

    rng = np.random.default_rng(seed)
    latin, chars = _words()
    folder.mkdir(parents=True, exist_ok=True)
    for k in range(count):
        paper = tuple(int(v) for v in rng.integers(215, 256, 3))
        img = Image.new("RGB", (size, size), paper)
        draw = ImageDraw.Draw(img)
        y = int(rng.integers(4, 20))
        while y < size - 20:
            text, cjk = _phrase(rng, latin, chars)
            px = int(rng.integers(12, 30))
            ink = tuple(int(v) for v in rng.integers(0, 90, 3))
            draw.text((int(rng.integers(4, size // 3)), y), text, fill=ink, font=_font(px, cjk, rng))
            y += px + int(rng.integers(6, 24))
        img.save(folder / f"page{k:03d}.png")
    return folder


def lines(folder: Path, count: int, height: int, width: int, seed: int = 0, flip: bool = False) -> Path:
    """Single text lines, as a recognizer (or the direction classifier) reads them."""
    from PIL import Image, ImageDraw

    rng = np.random.default_rng(seed)
    latin, chars = _words()
    folder.mkdir(parents=True, exist_ok=True)
    for k in range(count):
        text, cjk = _phrase(rng, latin, chars)
        font = _font(int(height * 0.7), cjk, rng)
        w = int(draw_width(text, font)) + 16
        img = Image.new("RGB", (max(w, 32), height), tuple(int(v) for v in rng.integers(200, 256, 3)))
        ImageDraw.Draw(img).text((8, height * 0.1), text, fill=tuple(int(v) for v in rng.integers(0, 80, 3)), font=font)
        if flip and k % 2:
            img = img.rotate(180)
        img = img.resize((width, height)) if img.width > width else img.crop((0, 0, width, height))
        img.save(folder / f"line{k:03d}.png")
    return folder


def draw_width(text: str, font) -> float:  # noqa: ANN001
    return font.getlength(text)


def captchas(folder: Path, count: int, size: int, seed: int = 0) -> Path:
    """Captcha-like pictures: a few big characters on noise and lines (what ddddocr's YOLOX finds)."""
    from PIL import Image, ImageDraw

    rng = np.random.default_rng(seed)
    latin, chars = _words()
    alphabet = "ABCDEFGHJKLMNPQRSTUVWXYZ23456789" + chars[:40]
    folder.mkdir(parents=True, exist_ok=True)
    for k in range(count):
        noise = rng.integers(120, 256, (size, size, 3)).astype(np.uint8)
        img = Image.fromarray(noise)
        draw = ImageDraw.Draw(img)
        for _ in range(int(rng.integers(3, 8))):
            draw.line([tuple(int(v) for v in rng.integers(0, size, 2)) for _ in range(2)],
                      fill=tuple(int(v) for v in rng.integers(0, 200, 3)), width=int(rng.integers(1, 4)))
        for j in range(int(rng.integers(3, 7))):
            ch = str(rng.choice(list(alphabet)))
            font = _font(int(rng.integers(40, 90)), not ch.isascii(), rng)
            draw.text((int(rng.integers(0, size - 90)), int(rng.integers(0, size - 90))), ch,
                      fill=tuple(int(v) for v in rng.integers(0, 110, 3)), font=font)
        img.save(folder / f"cap{k:03d}.png")
    return folder


def token_sets(folder: Path, count: int, seq: int, seed: int = 0) -> Path:
    """Text-like BERT inputs: [CLS] Zipf-distributed word ids [SEP], padded, with masks."""
    from editor.runtime.inputs import save_inputs

    rng = np.random.default_rng(seed)
    folder.mkdir(parents=True, exist_ok=True)
    ranks = np.arange(1, 27000)
    p = 1.0 / ranks
    p /= p.sum()
    for k in range(count):
        n = int(rng.integers(12, seq - 2))
        ids = np.zeros((1, seq), np.int64)
        ids[0, 0], ids[0, n + 1] = 101, 102
        ids[0, 1:n + 1] = 1996 + rng.choice(len(ranks), n, p=p)
        mask = (np.arange(seq) <= n + 1).astype(np.int64)[None]
        save_inputs(folder / f"set{k:03d}.npz", {"input_ids": ids, "attention_mask": mask,
                                                  "token_type_ids": np.zeros((1, seq), np.int64)})
    return folder


# -- the rows ----------------------------------------------------------------------------------


def _reference_row(model_path: Path, data, work: Path, runner) -> dict:  # noqa: ANN001
    """onnxruntime's quantize_static with its defaults on ``data.sets``."""
    from onnxruntime.quantization import CalibrationDataReader, quantize_static

    from editor.quantize.classify import mac_share, quantized_nodes
    from editor.quantize.prepare import name_nodes
    from editor.quantize.proof import Reference, checker_refusal
    from editor.runtime.inputs import cast_to_declared

    model = onnx.load(str(model_path))
    name_nodes(model)
    named = work / "named.onnx"
    onnx.save(model, str(named))
    sets = [cast_to_declared(model, s)[0] for s in data.sets]

    class Reader(CalibrationDataReader):
        def __init__(self) -> None:
            self.it = iter(sets)

        def get_next(self):  # noqa: ANN202
            return next(self.it, None)

    out = work / "ort_default.onnx"
    t0 = time.perf_counter()
    try:
        quantize_static(str(named), str(out), Reader())
    except Exception as exc:  # noqa: BLE001 - a refusal is a row
        return {"variant": "onnxruntime quantize_static defaults", "error": f"refused: {str(exc).splitlines()[0]}"}
    seconds = time.perf_counter() - t0
    q = onnx.load(str(out))
    ref = Reference(onnx.load(str(model_path)), data.held_back, runner)
    row = {"variant": "onnxruntime quantize_static defaults", "checker": checker_refusal(q) or "pass",
           "seconds": seconds, "size_ratio": os.path.getsize(out) / os.path.getsize(model_path)}
    try:
        outs, _ = ref.measure(q)
    except Exception as exc:  # noqa: BLE001
        row["error"] = f"does not run: {str(exc).splitlines()[0]}"
        return row
    row.update(_errors(outs))
    share = mac_share(model, quantized_nodes(model, q), data.plan.dims.values() if data.plan else None)
    row["int8_macs"] = share.share("int8")
    row["kept"] = 0
    return row


def _errors(outs) -> dict:  # noqa: ANN001
    return {"cosine": min((o.cosine for o in outs if o.cosine is not None), default=None),
            "rel_range": max(o.rel_range for o in outs), "nonfinite": any(o.nonfinite for o in outs)}


def _ours_row(model_path: Path, args_extra: list[str], label: str, work: Path, calibration: Path) -> dict:
    import contextlib
    import io
    import json

    from editor.cli import main as cli_main

    out = work / f"ours_{label.replace(' ', '_')}.onnx"
    buf = io.StringIO()
    t0 = time.perf_counter()
    with contextlib.redirect_stdout(buf):
        code = cli_main(["quantize", str(model_path), "-o", str(out), "--calibration", str(calibration), "--json",
                         *args_extra])
    seconds = time.perf_counter() - t0
    try:
        report = json.loads(buf.getvalue())
    except ValueError:
        return {"variant": label, "error": f"exit {code}"}
    proof = report["proof"]
    outs = proof["outputs"]
    return {"variant": label, "checker": proof["checker"], "seconds": seconds,
            "size_ratio": os.path.getsize(out) / os.path.getsize(model_path),
            "cosine": min((o["cosine"] for o in outs if o["cosine"] is not None), default=None),
            "rel_range": max((o["rel_range"] if o["rel_range"] is not None else float("inf")) for o in outs),
            "nonfinite": any(o["nonfinite"] for o in outs),
            "int8_macs": (proof["macs"] or {}).get("conv_matmul_int8_share"),
            "kept": len(report.get("auto", {}).get("kept_in_float", [])) if "auto" in report else
            len(report["kept_in_float"]), "reached": report.get("auto", {}).get("reached"),
            "probes": len(report.get("auto", {}).get("probes", [])), "exit": code,
            "widened": len(report.get("auto", {}).get("sixteen_bit_nodes", [])),
            "wide_tensors": report.get("auto", {}).get("sixteen_bit_tensors", 0),
            "method": report.get("auto", {}).get("calibration_method", report["options"]["method"])}


def models(extra: Path, sets: int, work: Path) -> list[tuple[str, Path, list[str], Path]]:
    """(name, fp32 model, extra CLI arguments, calibration folder) per model found."""
    n = sets + sets // 4  # 32 calibration + 8 held back
    found = []
    det = CORPUS / "real" / "ppocrv4_det.onnx"
    found.append(("PP-OCRv4 text detector", det, ["--dim", "p2o.DynamicDimension.0=1", "--image-size", "320x320",
                                                  "--mean", IMAGENET["mean"], "--std", IMAGENET["std"]],
                  pages(work / "pages", n, 320)))
    cls = CORPUS / "real" / "ppocr_mobile_v2_cls.onnx"
    found.append(("PP-OCR direction classifier", cls, ["--mean", HALF["mean"], "--std", HALF["std"], "--image-size",
                                                       "48x192"], lines(work / "cls_lines", n, 48, 192, flip=True)))
    rec = extra / "ppocrv4_rec.onnx"
    if rec.exists():
        found.append(("PP-OCRv4 text recognizer", rec, ["--image-size", "48x320", "--mean", HALF["mean"],
                                                        "--std", HALF["std"]], lines(work / "rec_lines", n, 48, 320)))
    yolox = extra / "ddddocr_det_yolox.onnx"
    if yolox.exists():
        found.append(("ddddocr YOLOX detector", yolox, ["--scale", "1", "--mean", "0", "--std", "1"],
                      captchas(work / "captchas", n, 416)))
    minilm = extra / "minilm_l6_v2_int8w.onnx"
    if minilm.exists():
        from onnxruntime.quantization.shape_inference import quant_pre_process

        fp32 = work / "minilm_l6_v2_fp32.onnx"
        quant_pre_process(str(minilm), str(fp32), skip_symbolic_shape=True)  # int8-stored weights -> fp32
        found.append(("all-MiniLM-L6-v2 encoder", fp32, ["--dim", "batch=1", "--dim", "sequence=128"],
                      token_sets(work / "tokens", n, 128)))
    return found


def accuracy(extra: Path, sets: int, only: list[str], work: Path,
             rows_wanted: tuple[str, ...] = ("reference", "default", "auto")) -> list[tuple[str, Path, list[dict]]]:
    from editor.quantize.sources import load_calibration
    from editor.runtime import Runner

    table = []
    for name, path, extra_args, data_dir in models(extra, sets, work):
        if only and not any(o.lower() in name.lower() for o in only):
            continue
        print(f"== {name}: {path.name} ({os.path.getsize(path) / 1e6:.1f} MB)", flush=True)
        model = onnx.load(str(path))
        dims = {a.split("=")[0]: int(a.split("=")[1]) for flag, a in zip(extra_args, extra_args[1:]) if flag == "--dim"}
        data = load_calibration(model, path=data_dir, dims=dims, image=_image_params(extra_args))
        rows = []
        sub = work / path.stem
        sub.mkdir(exist_ok=True)
        if "reference" in rows_wanted:
            with Runner() as runner:
                rows.append(_reference_row(path, data, sub, runner))
            print("  ", _fmt(rows[-1]), flush=True)
        for key, label, more in (("default", "ours (default)", []), ("qoperator", "ours --format qoperator",
                                                                     ["--format", "qoperator"]),
                                 ("auto", "ours --auto 0.01", ["--auto", "0.01"])):
            if key not in rows_wanted:
                continue
            rows.append(_ours_row(path, [*extra_args, *more], label, sub, data_dir))
            print("  ", _fmt(rows[-1]), flush=True)
        table.append((name, path, rows))
    return table


def _image_params(args: list[str]):  # noqa: ANN202
    from editor.quantize.images import ImageParams

    def val(flag: str) -> str | None:
        return args[args.index(flag) + 1] if flag in args else None

    def floats(flag: str) -> tuple[float, ...] | None:
        v = val(flag)
        return tuple(float(x) for x in v.split(",")) if v is not None else None

    size = val("--image-size")
    return ImageParams(size=tuple(int(x) for x in size.split("x")) if size else None,  # type: ignore[arg-type]
                       scale=float(val("--scale")) if val("--scale") else None, mean=floats("--mean"),
                       std=floats("--std"))


def _fmt(row: dict) -> str:
    if "error" in row and "cosine" not in row:
        return f"{row['variant']}: {row['error']}"

    def pct(x: float | None) -> str:
        return "-" if x is None else f"{100 * x:.0f}%"

    cos = "-" if row.get("cosine") is None else f"{row['cosine']:.5f}"
    nf = " NaN/Inf!" if row.get("nonfinite") else ""
    return (f"{row['variant']}: checker {row.get('checker')}, cosine {cos}, rel-range {row.get('rel_range', 0):.3g}{nf}, "
            f"size {row.get('size_ratio', 0):.2f}x, int8 MACs {pct(row.get('int8_macs'))}, kept {row.get('kept')}, "
            f"{row.get('seconds', 0):.0f} s" + (f", {row['method']} calibration" if row.get("method") else "")
            + (f", {row['wide_tensors']} tensors at 16 bits ({row['widened']} Conv/MatMul widened)"
               if row.get("wide_tensors") else ""))


def markdown(table) -> str:  # noqa: ANN001
    out = ["| model | fp32 MB | variant | checker | worst cosine | worst error / range | size | Conv/MatMul MACs in int8 "
           "| nodes in float | Conv/MatMul at 16 bits | s |",
           "|---|---|---|---|---|---|---|---|---|---|---|"]
    for name, path, rows in table:
        for k, r in enumerate(rows):
            if "cosine" not in r:
                out.append(f"| {name if k == 0 else ''} | {os.path.getsize(path) / 1e6:.1f} | {r['variant']} | "
                           f"{r.get('error', '-')} | | | | | | | |")
                continue
            cos = "-" if r["cosine"] is None else f"{r['cosine']:.4f}"
            macs = "-" if r.get("int8_macs") is None else f"{100 * r['int8_macs']:.0f}%"
            out.append(f"| {name if k == 0 else ''} | {os.path.getsize(path) / 1e6:.1f} | {r['variant']} | "
                       f"{r['checker']} | {cos} | {r['rel_range']:.3g}{' (NaN/Inf)' if r['nonfinite'] else ''} | "
                       f"{r['size_ratio']:.2f}x | {macs} | {r['kept']} | {r.get('widened', 0)} | {r['seconds']:.0f} |")
    return "\n".join(out)


# -- timing ------------------------------------------------------------------------------------


def encoder(path: Path, layers: int = 4, hidden: int = 512, inner: int = 2048, seq: int = 128, seed: int = 0) -> Path:
    """A BERT-like encoder with random weights (about 12.6 MB per layer at these sizes)."""
    from onnx import TensorProto, helper, numpy_helper

    rng = np.random.default_rng(seed)
    inits, nodes = [], []

    def w(name: str, *shape: int) -> str:
        inits.append(numpy_helper.from_array((rng.standard_normal(shape) / np.sqrt(shape[0])).astype(np.float32), name))
        return name

    def node(op: str, ins: list[str], out: str, **attrs) -> str:
        nodes.append(helper.make_node(op, ins, [out], name=out, **attrs))
        return out

    heads, x = 8, "x"
    inits.append(numpy_helper.from_array(np.array([1, seq, heads, hidden // heads], np.int64), "heads_shape"))
    inits.append(numpy_helper.from_array(np.array([1, seq, hidden], np.int64), "flat_shape"))
    inits.append(numpy_helper.from_array(np.array(1 / np.sqrt(hidden // heads), np.float32), "scale"))
    for i in range(layers):
        p = f"l{i}_"
        q, k, v = (node("MatMul", [x, w(p + n, hidden, hidden)], p + n + "_out") for n in ("q", "k", "v"))
        qh, kh, vh = (node("Transpose", [node("Reshape", [t, "heads_shape"], t + "_r")], t + "_t", perm=[0, 2, 1, 3])
                      for t in (q, k, v))
        kt = node("Transpose", [kh], p + "kT", perm=[0, 1, 3, 2])
        att = node("Softmax", [node("Mul", [node("MatMul", [qh, kt], p + "qk"), "scale"], p + "qk_s")], p + "att", axis=-1)
        ctx = node("Reshape", [node("Transpose", [node("MatMul", [att, vh], p + "ctx")], p + "ctx_t", perm=[0, 2, 1, 3]),
                               "flat_shape"], p + "ctx_r")
        o = node("Add", [node("MatMul", [ctx, w(p + "o", hidden, hidden)], p + "o_out"), x], p + "res1")
        inits += [numpy_helper.from_array(np.ones(hidden, np.float32), p + "g1"),
                  numpy_helper.from_array(np.zeros(hidden, np.float32), p + "b1")]
        n1 = node("LayerNormalization", [o, p + "g1", p + "b1"], p + "ln1", axis=-1)
        h = node("Relu", [node("MatMul", [n1, w(p + "up", hidden, inner)], p + "up_out")], p + "act")
        o2 = node("Add", [node("MatMul", [h, w(p + "down", inner, hidden)], p + "down_out"), n1], p + "res2")
        inits += [numpy_helper.from_array(np.ones(hidden, np.float32), p + "g2"),
                  numpy_helper.from_array(np.zeros(hidden, np.float32), p + "b2")]
        x = node("LayerNormalization", [o2, p + "g2", p + "b2"], p + "ln2", axis=-1)
    nodes.append(helper.make_node("Identity", [x], ["y"], name="out"))
    graph = helper.make_graph(nodes, "encoder", [helper.make_tensor_value_info("x", TensorProto.FLOAT, [1, seq, hidden])],
                              [helper.make_tensor_value_info("y", TensorProto.FLOAT, [1, seq, hidden])], inits)
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)])
    model.ir_version = 8
    onnx.save(model, str(path))
    return path


def timing(work: Path, sets: int, repeats: int) -> dict:
    """Ours (the whole path, per-channel weights: our default) against onnxruntime's
    ``quantize_static`` with its defaults (per-tensor weights) and with ``per_channel=True``
    (the same request as ours), alternated in this process; medians and ratios."""
    from onnxruntime.quantization import CalibrationDataReader, quantize_static

    from editor.quantize import QuantizeOptions
    from editor.quantize.calibration import feeds_calibration
    from editor.quantize.session import QuantizeSession

    path = encoder(work / "encoder50.onnx")
    mb = os.path.getsize(path) / 1e6
    model = onnx.load(str(path))
    rng = np.random.default_rng(0)
    held = sets // 4
    all_sets = [{"x": rng.standard_normal((1, 128, 512)).astype(np.float32)} for _ in range(sets + held)]
    times: dict[str, list[float]] = {"ort": [], "ort_per_channel": [], "ours": [], "ours_per_tensor": []}

    class Reader(CalibrationDataReader):
        def __init__(self) -> None:
            self.it = iter(all_sets[:sets])

        def get_next(self):  # noqa: ANN202
            return next(self.it, None)

    for r in range(repeats):
        for key, kwargs in (("ort", {}), ("ort_per_channel", {"per_channel": True})):
            t0 = time.perf_counter()
            quantize_static(str(path), str(work / "ort.onnx"), Reader(), **kwargs)
            times[key].append(time.perf_counter() - t0)
        for key, options in (("ours", QuantizeOptions()), ("ours_per_tensor", QuantizeOptions(per_channel=False))):
            t0 = time.perf_counter()
            data = feeds_calibration(model, all_sets, "timing sets", held_back=held)
            with QuantizeSession(model, data, source=str(path)) as session:
                outcome = session.run(options)
            onnx.save(outcome.quantized.model, str(work / "ours.onnx"))
            times[key].append(time.perf_counter() - t0)
            if key == "ours":
                phases = {k: round(v, 1) for k, v in outcome.quantized.seconds.items()}
        print(f"  timing round {r + 1}: onnxruntime quantize_static {times['ort'][-1]:.1f} s, with per_channel=True "
              f"{times['ort_per_channel'][-1]:.1f} s, ours {times['ours'][-1]:.1f} s ({phases}), ours --per-tensor "
              f"{times['ours_per_tensor'][-1]:.1f} s", flush=True)
    med = {k: statistics.median(v) for k, v in times.items()}
    return {"model_mb": mb, "sets": sets, "held_back": held, "times": times, "median": med,
            "ratio": med["ours"] / med["ort"], "ratio_same": med["ours"] / med["ort_per_channel"],
            "ratio_per_tensor": med["ours_per_tensor"] / med["ort"], "load": os.getloadavg()}


def main() -> int:
    logging.disable(logging.WARNING)
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--models", type=Path, default=Path("/tmp/onnx-corpus-extra"))
    p.add_argument("--only", default="")
    p.add_argument("--sets", type=int, default=32)
    p.add_argument("--repeats", type=int, default=3)
    p.add_argument("--rows", default="reference,default,auto",
                   help="which rows: reference, default, qoperator, auto")
    p.add_argument("--timing-only", action="store_true")
    p.add_argument("--no-timing", action="store_true")
    p.add_argument("--md", type=Path)
    args = p.parse_args()
    print(f"load average at start: {os.getloadavg()}", flush=True)
    with tempfile.TemporaryDirectory(prefix="bench-quantize-") as tmp:
        work = Path(tmp)
        table = [] if args.timing_only else accuracy(args.models, args.sets, [o for o in args.only.split(",") if o], work,
                                                      tuple(r for r in args.rows.split(",") if r))
        md = markdown(table) if table else ""
        if table:
            print(md)
        if not args.no_timing:
            t = timing(work, args.sets, args.repeats)
            m = t["median"]
            line = (f"timing: {t['model_mb']:.0f} MB encoder, {t['sets']} calibration sets: ours (the whole quantize "
                    f"path, per-channel weights, proof on {t['held_back']} held-back sets) median {m['ours']:.1f} s; "
                    f"onnxruntime quantize_static median {m['ort']:.1f} s with its defaults (ratio {t['ratio']:.2f}), "
                    f"{m['ort_per_channel']:.1f} s with per_channel=True (ratio {t['ratio_same']:.2f}); "
                    f"ours --per-tensor median {m['ours_per_tensor']:.1f} s "
                    f"(ratio {t['ratio_per_tensor']:.2f} to the defaults) "
                    f"(load average {t['load'][0]:.1f})")
            print(line)
            md += "\n\n" + line
        if args.md:
            args.md.write_text(md + "\n")
    print(f"load average at end: {os.getloadavg()}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
