"""``python -m editor.cli`` is the same as ``onnx-studio``."""

import sys

from editor.cli import main

sys.exit(main())
