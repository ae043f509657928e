#!/usr/bin/env bash
# Build the standalone Quarry bundle for this platform into OUT_DIR:
#   Linux   OUT_DIR/quarry/quarry      (one folder; copy it anywhere)
#   macOS   OUT_DIR/Quarry.app and OUT_DIR/Quarry-VERSION.dmg (installer/macos/make-dmg.sh)
# Needs only python3 (3.10+, with venv, built with a shared libpython as Debian's, python.org's and
# Homebrew's are): Quarry and PyInstaller are installed from PyPI into a throwaway virtualenv.
# PYTHON=/path/to/python3 picks the interpreter. Windows: installer/windows/build.ps1.
set -euo pipefail

if [ $# -ne 1 ]; then
  echo "usage: $0 OUT_DIR" >&2
  exit 2
fi
start=$SECONDS
repo=$(cd "$(dirname "$0")/.." && pwd)
mkdir -p "$1"
out=$(cd "$1" && pwd)
work=$(mktemp -d "${TMPDIR:-/tmp}/quarry-build.XXXXXX")
trap 'rm -rf "$work"' EXIT

# Build Quarry from a copy of exactly what its package is made of: pip would otherwise build in the
# checkout, where a stale build/ folder can carry deleted modules into the bundle.
mkdir "$work/src"
cp -R "$repo/pyproject.toml" "$repo/README.md" "$repo/desktop_app" "$repo/resources" "$work/src/"
find "$work/src" -name __pycache__ -prune -exec rm -rf {} +

"${PYTHON:-python3}" -m venv "$work/venv"
"$work/venv/bin/python" -m pip install -q "$work/src" "pyinstaller>=6.10,<7"

# Qt plugins no desktop session loads (embedded-device platforms and input, the GTK theme) are deleted from
# the throwaway virtualenv before PyInstaller looks; otherwise they are bundled along with the system
# libraries they link (GTK's Pango, Cairo, ...), which would then shadow the user's own. The xcb, wayland,
# offscreen and input-method plugins stay.
qt=$("$work/venv/bin/python" -c 'import os, PySide6; print(os.path.join(os.path.dirname(PySide6.__file__), "Qt"))')
rm -rf "$qt/plugins/egldeviceintegrations" "$qt/plugins/generic" "$qt/plugins/platformthemes/libqgtk3.so" \
  "$qt/plugins/platforms/"lib{qeglfs,qlinuxfb,qminimalegl,qvnc,qvkkhrdisplay}.so

# From the work folder, so PyInstaller imports Quarry from the virtualenv and never from a checkout.
cd "$work"
rm -rf "$out/quarry" "$out/Quarry.app"
"$work/venv/bin/pyinstaller" --noconfirm --log-level WARN --distpath "$out" --workpath "$work/build" \
  "$repo/installer/quarry.spec"

if [ "$(uname)" = Darwin ]; then
  bundle="$out/Quarry.app"
  exe="$bundle/Contents/MacOS/quarry"
else
  bundle="$out/quarry"
  exe="$bundle/quarry"
fi
# Fail the build, not the first user, when the bundle cannot even start Python and parse arguments.
"$exe" --help >/dev/null
echo "built $exe ($(du -sh "$bundle" | cut -f1), $((SECONDS - start)) s)"
if [ "$(uname)" = Darwin ]; then
  "$repo/installer/macos/make-dmg.sh" "$out"
fi
