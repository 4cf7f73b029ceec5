#!/bin/sh
# Pack a built PyInstaller bundle as the Linux release tarball:
#   packaging/linux/make-release.sh [BUNDLE_DIR] [OUT_DIR]     (`make release` runs it)
# -> OUT_DIR/onnx-studio-VERSION-linux-ARCH.tar.gz holding the bundle, the desktop entry, the
# MIME type, the icon and install.sh (menu entry + *.onnx + ~/.local/bin/onnx-studio).
set -eu
here=$(cd "$(dirname "$0")" && pwd)
bundle=${1:-dist/onnx-studio}
out=${2:-dist}
[ -x "$bundle/onnx-studio" ] || { echo "error: no bundle at $bundle (run make bundle)" >&2; exit 2; }
# the version the bundle itself reports: also a check that it starts at all
version=$(env -i PATH=/usr/bin:/bin HOME="${TMPDIR:-/tmp}" "$bundle/onnx-studio" --version | awk '{print $2}')
[ -n "$version" ] || { echo "error: $bundle/onnx-studio --version printed nothing" >&2; exit 1; }
name="onnx-studio-$version-linux-$(uname -m)"
stage=$(mktemp -d)
trap 'rm -rf "$stage"' EXIT
mkdir -p "$stage/$name/share"
cp -a "$bundle/." "$stage/$name/"
cp "$here/onnx-studio.desktop" "$here/onnx-studio-mime.xml" "$here/onnx-studio.svg" "$here/install.sh" \
   "$stage/$name/share/"
cat > "$stage/$name/install.sh" <<'SH'
#!/bin/sh
# Put `onnx-studio` on PATH (~/.local/bin) and add the menu entry and the .onnx file type for
# this user. `./install.sh --uninstall` removes them. Moving this folder? Run it again.
here=$(cd "$(dirname "$0")" && pwd)
if [ "${1:-}" = --uninstall ]; then exec sh "$here/share/install.sh" --uninstall; fi
exec sh "$here/share/install.sh" --exec "$here/onnx-studio" "$@"
SH
cat > "$stage/$name/README.txt" <<TXT
ONNX Studio $version for Linux ($(uname -m)): a desktop editor and visualizer for ONNX models.

  ./onnx-studio [MODEL.onnx]        open the window (on the bundled sample without a model)
  ./onnx-studio info MODEL.onnx     the command-line tools: info, check, convert, render,
                                    run, extract, diff, script (--help for each)
  ./install.sh                      menu entry, "open .onnx with ONNX Studio", and
                                    ~/.local/bin/onnx-studio (./install.sh --uninstall)

Nothing else to install: Python, Qt and onnxruntime are inside. The window needs a
display and the usual desktop libraries; when one is missing it says which (with the
Debian/Ubuntu package to install).
TXT
chmod 755 "$stage/$name/install.sh" "$stage/$name/share/install.sh"
mkdir -p "$out"
tar -C "$stage" -czf "$out/$name.tar.gz" "$name"
echo "$out/$name.tar.gz"
