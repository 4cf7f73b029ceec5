"""Dockable panels around the canvas; each observes a tab's Document and SelectionModel."""
