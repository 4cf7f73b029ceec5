"""The window frame: the application, the main window's wiring, tabs, loading and start-up."""
