"""Files shipped inside the package: the bundled sample model, the app icon, icons.

Use :func:`sample_model_path` / :func:`resource_path` rather than building paths by hand,
so the files are found in a wheel, an editable checkout and a PyInstaller bundle alike.
"""

from __future__ import annotations

from importlib import resources as _resources
from pathlib import Path

SAMPLE_MODEL = "magika_standard_v3_3.onnx"
APP_ICON = "onnx-studio.svg"


def resource_path(name: str) -> Path:
    """Filesystem path of a shipped resource file (``name`` relative to this package)."""
    ref = _resources.files(__name__).joinpath(name)
    # NOTE: every supported install (wheel, editable, PyInstaller with the folder added as
    # data) keeps the package on disk, so the Traversable is a real path.
    return Path(str(ref))


def sample_model_path() -> Path:
    """The bundled sample model: Google's Magika v3.3 file-type classifier (real weights,
    name scopes, layer norms and residual adds; see resources/README.md)."""
    return resource_path(SAMPLE_MODEL)


def app_icon_path() -> Path:
    return resource_path(APP_ICON)
