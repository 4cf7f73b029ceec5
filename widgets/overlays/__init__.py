"""What the canvas draws over its boxes: the shared overlay layer and per-node data."""
