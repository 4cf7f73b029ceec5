#!/bin/sh
# Register ONNX Studio with the desktop for the current user: menu entry, icon, and the
# application/x-onnx MIME type (*.onnx opens in ONNX Studio).
#
#   install.sh                  the menu entry runs `onnx-studio` from PATH (a pip/pipx install)
#   install.sh --exec PROGRAM   the menu entry runs PROGRAM (an absolute path: the release
#                               tarball's bundle), and ~/.local/bin/onnx-studio links to it
#   install.sh --uninstall      remove what an install put there
#
# Works without xdg-utils (the MIME type is registered with update-mime-database when present;
# only "open .onnx with ONNX Studio by default" needs xdg-mime).
set -eu
here=$(cd "$(dirname "$0")" && pwd)
data=${XDG_DATA_HOME:-$HOME/.local/share}
bindir=$HOME/.local/bin
program=""
action=install
while [ $# -gt 0 ]; do
  case "$1" in
    --exec) [ $# -ge 2 ] || { echo "error: --exec needs a program path" >&2; exit 2; }; program=$2; shift 2 ;;
    --uninstall) action=uninstall; shift ;;
    *) echo "usage: $0 [--exec PROGRAM] [--uninstall]" >&2; exit 2 ;;
  esac
done

refresh() {
  command -v update-mime-database >/dev/null 2>&1 && update-mime-database "$data/mime" >/dev/null 2>&1 || true
  command -v update-desktop-database >/dev/null 2>&1 && update-desktop-database "$data/applications" 2>/dev/null || true
  command -v gtk-update-icon-cache >/dev/null 2>&1 && gtk-update-icon-cache -q "$data/icons/hicolor" 2>/dev/null || true
}

if [ "$action" = uninstall ]; then
  rm -f "$data/applications/onnx-studio.desktop" \
        "$data/icons/hicolor/scalable/apps/onnx-studio.svg" \
        "$data/icons/hicolor/scalable/mimetypes/application-x-onnx.svg" \
        "$data/mime/packages/onnx-studio-mime.xml"
  [ -L "$bindir/onnx-studio" ] && rm -f "$bindir/onnx-studio"
  refresh
  echo "ONNX Studio unregistered"
  exit 0
fi

case "$program" in
  ""|/*) ;;
  *) echo "error: --exec wants an absolute path, got '$program'" >&2; exit 2 ;;
esac
case "$program" in
  *[\\\"\`\$\|\&]*) echo "error: move ONNX Studio to a folder whose path has none of \\ \" \` \$ | & (a desktop entry cannot hold them simply)" >&2; exit 2 ;;
esac
if [ -n "$program" ] && [ ! -x "$program" ]; then
  echo "error: '$program' is not an executable program" >&2; exit 2
fi

mkdir -p "$data/applications" "$data/icons/hicolor/scalable/apps" "$data/icons/hicolor/scalable/mimetypes" \
         "$data/mime/packages"
if [ -n "$program" ]; then
  sed -e "s|^Exec=onnx-studio |Exec=\"$program\" |" -e "s|^TryExec=.*|TryExec=$program|" \
      "$here/onnx-studio.desktop" > "$data/applications/onnx-studio.desktop"
  chmod 644 "$data/applications/onnx-studio.desktop"
  mkdir -p "$bindir"
  if [ -e "$bindir/onnx-studio" ] && [ ! -L "$bindir/onnx-studio" ]; then
    echo "note: $bindir/onnx-studio exists and is not a link; left as it is" >&2
  else
    ln -sf "$program" "$bindir/onnx-studio"
  fi
else
  install -m 644 "$here/onnx-studio.desktop" "$data/applications/onnx-studio.desktop"
fi
install -m 644 "$here/onnx-studio.svg" "$data/icons/hicolor/scalable/apps/onnx-studio.svg"
install -m 644 "$here/onnx-studio.svg" "$data/icons/hicolor/scalable/mimetypes/application-x-onnx.svg"
install -m 644 "$here/onnx-studio-mime.xml" "$data/mime/packages/onnx-studio-mime.xml"
refresh
if command -v xdg-mime >/dev/null 2>&1; then
  xdg-mime default onnx-studio.desktop application/x-onnx || true
else
  echo "note: xdg-mime not found (xdg-utils): ONNX Studio is offered for .onnx files but not made the default" >&2
fi
echo "ONNX Studio registered for application/x-onnx (*.onnx)"
