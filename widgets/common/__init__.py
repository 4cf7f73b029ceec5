"""Small Qt helpers the panels share: elided labels, text formatting, the selection, column fitting."""
