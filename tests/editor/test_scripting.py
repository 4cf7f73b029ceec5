"""Scripting API and `onnx-studio script`: edits land on the undo stack, failures undo
everything, and an exported history replays to the same model."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import onnx
import pytest

from editor import commands
from editor.document import Document
from editor.scripting import ScriptAPI, ScriptError, history_script, run_script_source
from tests.conftest import CORPUS

SQUEEZENET = CORPUS / "onnx-backend" / "light" / "light_squeezenet.onnx"


def open_doc() -> Document:
    return Document(onnx.load(str(SQUEEZENET), load_external_data=False), path=SQUEEZENET)


def test_script_edits_are_commands_on_the_stack() -> None:
    doc = open_doc()
    original = doc.serialize()
    run_script_source(
        "conv = doc.nodes(op_type='Conv')[0]\n"
        "doc.rename_node(conv, 'first_conv')\n"
        "doc.set_attribute(conv, 'group', 1)\n"
        "doc.set_metadata('author', 'script')\n",
        doc,
    )
    assert doc.stack.labels()[0].startswith("Rename node")
    assert len(doc.stack.commands) == 3
    assert doc.find_nodes("first_conv")
    doc.undo_all()
    assert doc.serialize() == original


def test_failing_script_leaves_document_unchanged_and_names_the_line() -> None:
    doc = open_doc()
    original = doc.serialize()
    with pytest.raises(ScriptError) as info:
        run_script_source("doc.set_metadata('a', 'b')\n\ndoc.rename_node(10**9, 'x')\n", doc, filename="edit.py")
    assert info.value.message.startswith("edit.py:3:")
    assert doc.serialize() == original and not doc.stack.commands[: doc.stack.index]


def test_history_export_replays_to_the_same_model(tmp_path: Path) -> None:
    doc = open_doc()
    api = ScriptAPI(doc)
    conv = api.nodes(op_type="Conv")[1]
    for partial in ("s", "st", "stem"):  # typed name: merges into one step, script keeps the final value
        doc.execute(commands.SetNodeField(conv, "name", partial))
    api.rename_value(doc.model.graph.output[0].name, "probabilities")
    api.set_metadata("k", "v")
    api.run_pass("remove-identity")
    text = history_script(doc)
    assert "'stem'" in text and "commands.SetNodeField" in text
    replay = open_doc()
    run_script_source(text, replay)
    assert replay.serialize() == doc.serialize()


def test_cli_script(tmp_path: Path) -> None:
    script = tmp_path / "edit.py"
    script.write_text("doc.set_metadata('edited_by', 'cli')\n")
    out = tmp_path / "out.onnx"
    r = subprocess.run([sys.executable, "-m", "widgets", "script", str(script), str(SQUEEZENET), "-o", str(out)],
                       capture_output=True, text=True)
    assert r.returncode == 0, r.stderr
    m = onnx.load(str(out))
    assert {p.key: p.value for p in m.metadata_props}["edited_by"] == "cli"


def test_cli_script_failure_writes_nothing(tmp_path: Path) -> None:
    script = tmp_path / "bad.py"
    script.write_text("doc.rename_node('no such node', 'x')\n")
    out = tmp_path / "out.onnx"
    r = subprocess.run([sys.executable, "-m", "widgets", "script", str(script), str(SQUEEZENET), "-o", str(out)],
                       capture_output=True, text=True)
    assert r.returncode == 1
    assert r.stderr.startswith("error: bad.py:1:") and "Traceback" not in r.stderr
    assert not out.exists()


def test_failing_script_does_not_undo_the_edit_before_it() -> None:
    doc = open_doc()
    conv = ScriptAPI(doc).nodes(op_type="Conv")[0]
    doc.execute(commands.SetNodeField(conv, "name", "typed"))  # mergeable with a later rename
    with pytest.raises(ScriptError):
        run_script_source(f"doc.rename_node({conv}, 'scripted')\nraise ValueError('boom')\n", doc)
    assert doc.node(conv).name == "typed"
    assert doc.stack.labels()[-1].startswith("Rename node")
    assert doc.stack.index == 1
