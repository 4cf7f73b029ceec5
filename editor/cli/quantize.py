"""``onnx-studio quantize``: int8 / int4 with onnxruntime's own tools, proven on the spot.

    onnx-studio quantize IN.onnx -o OUT.onnx [--mode static|dynamic|int4] [--format qdq|qoperator]
        [--calibration DIR|FILE.npz] [--random N] [--method minmax|entropy|percentile]
        [--exclude-nodes A,B] [--exclude-ops Op,...] [--auto TOL [--metric cosine|range|abs]]
        [--sensitivity [TOP]] [--json]

Calibration data: ``--calibration`` takes a folder of ``.npz`` input sets (``run --save``
folders too), one ``.npz``, or a folder of pictures (``--mean``/``--std``/``--scale``/
``--image-size`` say how to normalise them, else the model's metadata does); without it,
``--random N`` role-aware random sets are used and the output says loudly that this is a
smoke test. The result is checked (onnx's full checker), run in onnxruntime on the CPU, and
its error per output against the float model on held-back inputs is printed (max abs,
relative to the output's range, cosine), with the size ratio and the predicted share of
Conv/MatMul MACs now in int8. ``--auto TOL`` keeps the fewest most-sensitive nodes in float
that bring every output within TOL (the ``--metric`` error; default: 1 - cosine).

Exit codes: 0 written and proven; 1 written but refused by the checker, or ``--auto`` could
not reach TOL, or refused (bad options or data, a model that does not run: nothing written);
2 IN unreadable or OUT not writable.
"""

from __future__ import annotations

import argparse
import sys
from typing import Any

from editor.errors import CommandError

__all__ = ["add_parser", "calibration_from_args", "run"]


def add_parser(subparsers: Any) -> argparse.ArgumentParser:
    from editor.quantize.options import ACTIVATION_TYPES, FORMATS, METHODS, MODES, WEIGHT_TYPES
    from editor.quantize.proof import METRICS

    p = subparsers.add_parser("quantize", help="int8 / int4 quantization with calibration, proven against fp32",
                              description=__doc__.split("\n\n")[0])
    p.add_argument("model", metavar="IN", help="the float model")
    p.add_argument("-o", "--output", required=True, metavar="OUT", help="where to write the quantized model")
    g = p.add_argument_group("what to do")
    g.add_argument("--mode", choices=MODES, default="static",
                   help="static (calibrated activations), dynamic (activations at run time), int4 (weight-only MatMulNBits)")
    g.add_argument("--format", choices=FORMATS, default="qdq", help="static: QDQ (default) or QOperator (QLinearConv ...)")
    g.add_argument("--per-tensor", action="store_true", help="one scale per weight tensor (default: per channel)")
    g.add_argument("--activation-type", choices=list(ACTIVATION_TYPES), default="uint8")
    g.add_argument("--weight-type", choices=list(WEIGHT_TYPES), default="int8")
    g.add_argument("--method", choices=METHODS, help="calibration method (default minmax; --auto may switch to "
                   "percentile when it brings the outputs closer, unless a method is given)")
    g.add_argument("--percentile", type=float, default=99.999, help="with --method percentile")
    g.add_argument("--reduce-range", action="store_true", help="7-bit weights (CPUs without VNNI)")
    g.add_argument("--block-size", type=int, default=32, help="int4: weights per block (power of two >= 16)")
    g.add_argument("--symmetric", action="store_true", help="int4: symmetric blocks (no zero point)")
    g.add_argument("--exclude-nodes", default="", metavar="NAME,...", help="nodes that stay in float")
    g.add_argument("--exclude-ops", default="", metavar="OP,...", help="op types that stay in float")
    g.add_argument("--quantizer-names", action="store_true",
                   help="QDQ: keep onnxruntime's long names for the Q/DQ nodes and tensors it adds (default: short "
                        "names, equal scales shared; the model's own names stay either way)")
    g.add_argument("--no-preprocess", action="store_true",
                   help="skip onnxruntime's quant_pre_process (shape inference, constant and BatchNorm folding)")
    c = p.add_argument_group("calibration data")
    c.add_argument("--calibration", metavar="PATH",
                   help="a folder of .npz input sets (or of run --save folders), one .npz, or a folder of pictures")
    c.add_argument("--random", type=int, metavar="N", help="N random calibration sets (default 8 without --calibration)")
    c.add_argument("--held-back", type=int, metavar="N",
                   help="input sets held back to measure the error (default: a fifth of 5+ sets; 4 random ones)")
    c.add_argument("--limit", type=int, metavar="N", help="use at most N sets of --calibration")
    c.add_argument("--seed", type=int, default=0, help="seed of random sets")
    c.add_argument("--dim", action="append", default=[], metavar="NAME=VALUE", help="a symbolic input dim (repeatable)")
    i = p.add_argument_group("pictures (with --calibration FOLDER of images)")
    i.add_argument("--image-input", metavar="NAME", help="the input pictures feed (default: the 4-D float input)")
    i.add_argument("--image-size", metavar="HxW", help="resize to this (default: the input's size)")
    i.add_argument("--mean", metavar="A,B,C", help="per-channel mean subtracted after scaling")
    i.add_argument("--std", metavar="A,B,C", help="per-channel std divided by")
    i.add_argument("--scale", type=float, help="pixel (0..255) multiplier (default 1/255)")
    i.add_argument("--bgr", action="store_true", help="channels in BGR order")
    i.add_argument("--layout", choices=("NCHW", "NHWC"), help="default: from the input's shape")
    a = p.add_argument_group("search and report")
    a.add_argument("--auto", type=float, metavar="TOL",
                   help="keep in float the fewest most-sensitive nodes that bring every output within TOL")
    a.add_argument("--metric", choices=METRICS, default="cosine",
                   help="what --auto bounds: 1 - cosine (default), max abs error relative to the output's range, abs")
    a.add_argument("--sensitivity", nargs="?", const=10, type=int, metavar="TOP",
                   help="rank the quantized nodes by the error each adds (the TOP first; all in --json)")
    a.add_argument("--json", action="store_true", help="one JSON report on stdout")
    p.add_argument("--data-dir", metavar="DIR", help="folder holding IN's external data (default: its folder)")
    return p


def _split(text: str) -> list[str]:
    return [t.strip() for t in text.split(",") if t.strip()]


def _floats(text: str | None, what: str) -> tuple[float, ...] | None:
    if text is None:
        return None
    try:
        return tuple(float(x) for x in _split(text))
    except ValueError as exc:
        raise CommandError(f"{what} {text!r}: give numbers separated by commas") from exc


def _size(text: str | None) -> tuple[int, int] | None:
    if text is None:
        return None
    parts = text.lower().replace("x", ",").split(",")
    try:
        h, w = (int(x) for x in parts)
    except ValueError as exc:
        raise CommandError(f"--image-size {text!r}: give HEIGHTxWIDTH, e.g. 224x224") from exc
    return h, w


def options_from_args(args: argparse.Namespace):  # noqa: ANN201 - a QuantizeOptions
    from editor.quantize.options import QuantizeOptions

    return QuantizeOptions(mode=args.mode, format=args.format, per_channel=not args.per_tensor,
                           activation_type=args.activation_type, weight_type=args.weight_type, method=args.method or "minmax",
                           percentile=args.percentile, reduce_range=args.reduce_range,
                           exclude_nodes=tuple(_split(args.exclude_nodes)), exclude_ops=tuple(_split(args.exclude_ops)),
                           block_size=args.block_size, symmetric=args.symmetric,
                           preprocess=not args.no_preprocess, short_names=not args.quantizer_names).checked()


def calibration_from_args(args: argparse.Namespace, model, dims: dict[str, int]):  # noqa: ANN001, ANN201
    """The :class:`~editor.quantize.CalibrationData` the arguments ask for."""
    from editor.quantize.images import ImageParams
    from editor.quantize.sources import load_calibration

    image = ImageParams(input=args.image_input, size=_size(args.image_size), scale=args.scale,
                        mean=_floats(args.mean, "--mean"), std=_floats(args.std, "--std"),
                        bgr=True if args.bgr else None, layout=args.layout)
    return load_calibration(model, path=args.calibration, random=args.random, held_back=args.held_back,
                            seed=args.seed, dims=dims, image=image, limit=args.limit)


def _say(message: str) -> None:
    if sys.stderr.isatty():
        print(f"  {message}", file=sys.stderr, flush=True)


def run(args: argparse.Namespace) -> int:
    from editor.cli import emit_json
    from editor.cli.info_cost import parse_dims
    from editor.document import Document
    from editor.passes.apply import ApplyModel
    from editor.quantize.session import QuantizeSession

    options = options_from_args(args)
    if args.auto is not None and args.auto < 0:
        raise CommandError(f"--auto takes a tolerance >= 0, not {args.auto}")
    dims = parse_dims(args.dim)
    doc = Document.open(args.model, data_dir=args.data_dir)
    try:
        calibration = calibration_from_args(args, doc.model, dims)
        with QuantizeSession(doc.model, calibration, store=doc.store, source=str(args.model), dims=dims,
                             progress=lambda _f, m: _say(m)) as session:
            outcome = session.run(options, auto=args.auto, metric=args.metric,
                                  sensitivity=args.sensitivity is not None,
                                  methods=("percentile",) if args.method is None else ())
        doc.execute(ApplyModel(outcome.quantized.model, f"Quantize ({options.describe()})"))
        doc.save(args.output)
    finally:
        if doc.store is not None:
            doc.store.close()
    if args.json:
        emit_json({"model": str(args.model), "output": str(args.output), **outcome.to_json()})
    else:
        for line in outcome.lines(args.sensitivity or 10):
            print(line)
        print(f"wrote {args.output}")
    return 0 if outcome.ok else 1
