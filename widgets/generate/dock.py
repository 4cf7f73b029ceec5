"""The Generate dock: type a prompt, watch a decoder's tokens come, time each step.

The GUI of :func:`editor.decoder.generate.generate`. The model is the current tab's file on
disk (the folder beside it holds the tokenizer and genai_config.json); generation runs on a
Python thread with a :class:`~editor.runtime.Runner` of its own (the loop engine's steps run
in that Runner's child process, so a crashing kernel ends the generation with a message,
never the window), and each token comes back to the GUI thread through a queued signal.
Stop cancels between steps. Values to capture (the selected nodes' outputs, or names typed)
are kept at the chosen step and listed with their statistics.
"""

from __future__ import annotations

import threading
from pathlib import Path

from PySide6.QtCore import QObject, Qt, Signal
from PySide6.QtWidgets import (
    QCheckBox,
    QComboBox,
    QDockWidget,
    QGridLayout,
    QHBoxLayout,
    QLabel,
    QLineEdit,
    QPlainTextEdit,
    QPushButton,
    QSpinBox,
    QTableWidget,
    QTableWidgetItem,
    QVBoxLayout,
    QWidget,
)

from editor.decoder.generate import ENGINES, GenerateOptions, Generation, TokenStep, generate
from editor.errors import StudioError
from widgets.common.status_line import MessageLabel

__all__ = ["GenerateDock"]


class _Relay(QObject):
    """Lives on the GUI thread; the generation thread emits through it (queued)."""

    step = Signal(int, object)
    done = Signal(int, object)
    failed = Signal(int, str)


class GenerateDock(QDockWidget):
    """See module docstring. ``start()``, ``stop()``, ``generation`` (the last result)."""

    def __init__(self, window) -> None:  # noqa: ANN001
        super().__init__("Generate", window)
        self.setObjectName("generate")
        self.window_ = window
        self.generation: Generation | None = None
        self.steps: list[TokenStep] = []
        self._ticket = 0
        self._cancel: threading.Event | None = None
        self._thread: threading.Thread | None = None
        self.relay = _Relay(self)
        self.relay.step.connect(self._on_step)
        self.relay.done.connect(self._on_done)
        self.relay.failed.connect(self._on_failed)
        self._build()

    # -- construction -------------------------------------------------------------------------
    def _build(self) -> None:
        body = QWidget(self)
        self.prompt = QPlainTextEdit(body)
        self.prompt.setPlaceholderText("Prompt: the text the model continues")
        self.prompt.setMaximumHeight(48)
        self.max_new = QSpinBox(body)
        self.max_new.setRange(1, 4096)
        self.max_new.setValue(32)
        self.greedy = QCheckBox("Greedy", body)
        self.greedy.setChecked(True)
        self.greedy.setToolTip("Always take the most likely token (otherwise sample as genai_config.json says)")
        self.engine = QComboBox(body)
        for name in ENGINES:
            self.engine.addItem(name, name)
        self.engine.setToolTip("genai: onnxruntime-genai's generator; loop: ours, through the runner "
                               "(it can capture intermediate values)")
        self.capture = QLineEdit(body)
        self.capture.setPlaceholderText("values to capture (comma-separated)")
        self.from_selection = QPushButton("From Selection", body)
        self.from_selection.setToolTip("Capture the outputs of the selected nodes (or the selected values)")
        self.from_selection.clicked.connect(self.capture_selection)
        self.capture_step = QSpinBox(body)
        self.capture_step.setRange(0, 4095)
        self.capture_step.setPrefix("at step ")
        self.capture_step.setToolTip("0 is the prefill (the prompt's step)")
        self.start_button = QPushButton("Generate", body)
        self.start_button.clicked.connect(self.start)
        self.stop_button = QPushButton("Stop", body)
        self.stop_button.clicked.connect(self.stop)
        self.stop_button.setEnabled(False)
        self.output = QPlainTextEdit(body)
        self.output.setReadOnly(True)
        self.status = MessageLabel("", body)
        self.table = QTableWidget(0, 5, body)
        self.table.setHorizontalHeaderLabels(["step", "token", "text", "ms", "phase"])
        self.table.verticalHeader().setVisible(False)
        self.table.verticalHeader().setDefaultSectionSize(18)
        self.captured = QTableWidget(0, 3, body)
        self.captured.setHorizontalHeaderLabels(["captured value", "shape", "statistics"])
        self.captured.verticalHeader().setVisible(False)

        options = QGridLayout()
        options.addWidget(QLabel("New tokens", body), 0, 0)
        options.addWidget(self.max_new, 0, 1)
        options.addWidget(self.greedy, 0, 2)
        options.addWidget(self.engine, 0, 3)
        options.addWidget(self.capture, 1, 0, 1, 2)
        options.addWidget(self.capture_step, 1, 2)
        options.addWidget(self.from_selection, 1, 3)
        buttons = QHBoxLayout()
        buttons.addWidget(self.start_button)
        buttons.addWidget(self.stop_button)
        buttons.addStretch(1)
        results = QHBoxLayout()
        results.addWidget(self.output, 3)
        results.addWidget(self.table, 2)
        layout = QVBoxLayout(body)
        layout.setContentsMargins(4, 4, 4, 4)
        layout.addWidget(self.prompt)
        layout.addLayout(options)
        layout.addLayout(buttons)
        layout.addWidget(self.status)
        layout.addLayout(results, 1)
        layout.addWidget(self.captured)
        self.captured.hide()
        self.setWidget(body)

    # -- what to run ----------------------------------------------------------------------------
    def model_path(self) -> Path | None:
        tab = self.window_.current_tab()
        return None if tab is None or tab.doc.path is None else Path(tab.doc.path)

    def capture_selection(self) -> None:
        """Fill the capture field with the selected nodes' outputs (or selected values)."""
        tab = self.window_.current_tab()
        if tab is None:
            return
        names: list[str] = []
        for target in tab.selection.targets:
            if target.kind == "node" and target.node is not None and tab.doc.has_node(target.node):
                names += [o for o in tab.doc.node(target.node).output if o]
            elif target.kind == "value" and target.name:
                names.append(target.name)
        self.capture.setText(", ".join(dict.fromkeys(names)))

    def options(self) -> GenerateOptions:
        capture = tuple(n.strip() for n in self.capture.text().split(",") if n.strip())
        return GenerateOptions(max_new_tokens=self.max_new.value(), greedy=self.greedy.isChecked(),
                               engine=self.engine.currentData(), capture=capture,
                               capture_step=self.capture_step.value())

    # -- running --------------------------------------------------------------------------------
    @property
    def running(self) -> bool:
        return self._thread is not None and self._thread.is_alive()

    def start(self) -> None:
        path = self.model_path()
        if path is None:
            self.status.setText("Open a decoder model saved on disk (its folder holds the tokenizer).")
            return
        if self.running:
            return
        prompt, options = self.prompt.toPlainText(), self.options()
        tab = self.window_.current_tab()
        modified = " (the file on disk: the tab has unsaved edits)" if tab is not None and tab.doc.is_modified else ""
        self._ticket += 1
        ticket = self._ticket
        self._cancel = threading.Event()
        self.steps = []
        self.generation = None
        self.table.setRowCount(0)
        self.captured.setRowCount(0)
        self.captured.hide()
        self.output.setPlainText(prompt)
        self.status.setText(f"Generating with {path.name}{modified}…")
        self.start_button.setEnabled(False)
        self.stop_button.setEnabled(True)
        cancel, relay = self._cancel, self.relay

        def work() -> None:
            try:
                result = generate(path, prompt, options, on_step=lambda s: relay.step.emit(ticket, s), cancel=cancel)
            except StudioError as exc:
                relay.failed.emit(ticket, exc.message)
            except Exception as exc:  # noqa: BLE001 - shown in the dock, never raised into Qt
                relay.failed.emit(ticket, f"{type(exc).__name__}: {exc}")
            else:
                relay.done.emit(ticket, result)

        self._thread = threading.Thread(target=work, name="generate", daemon=True)
        self._thread.start()

    def stop(self) -> None:
        if self._cancel is not None:
            self._cancel.set()

    def wait(self, timeout: float | None = None) -> bool:
        if self._thread is not None:
            self._thread.join(timeout)
        return not self.running

    # -- results ----------------------------------------------------------------------------------
    def _on_step(self, ticket: int, step: TokenStep) -> None:
        if ticket != self._ticket:
            return
        self.steps.append(step)
        cursor = self.output.textCursor()
        cursor.movePosition(cursor.MoveOperation.End)
        cursor.insertText(step.text)
        row = self.table.rowCount()
        self.table.insertRow(row)
        for col, text in enumerate((str(step.index), str(step.token), repr(step.text)[1:-1],
                                    f"{step.seconds * 1e3:.2f}", step.phase)):
            item = QTableWidgetItem(text)
            item.setFlags(item.flags() & ~Qt.ItemFlag.ItemIsEditable)
            self.table.setItem(row, col, item)
        self.table.scrollToBottom()

    def _on_done(self, ticket: int, result: Generation) -> None:
        if ticket != self._ticket:
            return
        self.generation = result
        self._finish()
        per = result.decode_seconds_per_token
        decode = f"decode {per * 1e3:.2f} ms/token ({1 / per:.0f} tokens/s)" if per else "no decode step"
        self.status.setText(f"{result.engine}: prompt {len(result.prompt_ids)} tokens, prefill "
                            f"{result.prefill_seconds * 1e3:.2f} ms, {decode}; {len(result.steps)} tokens, "
                            f"stopped: {result.stopped}")
        if result.captured:
            from editor.runtime import tensor_stats

            self.captured.show()
            for name, value in result.captured.items():
                row = self.captured.rowCount()
                self.captured.insertRow(row)
                s = tensor_stats(value)
                numbers = "" if s.mean is None else f"min {s.min:.4g}  max {s.max:.4g}  mean {s.mean:.4g}  std {s.std:.4g}"
                for col, text in enumerate((name, f"{value.dtype} {list(value.shape)}", numbers)):
                    self.captured.setItem(row, col, QTableWidgetItem(text))

    def _on_failed(self, ticket: int, message: str) -> None:
        if ticket != self._ticket:
            return
        self._finish()
        self.status.setText(f"Cannot generate: {message}")

    def _finish(self) -> None:
        self.start_button.setEnabled(True)
        self.stop_button.setEnabled(False)
