"""The input panel: one editor per graph input, and the values of symbolic dimensions.

It starts from the inputs ``onnx-studio run --random`` makes: one core function,
:func:`editor.runtime.input_plan.plan_inputs`, chooses the dims (the model's ``imgsz``
metadata, sizes the model can take, guesses) and the values (token ids inside their
embedding table, an attention mask of ones) and says why; the dock shows each choice with
its reason and feeds what that function makes. What the user changes wins: a dim typed in
(``dims``), a random range edited (``val_ranges``), another mode or a saved ``.npz`` of
inputs (``given``: their shapes fix the dims they fill).

NOTE: the plan shown is worked out off the GUI thread (a second on a 4,000-node model, on a
structure snapshot of the model); the run makes it again only when something changed.

Each :class:`InputEditor` makes the value of one input: random (the core's, or a range of
the user's), zeros, ones, a constant, a file (``.npy``/``.npz``/``.pb`` via the runtime's
``load_input_file``), an image file for image-like inputs (see :mod:`widgets.run.imaging`)
or text for string tensors (one string per line). :class:`DimsEditor` lists every symbolic
(or unknown) dimension once; the values the user typed are remembered per model by
:class:`DimsMemory` (QSettings, keyed by the model's path).

NOTE: unnamed dimensions (``?``, ``-1``) get a name of their own, ``input[axis]``, so the user
can set each one; named ones are shared by every input that uses the name, as the model
means them to be.
"""

from __future__ import annotations

import hashlib
import json
import threading
from dataclasses import replace
from typing import Any

import numpy as np
import onnx
from PySide6.QtCore import QObject, QSettings, Qt, Signal
from PySide6.QtWidgets import (
    QCheckBox,
    QComboBox,
    QDoubleSpinBox,
    QFileDialog,
    QFrame,
    QBoxLayout,
    QGridLayout,
    QHBoxLayout,
    QLabel,
    QLineEdit,
    QPlainTextEdit,
    QScrollArea,
    QSizePolicy,
    QSpinBox,
    QToolButton,
    QVBoxLayout,
    QWidget,
)

from editor.errors import RuntimeBackendError
from editor.runtime import InputSpec, guess_dim, input_specs, load_input_file, make_input
from editor.runtime.input_dims import DimChoice, dim_key
from editor.runtime.input_plan import InputPlan, InputUse, plan_inputs
from editor.runtime.input_roles import InputRole
from widgets.run.imaging import NORMALISATIONS, ImageOptions, image_layout, image_to_tensor
from widgets.common.elided_label import ElidedLabel
from widgets.common.status_line import MessageLabel
from widgets.common.wheel_guard import guard_wheel
from widgets.settings.store import APPLICATION, ORGANIZATION

MODES = {
    "random": "Random",
    "zeros": "Zeros",
    "ones": "Ones",
    "constant": "Constant",
    "file": "File (.npy/.npz/.pb)",
    "image": "Image file",
    "text": "Text",
}
FILE_FILTER = "Arrays (*.npy *.npz *.pb);;All files (*)"
IMAGE_FILTER = "Images (*.png *.jpg *.jpeg *.bmp *.gif *.webp *.tif *.tiff *.ppm *.pgm);;All files (*)"


def concrete_shape(spec: InputSpec, dims: dict[str, int]) -> tuple[int, ...]:
    """``spec``'s shape with every symbolic or unknown dim given a value."""
    if spec.shape is None:
        return ()
    out = []
    for axis, d in enumerate(spec.shape):
        key = dim_key(spec.name, axis, d)
        if key is None:
            out.append(int(d))
        else:
            out.append(int(dims.get(key, guess_dim(d if isinstance(d, str) else None))))
    return tuple(out)


class DimsMemory:
    """Values of symbolic dims per model, in the app's QSettings (``run_dims/<hash>``)."""

    def __init__(self) -> None:
        self._qs = QSettings(QSettings.Format.IniFormat, QSettings.Scope.UserScope, ORGANIZATION, APPLICATION)

    @staticmethod
    def _key(model_key: str) -> str:
        return "run_dims/" + hashlib.sha1(model_key.encode("utf-8", "surrogateescape")).hexdigest()[:20]

    def load(self, model_key: str | None) -> dict[str, int]:
        if not model_key:
            return {}
        raw = self._qs.value(self._key(model_key), "")
        try:
            data = json.loads(raw) if raw else {}
        except (TypeError, ValueError):
            return {}
        return {str(k): int(v) for k, v in data.items() if isinstance(v, int)}

    def save(self, model_key: str | None, dims: dict[str, int]) -> None:
        if not model_key:
            return
        self._qs.setValue(self._key(model_key), json.dumps(dims, sort_keys=True))
        self._qs.sync()


class DimsEditor(QWidget):
    """A spin box per symbolic dimension, pre-filled with the core's choice and its reason
    (a grey tag in the box, the whole reason on hover); ``changed`` when the user edits
    one. :meth:`user_values` are the dims the user set: they override the core's."""

    changed = Signal()

    #: the short tag a spin box shows after the value, per source of the value
    TAGS = {"guess": "guess", "given": "", "metadata": "metadata", "rule": "rule"}

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        # a grid, not a QFormLayout: the form gave a label it could not fit no width at all
        self._grid = QGridLayout(self)
        self._grid.setContentsMargins(0, 0, 0, 0)
        self._grid.setColumnStretch(0, 1)
        self._grid.setColumnStretch(1, 1)
        self._spins: dict[str, QSpinBox] = {}
        self._user: set[str] = set()
        self._used: dict[str, str] = {}

    def set_dims(self, names: list[tuple[str, str]], choices: dict[str, DimChoice],
                 user: dict[str, int] | None = None) -> None:
        """``names``: (key, where-used text) in first-use order; ``choices``: the core's
        value and reason per key; ``user``: the values the user set (they win)."""
        while self._grid.count():
            widget = self._grid.takeAt(0).widget()
            if widget is not None:
                widget.deleteLater()
        self._spins = {}
        self._used = dict(names)
        user = dict(user or {})
        self._user = set(user)
        for row, (key, used) in enumerate(names):
            spin = QSpinBox(self)
            spin.setRange(0, 1 << 30)
            spin.setMinimumWidth(72)  # the range's widest text would ask for ~100 px
            guard_wheel(spin)
            spin.setObjectName(f"dim:{key}")
            choice = choices.get(key) or DimChoice(key, guess_dim(key if "[" not in key else None), "guess",
                                                   "other", "working out the model's sizes…")
            if key in user:
                choice = DimChoice(key, int(user[key]), "given", choice.role, "your value", choice.uses)
            spin.setValue(int(choice.value))
            self._describe(key, spin, choice)
            spin.valueChanged.connect(lambda _v, k=key: self._on_edited(k))
            label = ElidedLabel(key, self)  # exporters' dim names can be long
            label.setToolTip(f"{key}: used by {used}")
            self._grid.addWidget(label, row, 0)
            self._grid.addWidget(spin, row, 1)
            self._spins[key] = spin
        self.setVisible(bool(names))

    def _describe(self, key: str, spin: QSpinBox, choice: DimChoice) -> None:
        tag = self.TAGS.get(choice.source, choice.source)
        spin.setSuffix(f"  {tag}" if tag else "")
        role = f" ({choice.role})" if choice.role else ""
        spin.setToolTip(f"{key} = {choice.value}{role}: {choice.why}\nused by {self._used.get(key, '?')}")

    def set_choices(self, choices: dict[str, DimChoice]) -> None:
        """The core's values and reasons for the dims the user did not set."""
        for key, spin in self._spins.items():
            choice = choices.get(key)
            if choice is None or key in self._user:
                continue
            blocked = spin.blockSignals(True)
            spin.setValue(int(choice.value))
            spin.blockSignals(blocked)
            self._describe(key, spin, choice)

    def _on_edited(self, key: str) -> None:
        self._user.add(key)
        spin = self._spins[key]
        self._describe(key, spin, DimChoice(key, spin.value(), "given", "", "your value"))
        self.changed.emit()

    def values(self) -> dict[str, int]:
        return {k: s.value() for k, s in self._spins.items()}

    def user_values(self) -> dict[str, int]:
        """The dims the user set (typed, or remembered from an earlier session)."""
        return {k: s.value() for k, s in self._spins.items() if k in self._user}

    def set_value(self, key: str, value: int) -> None:
        """Set ``key`` as the user would (it then overrides the core's choice)."""
        self._spins[key].setValue(int(value))
        if key not in self._user:  # the same value: no signal, but now it is the user's
            self._on_edited(key)

    def keys(self) -> list[str]:
        return list(self._spins)


class InputEditor(QFrame):
    """How to make the value of one graph input (see module docstring)."""

    changed = Signal()

    def __init__(self, spec: InputSpec, parent: QWidget | None = None, *, use: InputUse | None = None) -> None:
        super().__init__(parent)
        self.spec = spec
        #: what the core made for this input (range and how), see plan_inputs
        self.use = use or _standalone_use(spec)
        self._range_edited = False
        self.setObjectName("inputEditor")
        self.setFrameShape(QFrame.Shape.StyledPanel)
        is_string = spec.elem_type == onnx.TensorProto.STRING
        self._layout = image_layout(spec.shape) if spec.kind == "tensor" and not is_string else None
        layout = QVBoxLayout(self)
        layout.setContentsMargins(8, 6, 8, 6)
        layout.setSpacing(4)
        head = QHBoxLayout()
        name = QLabel(f"<b>{_esc(spec.name)}</b>", self)
        name.setTextInteractionFlags(name.textInteractionFlags() | name.textInteractionFlags().TextSelectableByMouse)
        kind = QLabel(_esc(spec.type_text), self)
        kind.setStyleSheet("color: palette(placeholder-text);")
        kind.setToolTip(spec.type_text)
        kind.setSizePolicy(QSizePolicy.Policy.Ignored, QSizePolicy.Policy.Preferred)
        head.addWidget(name)
        head.addWidget(kind, 1)
        self.mode = QComboBox(self)
        modes = ["random", "zeros", "ones", "constant", "file"]
        if self._layout is not None:
            modes.append("image")
        if is_string:
            modes = ["text", "random", "constant", "file"]
        if spec.kind == "map":
            modes = ["file"]
        for m in modes:
            self.mode.addItem(MODES[m], m)
        self.mode.setSizeAdjustPolicy(QComboBox.SizeAdjustPolicy.AdjustToMinimumContentsLengthWithIcon)
        self.mode.setMinimumContentsLength(9)
        guard_wheel(self.mode)
        head.addWidget(self.mode)
        layout.addLayout(head)
        self.pages = QWidget(self)
        self._pages_box = QVBoxLayout(self.pages)
        self._pages_box.setContentsMargins(0, 0, 0, 0)
        self._pages: list[QWidget] = []
        self._page_index: dict[str, int] = {}
        self._build_pages(is_string)
        layout.addWidget(self.pages)
        self.mode.currentIndexChanged.connect(self._on_mode)
        self._on_mode()

    # -- pages ------------------------------------------------------------------------------
    def _page(self, mode: str, widget: QWidget) -> None:
        self._page_index[mode] = len(self._pages)
        self._pages.append(widget)
        self._pages_box.addWidget(widget)
        widget.hide()

    def _build_pages(self, is_string: bool) -> None:
        empty = QWidget(self)
        empty.setFixedHeight(0)
        self._page("zeros", empty)
        self._page_index["ones"] = self._page_index["zeros"]
        # random
        page = QWidget(self)
        row = QHBoxLayout(page)
        row.setContentsMargins(0, 0, 0, 0)
        self.low = QDoubleSpinBox(page)
        self.high = QDoubleSpinBox(page)
        numeric = self.spec.dtype.kind in "fiu" and self.spec.kind in ("tensor", "sequence", "optional")
        for box in (self.low, self.high):
            box.setRange(-1e12, 1e12)
            # the range's widest text would make the spin box 180 px wide
            box.setMinimumWidth(64)
            box.setSizePolicy(QSizePolicy.Policy.Expanding, QSizePolicy.Policy.Fixed)
            box.setDecimals(0 if self.spec.dtype.kind in "iu" else 3)
            box.setEnabled(numeric)
            guard_wheel(box)
        self._show_core_range()
        for box in (self.low, self.high):
            box.valueChanged.connect(self._on_range_edited)
        # what the core chose and why ("ints in [0, 30521] · indices into 'word_embeddings'");
        # Reset goes back to it after the user's own range
        self.why = MessageLabel("", page)
        self.why.setStyleSheet("color: palette(placeholder-text);")
        self.reset_range = QToolButton(page)
        self.reset_range.setText("Reset")
        self.reset_range.setToolTip("Back to the values run --random would use")
        self.reset_range.clicked.connect(self.use_core_range)
        # two lines (range, then why): one line needs ~300 px, more than the Run dock's
        # Inputs pane has at the default window size
        row.setDirection(QBoxLayout.Direction.TopToBottom)
        line = QHBoxLayout()
        line.addWidget(QLabel("from", page))
        line.addWidget(self.low, 1)
        line.addWidget(QLabel("to", page))
        line.addWidget(self.high, 1)
        row.addLayout(line)
        why_line = QHBoxLayout()
        why_line.addWidget(self.why, 1)
        why_line.addWidget(self.reset_range, 0, Qt.AlignmentFlag.AlignTop)
        row.addLayout(why_line)
        self._page("random", page)
        self._describe()
        # constant
        self.constant = QLineEdit(page)
        self.constant.setPlaceholderText("text" if is_string else "value, e.g. 0.5")
        self.constant.setText("" if is_string else "0")
        self._page("constant", self.constant)
        # file
        self.file_path, page = self._path_row(FILE_FILTER, "Choose an input file")
        self._page("file", page)
        # image
        img = QWidget(self)
        grid = QGridLayout(img)
        grid.setContentsMargins(0, 0, 0, 0)
        self.image_path, row_widget = self._path_row(IMAGE_FILTER, "Choose an image")
        grid.addWidget(row_widget, 0, 0, 1, 4)
        self.image_layout = QComboBox(img)
        self.image_layout.addItems(["NCHW", "NHWC", "CHW", "HWC"])
        if self._layout:
            self.image_layout.setCurrentText(self._layout)
        self.image_norm = QComboBox(img)
        for key in NORMALISATIONS:
            self.image_norm.addItem({"none": "0..1", "imagenet": "ImageNet mean/std", "[-1, 1]": "-1..1"}[key], key)
        self.image_norm.addItem("0..255 (raw)", "raw")
        self.image_bgr = QCheckBox("BGR", img)
        grid.addWidget(QLabel("Layout", img), 1, 0)
        grid.addWidget(self.image_layout, 1, 1)
        grid.addWidget(self.image_bgr, 1, 2)
        grid.addWidget(QLabel("Values", img), 2, 0)
        grid.addWidget(self.image_norm, 2, 1, 1, 3)
        grid.setColumnStretch(3, 1)
        self.image_norm.setToolTip("pixels / 255, then (x - mean) / std per channel; raw keeps 0..255")
        self.image_bgr.setToolTip("channel order blue, green, red (OpenCV-trained models)")
        self._page("image", img)
        # text
        self.text = QPlainTextEdit(self)
        self.text.setPlaceholderText("one string per line")
        self.text.setFixedHeight(64)
        self._page("text", self.text)

    def _path_row(self, file_filter: str, title: str) -> tuple[QLineEdit, QWidget]:
        page = QWidget(self)
        row = QHBoxLayout(page)
        row.setContentsMargins(0, 0, 0, 0)
        edit = QLineEdit(page)
        edit.setPlaceholderText("path")
        button = QToolButton(page)
        button.setText("…")
        button.setToolTip(title)

        def browse() -> None:
            path, _ = QFileDialog.getOpenFileName(self, title, edit.text(), file_filter)
            if path:
                edit.setText(path)

        button.clicked.connect(browse)
        row.addWidget(edit, 1)
        row.addWidget(button)
        return edit, page

    def _on_mode(self) -> None:
        # NOTE: pages are shown and hidden in a plain box, not a QStackedWidget: a stack is as
        # tall as its tallest page, and the image page would make every editor tall
        current = self._page_index[self.current_mode()]
        for i, page in enumerate(self._pages):
            page.setVisible(i == current)
        self.pages.setVisible(self.current_mode() not in ("zeros", "ones"))
        self.changed.emit()

    # -- the core's choice and the user's range ------------------------------------------------
    def _show_core_range(self) -> None:
        low, high = self.use.low, self.use.high
        if low is None or high is None:
            low, high = (-1.0, 1.0)
        for box, v in ((self.low, low), (self.high, high)):
            blocked = box.blockSignals(True)
            box.setValue(v)
            box.blockSignals(blocked)

    def _describe(self) -> None:
        if self._range_edited:
            self.why.setText(f"your range: {self.low.value():g} to {self.high.value():g} (run --random: {self.use.how})")
        else:
            self.why.setText(self.use.how)
        self.reset_range.setVisible(self._range_edited)

    def _on_range_edited(self, _value: float = 0.0) -> None:
        self._range_edited = True
        self._describe()
        self.changed.emit()

    def set_use(self, use: InputUse) -> None:
        """What the core made for this input (a range the user set stays)."""
        self.use = use
        if not self._range_edited:
            self._show_core_range()
        self._describe()

    def use_core_range(self) -> None:
        """Forget the user's range: random values are the core's again."""
        self._range_edited = False
        self._show_core_range()
        self._describe()
        self.changed.emit()

    def range_override(self) -> tuple[float, float] | None:
        """The user's random range (``--val-range``), or None to take the core's values."""
        if not self._range_edited or not self.low.isEnabled():
            return None
        return self.low.value(), self.high.value()

    # -- state ------------------------------------------------------------------------------
    def current_mode(self) -> str:
        return str(self.mode.currentData())

    def set_mode(self, mode: str) -> None:
        index = self.mode.findData(mode)
        if index < 0:
            raise RuntimeBackendError(f"input {self.spec.name!r} has no mode {mode!r}")
        self.mode.setCurrentIndex(index)

    def state(self) -> dict[str, Any]:
        return {
            "mode": self.current_mode(), "range": self.range_override(), "constant": self.constant.text(),
            "file": self.file_path.text(),
            "image": self.image_path.text(), "layout": self.image_layout.currentText(),
            "norm": self.image_norm.currentData(), "bgr": self.image_bgr.isChecked(),
            "text": self.text.toPlainText(),
        }

    def restore(self, state: dict[str, Any]) -> None:
        if self.mode.findData(state.get("mode")) >= 0:
            self.set_mode(state["mode"])
        if state.get("range") is not None:
            self.low.setValue(state["range"][0])
            self.high.setValue(state["range"][1])
            self._on_range_edited()
        self.constant.setText(state.get("constant", self.constant.text()))
        self.file_path.setText(state.get("file", ""))
        self.image_path.setText(state.get("image", ""))
        self.image_layout.setCurrentText(state.get("layout", self.image_layout.currentText()))
        norm = self.image_norm.findData(state.get("norm"))
        if norm >= 0:
            self.image_norm.setCurrentIndex(norm)
        self.image_bgr.setChecked(bool(state.get("bgr", False)))
        self.text.setPlainText(state.get("text", ""))

    # -- values -----------------------------------------------------------------------------
    def value(self, dims: dict[str, int], *, seed: int = 0):
        """The input's value; raises RuntimeBackendError with a one-line reason.

        A random value is the core's (:func:`editor.runtime.inputs.make_input` with this
        input's role, or the user's range); :meth:`InputPanel.feeds` makes every random
        input of a model with ``make_inputs`` instead, exactly as ``run --random`` does."""
        spec = self.spec
        mode = self.current_mode()
        if mode == "file":
            path = self.file_path.text().strip()
            if not path:
                raise RuntimeBackendError(f"input {spec.name!r}: choose a file")
            return load_input_file(path, spec)
        if mode == "image":
            return self._image_value(dims)
        if mode == "text":
            return self._text_value(dims)
        shape = concrete_shape(spec, dims)
        # the runtime fills a spec whose dims are all ints; unnamed dims included
        fixed = replace(spec, shape=shape) if spec.shape is not None else spec
        if mode == "random":
            override = self.range_override()
            if override is not None and override[1] < override[0]:
                raise RuntimeBackendError(f"input {spec.name!r}: random range {override[0]:g}..{override[1]:g} is empty")
            role = InputRole(low=override[0], high=override[1], reason="your range") if override else None
            return make_input(fixed, "random", seed=seed, role=role)
        if mode == "constant":
            text = self.constant.text().strip()
            if spec.elem_type == onnx.TensorProto.STRING:
                constant: Any = text
            else:
                try:
                    constant = float(text) if spec.dtype.kind in "fc" or spec.dtype.kind == "V" else int(float(text))
                except ValueError:
                    raise RuntimeBackendError(f"input {spec.name!r}: constant {text!r} is not a number") from None
            return make_input(fixed, "constant", constant=constant)
        return make_input(fixed, mode)

    def _text_value(self, dims: dict[str, int]) -> np.ndarray:
        lines = self.text.toPlainText().split("\n")
        if lines and lines[-1] == "":
            lines = lines[:-1]
        arr = np.array(lines, dtype=object)
        shape = concrete_shape(self.spec, dims)
        if self.spec.shape is not None and int(np.prod(shape)) == arr.size:
            return arr.reshape(shape)
        if self.spec.shape is not None and len(self.spec.shape) == 2 and arr.size:
            return arr.reshape(1, -1) if shape[0] == 1 else arr.reshape(-1, 1)
        if self.spec.shape is not None and len(self.spec.shape) == 0:
            return np.array(lines[0] if lines else "", dtype=object)
        return arr

    def _image_value(self, dims: dict[str, int]) -> np.ndarray:
        path = self.image_path.text().strip()
        if not path:
            raise RuntimeBackendError(f"input {self.spec.name!r}: choose an image file")
        layout = self.image_layout.currentText()
        shape = concrete_shape(self.spec, dims)
        if len(shape) != len(layout):
            raise RuntimeBackendError(f"input {self.spec.name!r}: layout {layout} does not fit shape {list(shape)}")
        axes = dict(zip(layout, shape))
        norm = self.image_norm.currentData()
        if norm == "raw":
            mean, std, scale = (0.0,), (1.0,), 1.0
        else:
            mean, std = NORMALISATIONS[norm]
            scale = 1.0 / 255.0
        options = ImageOptions(layout=layout, channels=int(axes["C"]), height=int(axes["H"]), width=int(axes["W"]),
                               scale=scale, mean=mean, std=std, bgr=self.image_bgr.isChecked(),
                               batch=int(axes.get("N", 1)))
        if options.channels not in (1, 3, 4):
            raise RuntimeBackendError(f"input {self.spec.name!r}: {options.channels} channels is not an image")
        return image_to_tensor(path, options, self.spec.dtype)


class _PlanRelay(QObject):
    """Carries a plan worked out on another thread to the GUI thread (queued signal)."""

    done = Signal(int, object)


class InputPanel(QWidget):
    """Editors for every input of one model, and its symbolic dims (see module docstring)."""

    changed = Signal()
    #: the core's plan for the current settings arrived (shown in the editors)
    planReady = Signal()

    def __init__(self, parent: QWidget | None = None, *, memory: DimsMemory | None = None) -> None:
        super().__init__(parent)
        self.memory = memory or DimsMemory()
        self._model_key: str | None = None
        self.specs: list[InputSpec] = []
        self.editors: dict[str, InputEditor] = {}
        outer = QVBoxLayout(self)
        outer.setContentsMargins(0, 0, 0, 0)
        scroll = QScrollArea(self)
        scroll.setWidgetResizable(True)
        scroll.setFrameShape(QFrame.Shape.NoFrame)
        scroll.setHorizontalScrollBarPolicy(Qt.ScrollBarPolicy.ScrollBarAlwaysOff)
        outer.addWidget(scroll)
        body = QWidget(scroll)
        self._body = QVBoxLayout(body)
        self._body.setContentsMargins(0, 0, 4, 0)
        self._body.setSpacing(6)
        # one seed for every random input, as run --random --seed; saved inputs (an .npz of
        # run --save, or the inputs a reduction saved) fill every input they name
        top = QHBoxLayout()
        self.seed = QSpinBox(body)
        self.seed.setRange(0, 2**31 - 1)
        self.seed.setPrefix("seed ")
        self.seed.setMinimumWidth(64)
        self.seed.setToolTip("Seed of every random input (input k draws with seed + k, as run --random --seed)")
        guard_wheel(self.seed)
        self.seed.valueChanged.connect(self._on_settings_changed)
        self.load_button = QToolButton(body)
        self.load_button.setText("Saved Inputs…")
        self.load_button.setToolTip("Fill the inputs from an .npz (what run --save and Reduce write)")
        self.load_button.clicked.connect(self._choose_saved)
        top.addWidget(self.seed)
        top.addStretch(1)
        top.addWidget(self.load_button)
        self._body.addLayout(top)
        self.saved_note = MessageLabel("", body)
        self.saved_note.setStyleSheet("color: palette(placeholder-text);")
        self.saved_note.hide()
        self._body.addWidget(self.saved_note)
        self.dims_title = QLabel("<b>Dimensions</b>", body)
        self.dims = DimsEditor(body)
        self.dims.changed.connect(self._on_dims_changed)
        self._body.addWidget(self.dims_title)
        self._body.addWidget(self.dims)
        # the core's warnings: guessed dims the model may need otherwise
        self.plan_note = MessageLabel("", body)
        self.plan_note.setStyleSheet("color: #b9770e;")
        self.plan_note.hide()
        self._body.addWidget(self.plan_note)
        self._editors_box = QVBoxLayout()
        self._editors_box.setSpacing(6)
        self._body.addLayout(self._editors_box)
        self.empty_note = QLabel("This model has no inputs to feed.", body)
        self.empty_note.setStyleSheet("color: palette(placeholder-text);")
        self._body.addWidget(self.empty_note)
        self._body.addStretch(1)
        scroll.setWidget(body)
        self.model: onnx.ModelProto | None = None
        #: the core's plan for the settings shown (None until it arrives), and what it was made for
        self.plan: InputPlan | None = None
        self._plan_for: tuple | None = None
        self._tickets = 0
        self._relay = _PlanRelay(self)
        self._relay.done.connect(self._on_plan)
        #: the plan a run last used (the dock states it)
        self.last_plan: InputPlan | None = None

    def set_model(self, model: onnx.ModelProto, model_key: str | None) -> None:
        """Build editors for ``model``'s inputs, keeping the settings of inputs that stay and
        the dims the user set; the core's plan fills them in when it arrives."""
        states = {name: ed.state() for name, ed in self.editors.items()}
        user_dims = {**self.dims.user_values(), **self.memory.load(model_key)}
        for editor in self.editors.values():
            editor.setParent(None)
            editor.deleteLater()
        self.editors = {}
        self.model = model
        self._model_key = model_key
        self.specs = input_specs(model)
        names: dict[str, list[str]] = {}
        for spec in self.specs:
            for axis, d in enumerate(spec.shape or ()):
                key = dim_key(spec.name, axis, d)
                if key is not None:
                    names.setdefault(key, []).append(f"{spec.name}[{axis}]")
        user_dims = {k: v for k, v in user_dims.items() if k in names}
        self.dims.set_dims([(k, ", ".join(v)) for k, v in names.items()], {}, user_dims)
        self.dims_title.setVisible(bool(names))
        for spec in self.specs:
            editor = InputEditor(spec, self)
            if spec.name in states:
                editor.restore(states[spec.name])
            editor.changed.connect(self._on_settings_changed)
            self._editors_box.addWidget(editor)
            self.editors[spec.name] = editor
        self.empty_note.setVisible(not self.specs)
        self.saved_note.hide()
        self.plan = None
        self.request_plan()

    # -- the core's plan ------------------------------------------------------------------------
    def _request(self) -> dict[str, Any]:
        """What plan_inputs is asked for: the user's dims and ranges, the seed (the editors in
        other modes are ``given`` at run time)."""
        return {"dims": self.dims.user_values(), "seed": self.seed.value(), "val_ranges": self._user_ranges()}

    def _key(self) -> tuple:
        request = self._request()
        return (id(self.model), tuple(sorted(request["dims"].items())), request["seed"],
                tuple(sorted(request["val_ranges"].items())))

    def request_plan(self) -> None:
        """Work out the core's plan for the current settings off the GUI thread (on a
        structure snapshot: a later edit of the document cannot reach it)."""
        if self.model is None or not self.specs:
            return
        if not self.isVisible():
            # NOTE: worked out when the panel is first seen: a plan is pure-Python work
            # (the shape engine) that competes with the GUI thread for the interpreter, and
            # most opened models are never run
            self._plan_wanted = True
            return
        self._plan_wanted = False
        from editor.shapes.engine import structure_snapshot

        snapshot = structure_snapshot(self.model)
        snapshot.metadata_props.extend(self.model.metadata_props)  # imgsz
        snapshot.functions.extend(self.model.functions)
        request, key = self._request(), self._key()
        self._tickets += 1
        ticket, relay = self._tickets, self._relay

        def work() -> None:
            try:
                plan = plan_inputs(snapshot, **request)
            except Exception as exc:  # noqa: BLE001 - shown beside the inputs; the run says it again
                plan = exc
            try:
                relay.done.emit(ticket, (key, plan))
            except RuntimeError:  # the panel is gone
                pass

        threading.Thread(target=work, name="input-plan", daemon=True).start()

    def _on_plan(self, ticket: int, payload) -> None:  # noqa: ANN001
        if ticket != self._tickets:
            return  # settings changed meanwhile: a newer plan is on its way
        key, plan = payload
        if isinstance(plan, Exception):
            self.plan, self._plan_for = None, None
            self.plan_note.setText(f"run --random would refuse these inputs: {plan}")
            self.plan_note.show()
            return
        self.plan, self._plan_for = plan, key
        self.dims.set_choices(plan.dims.choices)
        for use in plan.inputs:
            if use.name in self.editors:
                self.editors[use.name].set_use(use)
        warnings = plan.warnings(fix="set it under Dimensions")  # not the command line's --dim
        self.plan_note.setText("\n".join(warnings))
        self.plan_note.setVisible(bool(warnings))
        self.planReady.emit()

    _plan_wanted = False

    def showEvent(self, event) -> None:  # noqa: N802, ANN001
        super().showEvent(event)
        if self._plan_wanted:
            self.request_plan()

    def model_edited(self) -> None:
        """The document changed: a plan made before cannot be fed as it is."""
        self._plan_for = None

    def _user_ranges(self) -> dict[str, tuple[float, float]]:
        return {name: r for name, ed in self.editors.items()
                if ed.current_mode() == "random" and (r := ed.range_override()) is not None}

    def _on_settings_changed(self, *_args) -> None:  # noqa: ANN002
        self.request_plan()
        self.changed.emit()

    def _on_dims_changed(self) -> None:
        self.memory.save(self._model_key, self.dims.user_values())
        self._on_settings_changed()

    def dim_values(self) -> dict[str, int]:
        return self.dims.values()

    # -- saved inputs -------------------------------------------------------------------------
    def _choose_saved(self) -> None:
        path, _ = QFileDialog.getOpenFileName(self, "Saved inputs", "", "Saved inputs (*.npz);;All files (*)")
        if path:
            try:
                self.use_saved(path)
            except RuntimeBackendError as exc:
                self.saved_note.setText(str(exc))
                self.saved_note.show()

    def use_saved(self, path) -> list[str]:  # noqa: ANN001
        """Every input named in the ``.npz`` at ``path`` takes its value from there (file
        mode); the names used, in input order. Raises RuntimeBackendError for a file that
        cannot be read or names no input of the model."""
        from editor.runtime.inputs import load_inputs

        feeds = load_inputs(path, self.model)
        used = [spec.name for spec in self.specs if spec.name in feeds]
        if not used:
            raise RuntimeBackendError(f"{str(path)!r} holds no input of this model")
        for name in used:
            editor = self.editors[name]
            editor.set_mode("file")
            editor.file_path.setText(str(path))
        self.saved_note.setText(f"{len(used)} of {len(self.specs)} inputs from {path}")
        self.saved_note.show()
        return used

    # -- values -------------------------------------------------------------------------------
    def feeds(self) -> dict[str, Any]:
        """A value per input, from :func:`editor.runtime.input_plan.plan_inputs` (what
        ``run --random`` feeds): the editors in other modes are its ``given`` values, the
        user's dims and ranges its ``dims`` and ``val_ranges``. Raises RuntimeBackendError
        naming the input at fault."""
        if self.model is None:
            return {}
        dims = self.dim_values()
        given = {spec.name: self.editors[spec.name].value(dims) for spec in self.specs
                 if self.editors[spec.name].current_mode() != "random"}
        for name, (lo, hi) in self._user_ranges().items():
            if hi < lo:
                raise RuntimeBackendError(f"input {name!r}: random range {lo:g}..{hi:g} is empty")
        if not given and self.plan is not None and self._plan_for == self._key():
            plan = self.plan  # worked out already, for these very settings
        else:
            plan = plan_inputs(self.model, given=given, **self._request())
        self.last_plan = plan
        return dict(plan.feeds)


def _standalone_use(spec: InputSpec) -> InputUse:
    """An editor before (or without) a model's plan: the values ``random_tensor`` draws for
    the dtype, as the plan would say them."""
    from editor.runtime.input_plan import _how

    dtype = spec.dtype
    rng = {"i": (-10.0, 10.0), "u": (0.0, 10.0)}.get(dtype.kind, (None, None))
    return InputUse(spec.name, spec.type_text, str(dtype), None, rng[0], rng[1], _how("random", dtype, None))


def _esc(text: str) -> str:
    return text.replace("&", "&amp;").replace("<", "&lt;").replace(">", "&gt;")
