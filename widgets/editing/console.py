"""A Python console dock bound to the open document.

The namespace is :func:`editor.scripting.script_namespace` (``doc`` is a ScriptAPI whose
edits are the core's commands, so every scripted edit lands on the undo stack), kept per
document between runs so variables persist. Ctrl+Enter (or "Run") runs the input through
:func:`editor.scripting.run_script_source`: a failing snippet is rolled back as a whole
and its error is printed, never raised into the GUI. A lone expression prints its value.
"""

from __future__ import annotations

import contextlib
import io

from PySide6.QtGui import QFont, QKeySequence, QShortcut
from PySide6.QtWidgets import QHBoxLayout, QLabel, QPlainTextEdit, QPushButton, QVBoxLayout, QWidget

from editor.errors import StudioError


class ConsolePanel(QWidget):
    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        mono = QFont("monospace")
        mono.setStyleHint(QFont.StyleHint.Monospace)
        self.output = QPlainTextEdit(self)
        self.output.setReadOnly(True)
        self.output.setFont(mono)
        self.input = QPlainTextEdit(self)
        self.input.setFont(mono)
        self.input.setPlaceholderText("doc.rename_node('conv1', 'stem')   — Ctrl+Enter runs")
        self.input.setMaximumHeight(110)
        self.run_button = QPushButton("Run", self)
        self.run_button.clicked.connect(self.run_input)
        QShortcut(QKeySequence("Ctrl+Return"), self.input, activated=self.run_input)
        bar = QHBoxLayout()
        bar.addWidget(QLabel("names: doc, commands, passes, np, onnx", self), 1)
        bar.addWidget(self.run_button)
        layout = QVBoxLayout(self)
        layout.setContentsMargins(2, 2, 2, 2)
        layout.addWidget(self.output, 1)
        layout.addWidget(self.input)
        layout.addLayout(bar)
        self.doc = None
        self._namespaces: dict[int, dict] = {}
        self.set_document(None)

    def set_document(self, doc) -> None:
        self.doc = doc
        self.run_button.setEnabled(doc is not None)
        self.input.setEnabled(doc is not None)

    def namespace(self) -> dict:
        ns = self._namespaces.get(id(self.doc))
        if ns is None or ns.get("__doc_obj__") is not self.doc:
            # (the scripting API brings every pass: imported when the console is first used)
            from editor.scripting import script_namespace

            ns = script_namespace(self.doc)
            ns["__doc_obj__"] = self.doc
            self._namespaces[id(self.doc)] = ns
        return ns

    def run_input(self) -> None:
        source = self.input.toPlainText()
        if source.strip() and self.run_source(source):
            self.input.clear()

    def run_source(self, source: str) -> bool:
        """Run ``source``; print what it printed (and a lone expression's value)."""
        if self.doc is None:
            return False
        self.output.appendPlainText(">>> " + source.rstrip().replace("\n", "\n... "))
        buf = io.StringIO()
        ok = True
        # NOTE: a snippet starts a new undo step: were its first command merged into the
        # previous one (same node renamed again), rolling back a failing snippet by stack
        # depth would miss it.
        self.doc.stack.break_merge()
        try:
            with contextlib.redirect_stdout(buf):
                try:
                    code = compile(source, "<console>", "eval")
                except SyntaxError:
                    code = None
                if code is not None:
                    depth = self.doc.stack.index
                    try:
                        value = eval(code, self.namespace())  # noqa: S307 - the user's own console
                    except Exception:
                        while self.doc.stack.index > depth:  # all or nothing, as for scripts
                            self.doc.undo()
                        raise
                    if value is not None:
                        print(repr(value))
                else:
                    from editor.scripting import run_script_source

                    run_script_source(source, self.doc, filename="<console>", namespace=self.namespace())
        except StudioError as exc:
            buf.write(f"error: {exc.message}\n")
            ok = False
        except Exception as exc:  # noqa: BLE001 - an expression's error is printed, never raised
            buf.write(f"{type(exc).__name__}: {exc}\n")
            ok = False
        text = buf.getvalue().rstrip()
        if text:
            self.output.appendPlainText(text)
        return ok
