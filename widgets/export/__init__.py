"""Pictures out of the window: ``onnx-studio render`` and File > Export Image."""
