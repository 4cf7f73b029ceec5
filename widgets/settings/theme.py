"""Light and dark appearance, following the system unless the user picks one.

The system's choice comes from ``QStyleHints.colorScheme()`` (Qt >= 6.5) and changes are
followed live (``colorSchemeChanged``). We use the Fusion style everywhere so both themes
look the same on every platform, with a palette of our own for dark mode (the offscreen and
some X11 platforms give no dark palette at all).
"""

from __future__ import annotations

from PySide6.QtCore import QObject, Qt, Signal
from PySide6.QtGui import QColor, QGuiApplication, QPalette
from PySide6.QtWidgets import QApplication


def system_is_dark() -> bool:
    hints = QGuiApplication.styleHints()
    scheme = hints.colorScheme() if hasattr(hints, "colorScheme") else Qt.ColorScheme.Unknown
    if scheme == Qt.ColorScheme.Dark:
        return True
    if scheme == Qt.ColorScheme.Light:
        return False
    # Unknown: judge by the platform palette's window colour
    return QGuiApplication.palette().color(QPalette.ColorRole.Window).lightness() < 128


def dark_palette() -> QPalette:
    p = QPalette()
    window, base, text = QColor(37, 39, 43), QColor(28, 30, 33), QColor(222, 224, 228)
    accent = QColor(78, 140, 230)
    p.setColor(QPalette.ColorRole.Window, window)
    p.setColor(QPalette.ColorRole.WindowText, text)
    p.setColor(QPalette.ColorRole.Base, base)
    p.setColor(QPalette.ColorRole.AlternateBase, QColor(34, 36, 40))
    p.setColor(QPalette.ColorRole.ToolTipBase, QColor(50, 52, 57))
    p.setColor(QPalette.ColorRole.ToolTipText, text)
    p.setColor(QPalette.ColorRole.PlaceholderText, QColor(130, 134, 140))
    p.setColor(QPalette.ColorRole.Text, text)
    p.setColor(QPalette.ColorRole.Button, QColor(48, 50, 55))
    p.setColor(QPalette.ColorRole.ButtonText, text)
    p.setColor(QPalette.ColorRole.BrightText, QColor(255, 90, 90))
    p.setColor(QPalette.ColorRole.Light, QColor(70, 72, 78))
    p.setColor(QPalette.ColorRole.Midlight, QColor(58, 60, 66))
    p.setColor(QPalette.ColorRole.Mid, QColor(44, 46, 50))
    p.setColor(QPalette.ColorRole.Dark, QColor(22, 23, 26))
    p.setColor(QPalette.ColorRole.Shadow, QColor(0, 0, 0))
    p.setColor(QPalette.ColorRole.Highlight, accent)
    p.setColor(QPalette.ColorRole.HighlightedText, QColor(255, 255, 255))
    p.setColor(QPalette.ColorRole.Link, QColor(110, 168, 255))
    p.setColor(QPalette.ColorRole.LinkVisited, QColor(170, 140, 255))
    for role in (QPalette.ColorRole.Text, QPalette.ColorRole.WindowText, QPalette.ColorRole.ButtonText):
        p.setColor(QPalette.ColorGroup.Disabled, role, QColor(120, 123, 128))
    return p


def light_palette() -> QPalette:
    p = QPalette()
    p.setColor(QPalette.ColorRole.Window, QColor(243, 244, 246))
    p.setColor(QPalette.ColorRole.WindowText, QColor(30, 32, 36))
    p.setColor(QPalette.ColorRole.Base, QColor(255, 255, 255))
    p.setColor(QPalette.ColorRole.AlternateBase, QColor(247, 248, 250))
    p.setColor(QPalette.ColorRole.Text, QColor(30, 32, 36))
    p.setColor(QPalette.ColorRole.Button, QColor(236, 237, 240))
    p.setColor(QPalette.ColorRole.ButtonText, QColor(30, 32, 36))
    p.setColor(QPalette.ColorRole.Highlight, QColor(47, 111, 208))
    p.setColor(QPalette.ColorRole.HighlightedText, QColor(255, 255, 255))
    p.setColor(QPalette.ColorRole.ToolTipBase, QColor(255, 255, 240))
    p.setColor(QPalette.ColorRole.ToolTipText, QColor(30, 32, 36))
    p.setColor(QPalette.ColorRole.PlaceholderText, QColor(140, 144, 150))
    p.setColor(QPalette.ColorRole.Link, QColor(30, 100, 200))
    return p


STYLE_SHEET = """
QDockWidget::title { padding: 4px 6px; font-weight: 600; }
QTabBar::tab { padding: 5px 12px; }
QStatusBar QLabel { padding: 0 6px; }
QTreeView, QTableView, QListView, QTextBrowser { border: none; }
"""


class ThemeManager(QObject):
    """Applies the chosen theme and re-applies it when the system switches."""

    themeChanged = Signal(bool)  # dark?

    def __init__(self, app: QApplication, choice: str = "system") -> None:
        super().__init__(app)
        self._app = app
        self._choice = choice
        self._dark = False
        hints = QGuiApplication.styleHints()
        if hasattr(hints, "colorSchemeChanged"):
            hints.colorSchemeChanged.connect(self._on_system_changed)
        # NOTE: style, palette and style sheet are set only when they differ: each set re-polishes
        # every widget of the application (2.6 s for one more window in a long-lived process)
        # (the style is marked on the application: under a style sheet, app.style() is Qt's
        # style-sheet wrapper, which has no name)
        if getattr(app, "_studio_style", None) != "Fusion":
            app.setStyle("Fusion")
            app._studio_style = "Fusion"
        self.apply()

    @property
    def choice(self) -> str:
        return self._choice

    @property
    def dark(self) -> bool:
        return self._dark

    def set_choice(self, choice: str) -> None:
        self._choice = choice
        self.apply()

    def apply(self) -> None:
        dark = system_is_dark() if self._choice == "system" else self._choice == "dark"
        changed = dark != self._dark
        self._dark = dark
        palette = dark_palette() if dark else light_palette()
        if self._app.palette() != palette:
            self._app.setPalette(palette)
        if self._app.styleSheet() != STYLE_SHEET:
            self._app.setStyleSheet(STYLE_SHEET)
        if changed:
            self.themeChanged.emit(dark)

    def _on_system_changed(self, *_args) -> None:
        if self._choice == "system":
            self.apply()
