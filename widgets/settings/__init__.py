"""Preferences kept between runs, the Settings dialog, and the light/dark theme."""
