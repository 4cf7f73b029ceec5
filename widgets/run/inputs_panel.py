"""The input panel: one editor per graph input, and the values of symbolic dimensions.

Each :class:`InputEditor` makes the value of one input: random (a range per dtype, a seed),
zeros, ones, a constant, a file (``.npy``/``.npz``/``.pb`` via the runtime's
``load_input_file``), an image file for image-like inputs (see :mod:`widgets.run.imaging`)
or text for string tensors (one string per line). :class:`DimsEditor` lists every symbolic
(or unknown) dimension once, pre-filled with the runtime's ``guess_dim``; the values are
remembered per model by :class:`DimsMemory` (QSettings, keyed by the model's path).

NOTE: unnamed dimensions (``?``, ``-1``) get a name of their own, ``input[axis]``, so the user
can set each one; named ones are shared by every input that uses the name, as the model
means them to be.
"""

from __future__ import annotations

import hashlib
import json
from dataclasses import replace
from typing import Any

import numpy as np
import onnx
from PySide6.QtCore import QSettings, Qt, Signal
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
from widgets.run.imaging import NORMALISATIONS, ImageOptions, image_layout, image_to_tensor
from widgets.common.elided_label import ElidedLabel
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


def dim_key(spec_name: str, axis: int, dim) -> str | None:
    """The name the dims editor uses for one declared dim (None for a fixed one)."""
    if isinstance(dim, int) and dim >= 0:
        return None
    if isinstance(dim, str) and dim:
        return dim
    return f"{spec_name}[{axis}]"


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


def default_range(dtype: np.dtype) -> tuple[float, float] | None:
    """The random range offered for a dtype (None: no numeric range, e.g. strings)."""
    dtype = np.dtype(dtype)
    if dtype == np.bool_ or dtype.kind in "OUS":
        return None
    if dtype.kind == "i":
        return (-10, 10)
    if dtype.kind == "u":
        return (0, 10)
    return (-1.0, 1.0)


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
    """A spin box per symbolic dimension; ``changed`` when the user edits one."""

    changed = Signal()

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        # a grid, not a QFormLayout: the form gave a label it could not fit no width at all
        self._grid = QGridLayout(self)
        self._grid.setContentsMargins(0, 0, 0, 0)
        self._grid.setColumnStretch(0, 1)
        self._grid.setColumnStretch(1, 1)
        self._spins: dict[str, QSpinBox] = {}

    def set_dims(self, names: list[tuple[str, str]], values: dict[str, int]) -> None:
        """``names``: (key, where-used text) in first-use order."""
        while self._grid.count():
            widget = self._grid.takeAt(0).widget()
            if widget is not None:
                widget.deleteLater()
        self._spins = {}
        for row, (key, used) in enumerate(names):
            spin = QSpinBox(self)
            spin.setRange(0, 1 << 30)
            spin.setMinimumWidth(72)  # the range's widest text would ask for ~100 px
            spin.setValue(int(values.get(key, guess_dim(key if "[" not in key else None))))
            spin.setToolTip(f"used by {used}")
            spin.setObjectName(f"dim:{key}")
            spin.valueChanged.connect(lambda _v: self.changed.emit())
            label = ElidedLabel(key, self)  # exporters' dim names can be long
            label.setToolTip(f"{key}: used by {used}")
            self._grid.addWidget(label, row, 0)
            self._grid.addWidget(spin, row, 1)
            self._spins[key] = spin
        self.setVisible(bool(names))

    def values(self) -> dict[str, int]:
        return {k: s.value() for k, s in self._spins.items()}

    def set_value(self, key: str, value: int) -> None:
        self._spins[key].setValue(int(value))

    def keys(self) -> list[str]:
        return list(self._spins)


class InputEditor(QFrame):
    """How to make the value of one graph input (see module docstring)."""

    changed = Signal()

    def __init__(self, spec: InputSpec, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.spec = spec
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
        rng = default_range(self.spec.dtype) if self.spec.elem_type else (-1.0, 1.0)
        self.low = QDoubleSpinBox(page)
        self.high = QDoubleSpinBox(page)
        for box, v in ((self.low, rng[0] if rng else 0), (self.high, rng[1] if rng else 1)):
            box.setRange(-1e12, 1e12)
            # the range's widest text would make the spin box 180 px wide
            box.setMinimumWidth(64)
            box.setSizePolicy(QSizePolicy.Policy.Expanding, QSizePolicy.Policy.Fixed)
            box.setDecimals(0 if self.spec.dtype.kind in "iu" else 3)
            box.setValue(v)
            box.setEnabled(rng is not None)
            box.valueChanged.connect(lambda _v: self.changed.emit())
        self.seed = QSpinBox(page)
        self.seed.setRange(0, 2**31 - 1)
        self.seed.setPrefix("seed ")
        self.seed.setMinimumWidth(64)
        # two lines (range, then seed): one line needs ~300 px, more than the Run dock's
        # Inputs pane has at the default window size, and the seed was cut off
        row.setDirection(QBoxLayout.Direction.TopToBottom)
        line = QHBoxLayout()
        line.addWidget(QLabel("from", page))
        line.addWidget(self.low, 1)
        line.addWidget(QLabel("to", page))
        line.addWidget(self.high, 1)
        row.addLayout(line)
        seed_line = QHBoxLayout()
        seed_line.addWidget(self.seed)
        seed_line.addStretch(1)
        row.addLayout(seed_line)
        self._page("random", page)
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
            "mode": self.current_mode(), "low": self.low.value(), "high": self.high.value(),
            "seed": self.seed.value(), "constant": self.constant.text(), "file": self.file_path.text(),
            "image": self.image_path.text(), "layout": self.image_layout.currentText(),
            "norm": self.image_norm.currentData(), "bgr": self.image_bgr.isChecked(),
            "text": self.text.toPlainText(),
        }

    def restore(self, state: dict[str, Any]) -> None:
        if self.mode.findData(state.get("mode")) >= 0:
            self.set_mode(state["mode"])
        self.low.setValue(state.get("low", self.low.value()))
        self.high.setValue(state.get("high", self.high.value()))
        self.seed.setValue(state.get("seed", 0))
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
    def value(self, dims: dict[str, int], *, seed_offset: int = 0):
        """The input's value; raises RuntimeBackendError with a one-line reason."""
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
            rng = default_range(spec.dtype) if spec.elem_type else None
            if rng is None or spec.kind != "tensor" or spec.dtype.kind not in "fiu":
                return make_input(fixed, "random", seed=self.seed.value() + seed_offset)
            low, high = self.low.value(), self.high.value()
            if high < low:
                raise RuntimeBackendError(f"input {spec.name!r}: random range {low:g}..{high:g} is empty")
            gen = np.random.default_rng(self.seed.value() + seed_offset)
            if spec.dtype.kind in "iu":
                return gen.integers(int(low), int(high) + 1, size=shape).astype(spec.dtype)
            return gen.uniform(low, high, size=shape).astype(spec.dtype)
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


class InputPanel(QWidget):
    """Editors for every input of one model, and its symbolic dims (see module docstring)."""

    changed = Signal()

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
        self.dims_title = QLabel("<b>Dimensions</b>", body)
        self.dims = DimsEditor(body)
        self.dims.changed.connect(self._on_dims_changed)
        self._body.addWidget(self.dims_title)
        self._body.addWidget(self.dims)
        self._editors_box = QVBoxLayout()
        self._editors_box.setSpacing(6)
        self._body.addLayout(self._editors_box)
        self.empty_note = QLabel("This model has no inputs to feed.", body)
        self.empty_note.setStyleSheet("color: palette(placeholder-text);")
        self._body.addWidget(self.empty_note)
        self._body.addStretch(1)
        scroll.setWidget(body)

    def set_model(self, model: onnx.ModelProto, model_key: str | None) -> None:
        """Build editors for ``model``'s inputs, keeping the settings of inputs that stay."""
        states = {name: ed.state() for name, ed in self.editors.items()}
        old_dims = self.dims.values()
        for editor in self.editors.values():
            editor.setParent(None)
            editor.deleteLater()
        self.editors = {}
        self._model_key = model_key
        self.specs = input_specs(model)
        names: dict[str, list[str]] = {}
        for spec in self.specs:
            for axis, d in enumerate(spec.shape or ()):
                key = dim_key(spec.name, axis, d)
                if key is not None:
                    names.setdefault(key, []).append(spec.name)
        # a decoder starts from the core's sizes (an empty KV cache, total = past + new, the
        # head size its attention ops require), then what the user set before
        chosen, cache = _decoder_dims(model)
        remembered = {**chosen, **old_dims, **self.memory.load(model_key)}
        self.dims.set_dims([(k, ", ".join(v)) for k, v in names.items()], remembered)
        self.dims_title.setVisible(bool(names))
        for spec in self.specs:
            editor = InputEditor(spec, self)
            if spec.name in states:
                editor.restore(states[spec.name])
            elif cache is not None and cache.fills.get(spec.name) == "ones":
                editor.set_mode("ones")  # a decoder's attention mask: every token attends
            editor.changed.connect(self.changed)
            self._editors_box.addWidget(editor)
            self.editors[spec.name] = editor
        self.empty_note.setVisible(not self.specs)

    def _on_dims_changed(self) -> None:
        self.memory.save(self._model_key, self.dims.values())
        self.changed.emit()

    def dim_values(self) -> dict[str, int]:
        return self.dims.values()

    def feeds(self) -> dict[str, Any]:
        """A value per input; raises RuntimeBackendError naming the input at fault."""
        dims = self.dim_values()
        return {spec.name: self.editors[spec.name].value(dims, seed_offset=i) for i, spec in enumerate(self.specs)}


def _decoder_dims(model: onnx.ModelProto):  # noqa: ANN202
    """(dim values, KV-cache plan) as the core chooses them for a decoder's run (without the
    shape engine's check: it reads the whole graph, too slow to wait for here); ({}, None)
    for a model without a KV cache."""
    from editor.decoder import find_layout
    from editor.runtime import kv_cache
    from editor.runtime.input_dims import choose_dims

    if find_layout(model) is None:
        return {}, None
    plan = choose_dims(model, check=False)
    return plan.values(), kv_cache.settle(model, plan)


def _esc(text: str) -> str:
    return text.replace("&", "&amp;").replace("<", "&lt;").replace(">", "&gt;")
