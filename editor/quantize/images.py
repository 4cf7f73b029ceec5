"""Calibration sets from a folder of pictures: each image resized and normalised into the
model's image input, the other inputs made by the input planner.

Normalisation is ``(pixel * scale - mean) / std`` per channel, pixels in 0..255. Each
parameter comes from, in order: what the user states (:class:`ImageParams`), the model's
metadata (``Image.NominalPixelRange`` and ``Image.BitmapPixelFormat`` as Windows ML and the
ONNX model zoo write them; ``mean`` / ``std`` lists as many exporters write them), else a
default that the notes name as a guess (RGB scaled to [0, 1]). The size is the input's own
(fixed dims, else the input planner's choice: the model's ``imgsz`` metadata, else 224),
unless stated; the layout (NCHW or NHWC) follows the dim that holds 1 or 3 channels.
Pictures are decoded with Pillow (a dependency already) and resized bilinearly.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path

import numpy as np
import onnx

from editor.errors import CommandError
from editor.quantize.calibration import CalibrationData, feeds_calibration

__all__ = ["IMAGE_SUFFIXES", "ImageParams", "ResolvedImage", "image_calibration", "resolve_image"]

IMAGE_SUFFIXES = (".jpg", ".jpeg", ".png", ".bmp", ".webp", ".gif", ".tif", ".tiff", ".ppm")
_RANGES = {  # Image.NominalPixelRange -> (scale, mean, std)
    "nominalrange_0_255": (1.0, 0.0, 1.0),
    "nominalrange_16_235": (1.0, 0.0, 1.0),
    "normalized_0_1": (1 / 255, 0.0, 1.0),
    "normalized_1_1": (1 / 255, 0.5, 0.5),
}


@dataclass(frozen=True)
class ImageParams:
    """What the user states about the pictures' preprocessing (None: metadata, else default)."""

    input: str | None = None
    #: (height, width)
    size: tuple[int, int] | None = None
    scale: float | None = None
    mean: tuple[float, ...] | None = None
    std: tuple[float, ...] | None = None
    bgr: bool | None = None
    #: 'NCHW' or 'NHWC'
    layout: str | None = None


@dataclass(frozen=True)
class ResolvedImage:
    """The preprocessing to apply, with where each choice came from."""

    input: str
    height: int
    width: int
    channels: int
    layout: str
    scale: float
    mean: tuple[float, ...]
    std: tuple[float, ...]
    bgr: bool
    dtype: np.dtype
    #: one phrase per choice: "mean/std from the model's metadata", "scale 1/255 (a guess)"
    how: tuple[str, ...]

    def describe(self) -> str:
        mean = ",".join(f"{m:g}" for m in self.mean)
        std = ",".join(f"{s:g}" for s in self.std)
        return (f"{self.width}x{self.height} {'BGR' if self.bgr else 'RGB' if self.channels == 3 else 'gray'} "
                f"{self.layout}, x = (pixel * {self.scale:.6g} - [{mean}]) / [{std}]")

    def load(self, path: Path) -> np.ndarray:
        """One picture as a batch of one, ready to feed."""
        from PIL import Image

        try:
            with Image.open(path) as img:
                img = img.convert("L" if self.channels == 1 else "RGB")
                img = img.resize((self.width, self.height), Image.Resampling.BILINEAR)
                arr = np.asarray(img, dtype=np.float32)
        except Exception as exc:  # noqa: BLE001 - Pillow's errors vary by format
            raise CommandError(f"cannot read image {str(path)!r}: {exc}") from exc
        if arr.ndim == 2:
            arr = arr[:, :, None]
        if self.bgr:
            arr = arr[:, :, ::-1]
        arr = (arr * self.scale - np.asarray(self.mean, np.float32)) / np.asarray(self.std, np.float32)
        if self.layout == "NCHW":
            arr = arr.transpose(2, 0, 1)
        return np.ascontiguousarray(arr[None]).astype(self.dtype)


def _numbers(text: str) -> tuple[float, ...]:
    return tuple(float(x) for x in re.findall(r"[-+]?\d*\.?\d+(?:[eE][-+]?\d+)?", text))


def _metadata(model: onnx.ModelProto) -> dict[str, str]:
    return {p.key.lower(): p.value for p in model.metadata_props}


def _per_channel(values: tuple[float, ...], channels: int, what: str) -> tuple[float, ...]:
    if len(values) == 1:
        return values * channels
    if len(values) != channels:
        raise CommandError(f"{what} has {len(values)} value(s); the image input has {channels} channel(s)")
    return values


def resolve_image(model: onnx.ModelProto, params: ImageParams = ImageParams(),
                  dims: Mapping[str, int] | None = None) -> ResolvedImage:
    """The preprocessing for ``model``'s image input (module docstring); refuses a model
    with no 4-D float input, or parameters that do not fit it."""
    from editor.runtime.input_plan import plan_inputs
    from editor.runtime.inputs import input_specs

    specs = [s for s in input_specs(model) if s.kind == "tensor"]
    images = [s for s in specs if s.shape is not None and len(s.shape) == 4 and s.dtype.kind == "f"]
    if params.input is not None:
        images = [s for s in specs if s.name == params.input]
        if not images:
            raise CommandError(f"the model has no input {params.input!r} (inputs: {', '.join(s.name for s in specs)})")
    if not images:
        raise CommandError("the model has no 4-D float input to feed pictures to; give .npz input sets instead")
    spec = images[0]
    shape = plan_inputs(model, dims=dims, seed=0).feeds[spec.name].shape
    how: list[str] = []
    layout = params.layout
    if layout is None:
        layout = "NHWC" if shape[3] in (1, 3) and shape[1] not in (1, 3) else "NCHW"
    if layout not in ("NCHW", "NHWC"):
        raise CommandError(f"layout {layout!r}: choose NCHW or NHWC")
    channels = int(shape[1] if layout == "NCHW" else shape[3])
    if channels not in (1, 3):
        raise CommandError(f"input {spec.name!r} {list(shape)} has {channels} channels in {layout}: "
                           "pictures have 1 or 3 (state --layout)")
    height, width = (int(shape[2]), int(shape[3])) if layout == "NCHW" else (int(shape[1]), int(shape[2]))
    if params.size is not None:
        height, width = params.size
        how.append(f"size {width}x{height} as stated")
    else:
        how.append(f"size {width}x{height} from the input's shape")
    meta = _metadata(model)
    scale, mean, std = params.scale, params.mean, params.std
    rng = _RANGES.get(meta.get("image.nominalpixelrange", "").lower())
    if rng is not None and (scale is None or mean is None or std is None):
        how.append(f"pixel range {meta['image.nominalpixelrange']} from the model's metadata")
        scale = rng[0] if scale is None else scale
        mean = (rng[1],) if mean is None else mean
        std = (rng[2],) if std is None else std
    for key, current in (("mean", mean), ("std", std)):
        found = next((meta[k] for k in (key, f"norm_{key}", f"image_{key}", f"{key}_values") if k in meta), None)
        if current is None and found is not None and _numbers(found):
            how.append(f"{key} from the model's metadata")
            if key == "mean":
                mean = _numbers(found)
            else:
                std = _numbers(found)
    guessed = [k for k, v in (("scale", scale), ("mean", mean), ("std", std)) if v is None]
    if guessed:
        how.append(f"{'/'.join(guessed)} not stated: pixels scaled to [0, 1] (a guess: give --mean/--std/--scale)")
    if scale is None:  # mean/std given as 0..1 fractions (ImageNet's 0.485 ...) go with 1/255
        big = max((abs(x) for x in (mean or ()) + (std or ())), default=0.0)
        scale = 1.0 if big > 1.5 else 1 / 255
    mean = _per_channel(tuple(mean or (0.0,)), channels, "mean")
    std = _per_channel(tuple(std or (1.0,)), channels, "std")
    if any(s == 0 for s in std):
        raise CommandError("std holds a 0: every channel needs a non-zero std")
    bgr = params.bgr
    if bgr is None:
        fmt = meta.get("image.bitmappixelformat", "").lower()
        bgr = fmt.startswith("bgr")
        if fmt:
            how.append(f"{'BGR' if bgr else 'RGB'} from the model's metadata")
    return ResolvedImage(spec.name, height, width, channels, layout, float(scale), mean, std, bool(bgr) and channels == 3,
                         spec.dtype, tuple(how))


def image_calibration(model: onnx.ModelProto, folder: str | Path, params: ImageParams = ImageParams(), *,
                      held_back: int | None = None, dims: Mapping[str, int] | None = None,
                      limit: int | None = None) -> CalibrationData:
    """One input set per picture in ``folder`` (name order, at most ``limit``)."""
    p = Path(folder)
    if not p.is_dir():
        raise CommandError(f"image folder not found: {str(p)!r}")
    files = sorted(f for f in p.iterdir() if f.suffix.lower() in IMAGE_SUFFIXES and f.is_file())
    if not files:
        raise CommandError(f"no picture in {str(p)!r} ({', '.join(IMAGE_SUFFIXES)})")
    files = files[:limit] if limit else files
    image = resolve_image(model, params, dims)
    sets = [{image.input: image.load(f)} for f in files]
    data = feeds_calibration(model, sets, f"{len(files)} picture(s) from {p} into {image.input!r}",
                             held_back=held_back, dims=dims)
    data.notes[:0] = [f"pictures: {image.describe()}", *image.how]
    return data
