"""``onnx-studio script SCRIPT.py MODEL -o OUT.onnx [--allow-invalid]``: run an edit script
headless.

Exit codes: 0 saved; 1 the script failed, or the edited model has errors (they are printed;
nothing is written unless ``--allow-invalid``); 2 MODEL cannot be read or OUT written.
"""

from __future__ import annotations

import argparse
from pathlib import Path

from editor.cli.check import add_allow_invalid, gate_save
from editor.document import Document
from editor.scripting import run_script_file


def add_parser(sub: argparse._SubParsersAction) -> None:
    p = sub.add_parser("script", help="run an edit script on a model and save the result",
                       description="Run SCRIPT (Python; `doc` is the scripting API) on MODEL and save to OUT. "
                                   "Nothing is written when the script fails, nor when the edited model has "
                                   "errors (printed; --allow-invalid writes it anyway).")
    p.add_argument("script", type=Path)
    p.add_argument("model", type=Path)
    p.add_argument("-o", "--output", type=Path, required=True, help="where to save the edited model")
    p.add_argument("--data-dir", type=Path, help="folder of the model's external data")
    add_allow_invalid(p)


def run(args: argparse.Namespace) -> int:
    doc = Document.open(args.model, data_dir=args.data_dir)
    run_script_file(args.script, doc)
    gate_save(doc, allow_invalid=args.allow_invalid, what="the edited model")
    doc.save(args.output)
    print(f"{len(doc.stack.commands)} edit(s) applied; saved {args.output}")
    return 0
