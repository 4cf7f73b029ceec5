#!/bin/sh
# Register ONNX Studio with the desktop for the current user: menu entry, icon, and the
# application/x-onnx MIME type (*.onnx opens in ONNX Studio). Needs `onnx-studio` on PATH
# (pip install 'onnx-studio', or the PyInstaller bundle linked into ~/.local/bin).
set -eu
here=$(cd "$(dirname "$0")" && pwd)
data=${XDG_DATA_HOME:-$HOME/.local/share}
mkdir -p "$data/applications" "$data/icons/hicolor/scalable/apps" "$data/icons/hicolor/scalable/mimetypes"
install -m 644 "$here/onnx-studio.desktop" "$data/applications/onnx-studio.desktop"
install -m 644 "$here/onnx-studio.svg" "$data/icons/hicolor/scalable/apps/onnx-studio.svg"
install -m 644 "$here/onnx-studio.svg" "$data/icons/hicolor/scalable/mimetypes/application-x-onnx.svg"
xdg-mime install --novendor --mode user "$here/onnx-studio-mime.xml"
xdg-mime default onnx-studio.desktop application/x-onnx
update-desktop-database "$data/applications" 2>/dev/null || true
gtk-update-icon-cache -q "$data/icons/hicolor" 2>/dev/null || true
echo "ONNX Studio registered for application/x-onnx (*.onnx)"
