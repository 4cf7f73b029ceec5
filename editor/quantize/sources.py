"""From what the user names (a path, a count of random sets, sets in memory) to
:class:`~editor.quantize.calibration.CalibrationData`: the one decision the command line
and the window's dialog share.

A path is a folder of pictures when it holds pictures and no ``.npz`` set; otherwise (a
folder of ``.npz`` sets or of ``run --save`` folders, or one ``.npz``) input sets. Nothing
named: ``random`` role-aware random sets (8 by default), a smoke test.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

import onnx

from editor.errors import CommandError
from editor.quantize.calibration import CalibrationData, feeds_calibration, npz_calibration, random_calibration
from editor.quantize.images import IMAGE_SUFFIXES, ImageParams, image_calibration

__all__ = ["is_picture_folder", "load_calibration"]


def is_picture_folder(path: Path) -> bool:
    return path.is_dir() and any(f.suffix.lower() in IMAGE_SUFFIXES for f in path.iterdir()) and \
        not any(path.glob("*.npz")) and not any(path.glob("*/inputs.npz"))


def load_calibration(model: onnx.ModelProto, *, path: str | Path | None = None, random: int | None = None,
                     sets: Sequence[Mapping[str, Any]] | None = None, source: str = "given input sets",
                     held_back: int | None = None, seed: int = 0, dims: Mapping[str, int] | None = None,
                     image: ImageParams = ImageParams(), limit: int | None = None) -> CalibrationData:
    """Calibration data from one of ``path``, ``sets`` or ``random`` (module docstring)."""
    named = [k for k, v in (("a path", path), ("input sets", sets), ("random sets", random)) if v is not None]
    if len(named) > 1:
        raise CommandError(f"give one source of calibration data, not {' and '.join(named)}")
    if sets is not None:
        return feeds_calibration(model, sets, source, held_back=held_back, dims=dims)
    if path is None:
        return random_calibration(model, 8 if random is None else random,
                                  held_back=4 if held_back is None else held_back, seed=seed, dims=dims)
    p = Path(path)
    if is_picture_folder(p):
        return image_calibration(model, p, image, held_back=held_back, dims=dims, limit=limit)
    return npz_calibration(model, p, held_back=held_back, dims=dims, limit=limit)
