"""``onnx-studio script SCRIPT.py MODEL -o OUT.onnx``: run an edit script headless."""

from __future__ import annotations

import argparse
from pathlib import Path

from editor.document import Document
from editor.scripting import run_script_file


def add_parser(sub: argparse._SubParsersAction) -> None:
    p = sub.add_parser("script", help="run an edit script on a model and save the result",
                       description="Run SCRIPT (Python; `doc` is the scripting API) on MODEL and save to OUT. "
                                   "Nothing is written when the script fails.")
    p.add_argument("script", type=Path)
    p.add_argument("model", type=Path)
    p.add_argument("-o", "--output", type=Path, required=True, help="where to save the edited model")
    p.add_argument("--data-dir", type=Path, help="folder of the model's external data")


def run(args: argparse.Namespace) -> int:
    doc = Document.open(args.model, data_dir=args.data_dir)
    run_script_file(args.script, doc)
    doc.save(args.output)
    print(f"{len(doc.stack.commands)} edit(s) applied; saved {args.output}")
    return 0
