"""``python -m widgets`` is the same as ``onnx-studio``."""

import sys

from widgets.cli import main

sys.exit(main())
