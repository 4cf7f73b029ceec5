"""What the boxes and edges show: View > Boxes Show, the minimap toggle, shape labels."""
