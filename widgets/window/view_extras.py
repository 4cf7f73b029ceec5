"""Installs the window features that make views land where the user looks (issue 15):
File > Export Image…, File > Export > Interactive Web Page…, View > Minimap, the copy-name context actions, and Qt file dialogs wide enough for their columns. Each lives in its own module; this only calls
their installers, so the main window needs one line.
"""

from __future__ import annotations


def install_view_extras(window) -> None:
    from widgets.actions.copy_names import install_copy_names
    from widgets.export.image import install_export_image
    from widgets.export.webpage import install_export_web_page
    from widgets.window.file_dialog_fit import install_file_dialog_fit
    from widgets.view.minimap_toggle import install_minimap_toggle

    install_export_image(window)
    install_export_web_page(window)
    install_minimap_toggle(window)
    install_copy_names(window)
    install_file_dialog_fit()
