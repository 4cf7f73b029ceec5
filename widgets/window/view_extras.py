"""Installs the window features that make views land where the user looks (issue 15):
File > Export Image…, File > Export > Interactive Web Page…, View > Minimap and the copy-name context actions. Each lives in its own module; this only calls
their installers, so the main window needs one line. (Qt file dialogs wide enough for their
columns, :mod:`widgets.window.file_dialog_fit`, come after the first picture: see
``MainWindow._late_dock_steps``.)
"""

from __future__ import annotations


def install_view_extras(window) -> None:
    from widgets.actions.copy_names import install_copy_names
    from widgets.export.image import install_export_image
    from widgets.export.webpage import install_export_web_page
    from widgets.view.minimap_toggle import install_minimap_toggle

    install_export_image(window)
    install_export_web_page(window)
    install_minimap_toggle(window)
    install_copy_names(window)
