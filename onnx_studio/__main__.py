"""``python -m onnx_studio`` is the same as ``onnx-studio``."""

import sys

from onnx_studio.cli import main

sys.exit(main())
