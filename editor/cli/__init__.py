"""The headless subcommands of ``onnx-studio``: the command line over the core.

``onnx-studio SUBCOMMAND ...`` runs a tool. Every tool prints one ``error: ...`` line and
exits non-zero on failure, never a traceback (set ``ONNX_STUDIO_DEBUG=1`` to see one).

Each subcommand lives in its own module ``editor.cli.<name>`` (dashes as underscores) exposing
``add_parser(subparsers)`` and ``run(args) -> int``; modules are imported only when used,
so ``onnx-studio info`` does not pay for onnxruntime.

The program users run is :mod:`widgets.cli`, the application layer above both the
core and the window: it adds the subcommands that need Qt (``render``) and opens the
window when no subcommand is given. This package never imports it, nor ``widgets``; what
it needs from above (the window) is handed to :func:`main`.
"""

from __future__ import annotations

import argparse
import importlib
import os
import sys
from collections.abc import Callable, Sequence

from editor import __version__
from editor.errors import StudioError

#: subcommand -> one-line help; the module editor.cli.<name> implements it
SUBCOMMANDS: dict[str, str] = {}
#: subcommands implemented outside this package (registered by the application layer)
MODULES: dict[str, str] = {}


def register(name: str, help_text: str, module: str | None = None) -> None:
    SUBCOMMANDS[name] = help_text
    if module is not None:
        MODULES[name] = module


register("info", "summarise a model (--json for machine-readable output)")
register("check", "validate a model and list its problems (exit 1 when there are errors)")
register("convert", "re-save a model: binary <-> text, inline <-> external data")
register("run", "run a model and summarise its outputs (shape, dtype, stats)")
register("extract", "extract a subgraph (nodes, or inputs -> outputs) as a new model")
register("diff", "compare two models (exit 0 same, 1 different, 2 unreadable)")
register("script", "run an edit script (the same commands as the GUI) on a model")
register("find", "find nodes and values by name, op, attribute, dtype or shape (the Find panel's queries)")
register("shapes", "type and (symbolic) shape of every value; -o writes them into the model")
register("optimize", "fold constants, fuse and clean up a model; --check proves the outputs unchanged")
register("set-dim", "set input/output dims (symbolic or fixed), rewriting the constants that pin them")
register("compare", "compare two runs tensor by tensor; first divergence (exit 0 agree, 1 differ, 2 cannot run)")
register("reduce", "bisect a failing model to its smallest failing subgraph (+ its inputs as .npz)")
register("fp16", "convert fp32 to fp16/bf16 where every consumer's schema allows it; prints the error per output")
register("quantize", "int8 / int4 with calibration (onnxruntime's tools); proves it: checker, error vs fp32, MACs")
register("merge", "chain two models: outputs of A feed inputs of B (names and opsets reconciled)")
register("set-io-type", "change a graph input's or output's element type, with a Cast inside the model")
register("generate", "generate text with a decoder LLM: tokens as they come, time per token (prefill, decode)")


def module_name(command: str) -> str:
    """The module that implements a subcommand (``set-dim`` -> ``editor.cli.set_dim``)."""
    return MODULES.get(command, f"editor.cli.{command.replace('-', '_')}")


def build_parser(only: str | None = None) -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="onnx-studio",
        description="Open, edit, validate, run and render ONNX models. "
        "Without a subcommand, opens the GUI on MODEL (or on the bundled sample).",
    )
    parser.add_argument("--version", action="version", version=f"onnx-studio {__version__}")
    sub = parser.add_subparsers(dest="command", metavar="COMMAND")
    for name, help_text in SUBCOMMANDS.items():
        if only is not None and name != only:
            sub.add_parser(name, help=help_text, add_help=False)
            continue
        module = importlib.import_module(module_name(name))
        module.add_parser(sub)
    return parser


def main(argv: Sequence[str] | None = None, gui: Callable[[list[str]], int] | None = None) -> int:
    """Run the subcommand in ``argv``; without one, ``gui(argv)`` (the application layer
    passes the window's entry), or an error line when there is none (``python -m editor.cli``)."""
    # In a frozen bundle the run worker (multiprocessing 'spawn') re-executes this program
    # with `--multiprocessing-fork ...`: let multiprocessing take over before any parsing.
    # A no-op outside a bundle.
    import multiprocessing

    multiprocessing.freeze_support()
    argv = list(sys.argv[1:] if argv is None else argv)
    if not argv or argv[0] not in SUBCOMMANDS and argv[0] not in ("-h", "--help", "--version"):
        if gui is None:
            print("error: no subcommand given (the window opens with `onnx-studio`; "
                  "`python -m editor.cli --help` lists the subcommands)", file=sys.stderr)
            return 2
        return gui(argv)
    try:
        args = build_parser(only=argv[0] if argv[0] in SUBCOMMANDS else None).parse_args(argv)
        module = importlib.import_module(module_name(args.command))
        return int(module.run(args) or 0)
    except StudioError as exc:
        print(f"error: {exc.message}", file=sys.stderr)
        if os.environ.get("ONNX_STUDIO_DEBUG") and exc.details:
            print(exc.details, file=sys.stderr)
        return exc.exit_code
    except KeyboardInterrupt:
        print("error: interrupted", file=sys.stderr)
        return 130
    except BrokenPipeError:
        return 0
    except Exception as exc:  # noqa: BLE001 - a bug, but the user gets one line, not a traceback
        if os.environ.get("ONNX_STUDIO_DEBUG"):
            raise
        print(f"error: unexpected {type(exc).__name__}: {exc} (set ONNX_STUDIO_DEBUG=1 for details)",
              file=sys.stderr)
        return 1


def emit_json(data: object) -> None:
    """Print JSON the same way for every subcommand (sorted keys, UTF-8)."""
    import json

    json.dump(data, sys.stdout, indent=2, sort_keys=False, ensure_ascii=False, default=str)
    sys.stdout.write("\n")
