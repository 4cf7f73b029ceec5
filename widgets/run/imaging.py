"""Images in and out of tensors: read a picture file into a model input, and show a tensor
as a picture.

``image_layout(shape)`` says whether an input looks like an image batch (``N,C,H,W`` or
``N,H,W,C`` with 1, 3 or 4 channels, or ``C,H,W`` / ``H,W,C``). ``image_to_tensor`` reads a
file with ``QImage`` (every format the Qt build reads: PNG, JPEG, BMP ...), resizes it,
converts it with numpy to the layout, applies ``(x * scale - mean) / std`` per channel and
casts to the input's dtype. ``tensor_to_qimage`` goes the other way for the result views.

NOTE: ``QImage`` rows are padded to 4 bytes (``bytesPerLine``), so the pixel buffer is read
with that stride and cropped, never reshaped directly.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
from PySide6.QtCore import Qt
from PySide6.QtGui import QImage

from editor.errors import RuntimeBackendError

#: mean/std presets offered by the input editor (values on the 0..1 scale)
NORMALISATIONS: dict[str, tuple[tuple[float, ...], tuple[float, ...]]] = {
    "none": ((0.0, 0.0, 0.0), (1.0, 1.0, 1.0)),
    "imagenet": ((0.485, 0.456, 0.406), (0.229, 0.224, 0.225)),
    "[-1, 1]": ((0.5, 0.5, 0.5), (0.5, 0.5, 0.5)),
}


def image_layout(shape: tuple | None) -> str | None:
    """'NCHW', 'NHWC', 'CHW', 'HWC' or None for a declared shape (ints, names or None)."""
    if shape is None:
        return None

    def channels(d) -> bool:
        return isinstance(d, int) and d in (1, 3, 4)

    def spatial(d) -> bool:
        return not isinstance(d, int) or d > 4 or d < 0

    if len(shape) == 4:
        if channels(shape[1]) and spatial(shape[2]) and spatial(shape[3]):
            return "NCHW"
        if channels(shape[3]) and spatial(shape[1]) and spatial(shape[2]):
            return "NHWC"
    if len(shape) == 3:
        if channels(shape[0]) and spatial(shape[1]) and spatial(shape[2]):
            return "CHW"
        if channels(shape[2]) and spatial(shape[0]) and spatial(shape[1]):
            return "HWC"
    return None


@dataclass(frozen=True)
class ImageOptions:
    """How a picture becomes a tensor."""

    layout: str = "NCHW"  # 'NCHW', 'NHWC', 'CHW' or 'HWC'
    channels: int = 3
    height: int = 224
    width: int = 224
    #: multiply the 0..255 pixels by this first (1/255 gives 0..1)
    scale: float = 1.0 / 255.0
    mean: tuple[float, ...] = (0.0, 0.0, 0.0)
    std: tuple[float, ...] = (1.0, 1.0, 1.0)
    bgr: bool = False
    batch: int = 1


def read_image(path: str) -> QImage:
    image = QImage(path)
    if image.isNull():
        raise RuntimeBackendError(f"cannot read {path!r} as an image")
    return image


def qimage_to_array(image: QImage, channels: int = 3) -> np.ndarray:
    """H x W x C uint8 pixels (C = 1 grey, 3 RGB, 4 RGBA)."""
    fmt = {1: QImage.Format.Format_Grayscale8, 3: QImage.Format.Format_RGB888, 4: QImage.Format.Format_RGBA8888}[channels]
    img = image.convertToFormat(fmt)
    h, w, stride = img.height(), img.width(), img.bytesPerLine()
    buf = np.frombuffer(img.constBits(), dtype=np.uint8, count=stride * h).reshape(h, stride)
    return buf[:, : w * channels].reshape(h, w, channels).copy()


def image_to_tensor(path: str, options: ImageOptions, dtype: np.dtype) -> np.ndarray:
    """Read ``path`` into a tensor as ``options`` say, cast to ``dtype``."""
    image = read_image(path)
    if image.width() != options.width or image.height() != options.height:
        image = image.scaled(options.width, options.height, Qt.AspectRatioMode.IgnoreAspectRatio,
                             Qt.TransformationMode.SmoothTransformation)
    pixels = qimage_to_array(image, options.channels)  # H, W, C
    if options.bgr and options.channels >= 3:
        pixels = pixels[:, :, [2, 1, 0] + list(range(3, options.channels))]
    dtype = np.dtype(dtype)
    if dtype.kind in "iub" and options.scale == 1.0 and not any(options.mean) and all(s == 1 for s in options.std):
        data = pixels.astype(dtype)  # raw 0..255 for integer inputs
    else:
        c = options.channels
        mean = np.resize(np.asarray(options.mean, np.float32), c)
        std = np.resize(np.asarray(options.std, np.float32), c)
        if np.any(std == 0):
            raise RuntimeBackendError(f"image normalisation: std {list(options.std)} has a zero")
        data = ((pixels.astype(np.float32) * np.float32(options.scale) - mean) / std).astype(dtype)
    if options.layout in ("NCHW", "CHW"):
        data = np.transpose(data, (2, 0, 1))
    if options.layout in ("NCHW", "NHWC"):
        data = np.broadcast_to(data[None], (max(1, options.batch),) + data.shape).copy()
    return np.ascontiguousarray(data)


def tensor_image_planes(shape: tuple[int, ...]) -> str | None:
    """How a result tensor can be shown as a picture: 'NCHW' (N,C,H,W with any C), 'HWC'
    (H,W,3|4), 'CHW' (3,H,W), 'HW' (H,W) or None."""
    if len(shape) == 4:
        if shape[3] in (3, 4) and shape[1] > 4 and shape[2] > 4:
            return "NHWC"
        if shape[2] > 1 and shape[3] > 1:
            return "NCHW"
    if len(shape) == 3:
        if shape[2] in (3, 4) and shape[0] > 4 and shape[1] > 4:
            return "HWC"
        if shape[0] in (1, 3, 4) and shape[1] > 1 and shape[2] > 1:
            return "CHW"
    if len(shape) == 2 and shape[0] > 1 and shape[1] > 1:
        return "HW"
    return None


#: the longest side of a picture of a tensor, in pixels (bigger planes are subsampled)
MAX_SIDE = 2048


def to_display_rgb(array: np.ndarray, layout: str, *, batch: int = 0, channel: int | None = None,
                   max_side: int = MAX_SIDE) -> np.ndarray:
    """H x W x 3 uint8 for a tensor of layout ``layout`` (see :func:`tensor_image_planes`),
    at most ``max_side`` pixels on its longer side (every k-th pixel of a bigger plane).

    ``channel`` picks one channel shown in grey (the default for C not in 3, 4); values are
    stretched min..max over what is shown, NaN/Inf shown black.
    """
    a = np.asarray(array)
    if layout == "NCHW":
        a = np.moveaxis(a[batch], 0, -1)
    elif layout == "NHWC":
        a = a[batch]
    elif layout == "CHW":
        a = np.moveaxis(a, 0, -1)
    elif layout == "HW":
        a = a[:, :, None]
    # a picture no bigger than a screen: every k-th pixel of a huge plane (a 1 GB output
    # seen as 262,144 x 1,024 pixels), so showing it costs what a screenful costs
    step = max(1, -(-max(a.shape[0], a.shape[1]) // max_side))
    if step > 1:
        a = a[::step, ::step]
    c = a.shape[-1]
    if channel is not None or c not in (3, 4):
        a = a[:, :, [channel or 0]]
    elif c == 4:
        a = a[:, :, :3]
    f = a.astype(np.float64) if a.dtype.kind != "V" else a.astype(np.float32).astype(np.float64)
    finite = np.isfinite(f)
    f = np.where(finite, f, 0.0)
    lo, hi = (float(f[finite].min()), float(f[finite].max())) if finite.any() else (0.0, 1.0)
    if hi <= lo:  # a flat picture: judge it against 0 (all zeros black, anything else bright)
        lo, hi = min(lo, 0.0), max(hi, 0.0)
        if hi <= lo:
            hi = lo + 1.0
    span = hi - lo
    grey = np.clip((f - lo) / span * 255.0, 0, 255).astype(np.uint8)
    if grey.shape[-1] == 1:
        grey = np.repeat(grey, 3, axis=-1)
    return np.ascontiguousarray(grey)


def rgb_to_qimage(rgb: np.ndarray) -> QImage:
    """A QImage owning a copy of an H x W x 3 uint8 array."""
    h, w, _ = rgb.shape
    data = np.ascontiguousarray(rgb, dtype=np.uint8)
    image = QImage(data.data, w, h, 3 * w, QImage.Format.Format_RGB888)
    return image.copy()  # detach from the numpy buffer
