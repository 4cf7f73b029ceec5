"""Entry script for the PyInstaller bundle: the same ``onnx-studio`` command line."""

import sys

from widgets.cli import main

if __name__ == "__main__":
    sys.exit(main())
