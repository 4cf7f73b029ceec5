"""Every code example in editor/'s docstrings and in the README runs (docs that cannot rot).

* A Python example (a docstring's ``::`` block, a README ```python block) runs as a script
  on a real model (the scripting namespace: ``doc``, ``commands``, ``passes``, ``np``,
  ``onnx``) without raising.
* A command example (``python -m ...``, ``onnx-studio ...``, a README table row) names a
  command that exists, and every ``--flag`` it shows is one that command accepts.
* ```sh blocks name Makefile targets that exist.

The scripting docstring once showed ``doc.rename_value(doc.main, ...)``, which raised
TypeError; this test is the reason that cannot happen again.
"""

from __future__ import annotations

import ast
import contextlib
import functools
import importlib
import io
import re
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

from editor.document import Document
from editor.scripting import run_script_source
from tests.conftest import CORPUS, ROOT

MODEL = CORPUS / "onnx-backend" / "light" / "light_resnet50.onnx"
README = ROOT / "README.md"


def _docstrings(path: Path) -> list[tuple[str, str]]:
    tree = ast.parse(path.read_text(encoding="utf-8"))
    out = []
    for node in ast.walk(tree):
        if isinstance(node, (ast.Module, ast.ClassDef, ast.FunctionDef, ast.AsyncFunctionDef)):
            doc = ast.get_docstring(node, clean=True)
            if doc:
                out.append((getattr(node, "name", "module"), doc))
    return out


def _literal_blocks(doc: str) -> list[str]:
    """The indented blocks that follow a line ending in ``::`` (reST literal blocks)."""
    blocks = []
    lines = doc.splitlines()
    k = 0
    while k < len(lines):
        if lines[k].rstrip().endswith("::"):
            j = k + 1
            while j < len(lines) and not lines[j].strip():
                j += 1
            body = []
            while j < len(lines) and (not lines[j].strip() or lines[j].startswith((" ", "\t"))):
                body.append(lines[j])
                j += 1
            if body:
                blocks.append(textwrap.dedent("\n".join(body)).strip())
            k = j
        else:
            k += 1
    return blocks


def _docstring_examples() -> list:
    cases = []
    for path in sorted((ROOT / "editor").rglob("*.py")):
        # a literal block needs a docstring line ending in '::': only such files are parsed
        # (parsing all of editor/ cost every worker seconds of its collection)
        if not re.search(r"::[ \t]*$", path.read_text(encoding="utf-8"), re.M):
            continue
        for owner, doc in _docstrings(path):
            for n, block in enumerate(_literal_blocks(doc)):
                rel = path.relative_to(ROOT)
                cases.append(pytest.param(block, id=f"{rel}:{owner}:{n}"))
    return cases


def _readme_blocks(lang: str) -> list[str]:
    return re.findall(rf"```{lang}\n(.*?)```", README.read_text(encoding="utf-8"), flags=re.S)


def _is_command(block: str) -> bool:
    return block.startswith(("python -m ", "onnx-studio ", "$ "))


@functools.lru_cache(maxsize=None)
def _accepted_flags(argv_prefix: tuple[str, ...]) -> str:
    if argv_prefix[:2] == ("-m", "widgets"):
        # `onnx-studio SUB --help` in this process: the same parser, without a Python start-up
        # per table row (a child process each cost this file 11-19 s)
        from widgets.cli import main

        out = io.StringIO()
        with contextlib.redirect_stdout(out), pytest.raises(SystemExit) as exited:
            main([*argv_prefix[2:], "--help"])
        assert exited.value.code in (0, None), f"onnx-studio {' '.join(argv_prefix[2:])} --help exited {exited.value.code}"
        return out.getvalue()
    r = subprocess.run([sys.executable, *argv_prefix, "--help"], cwd=ROOT, capture_output=True, text=True,
                       timeout=120)
    assert r.returncode == 0, f"{' '.join(argv_prefix)} --help failed: {r.stderr}"
    return r.stdout


def _check_command(line: str) -> None:
    words = line.split()
    if words[0] == "python":
        prefix = ["-m", words[2]]
    else:  # onnx-studio SUBCOMMAND
        prefix = ["-m", "widgets", words[1]]
    help_text = _accepted_flags(tuple(prefix))
    for flag in re.findall(r"(?<![\w-])(--[a-z][a-z0-9-]*)", line):
        assert flag in help_text, f"{line!r}: {flag} is not an option of {' '.join(prefix)}"


def _run_python(source: str) -> None:
    doc = Document.open(MODEL)
    run_script_source(source, doc, filename="<example>")


def test_there_are_examples_to_check() -> None:
    assert len(_docstring_examples()) >= 2
    assert _readme_blocks("python")


@pytest.mark.parametrize("block", _docstring_examples())
def test_docstring_example_runs(block: str) -> None:
    if _is_command(block):
        for line in block.splitlines():
            _check_command(line.strip())
    else:
        _run_python(block)


@pytest.mark.parametrize("n", range(len(_readme_blocks("python"))))
def test_readme_python_example_runs(n: int) -> None:
    _run_python(_readme_blocks("python")[n])


def test_readme_sh_examples_name_make_targets() -> None:
    targets = set(re.findall(r"^([a-z][\w-]*):", (ROOT / "Makefile").read_text(), flags=re.M))
    for block in _readme_blocks("sh"):
        for line in block.splitlines():
            code = line.split("#", 1)[0].strip()
            if code.startswith("make "):
                assert code.split()[1] in targets, line


def test_readme_command_table_flags_exist() -> None:
    rows = re.findall(r"^\| `(onnx-studio [a-z]+[^`]*)` \|", README.read_text(encoding="utf-8"), flags=re.M)
    from widgets.cli import SUBCOMMANDS, module_name

    checked = 0
    for row in rows:
        sub = row.split()[1]
        if sub not in SUBCOMMANDS:
            continue  # "onnx-studio MODEL --screenshot": the window, not a subcommand
        module = importlib.import_module(module_name(sub))
        assert hasattr(module, "run")
        _check_command(row.replace("\\|", "|"))
        checked += 1
    assert checked >= len(SUBCOMMANDS) - 1
