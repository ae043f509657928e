#!/usr/bin/env bash
# Wrap OUT_DIR/Quarry.app (built by installer/build.sh on macOS) in OUT_DIR/Quarry-VERSION.dmg: a compressed
# disk image holding the app and a link to /Applications to drag it onto. macOS only (hdiutil).
set -euo pipefail

if [ $# -ne 1 ] || [ ! -d "$1/Quarry.app" ]; then
  echo "usage: $0 OUT_DIR   (OUT_DIR holds Quarry.app from installer/build.sh)" >&2
  exit 2
fi
out=$(cd "$1" && pwd)
version=$(/usr/libexec/PlistBuddy -c "Print :CFBundleShortVersionString" "$out/Quarry.app/Contents/Info.plist")
stage=$(mktemp -d "${TMPDIR:-/tmp}/quarry-dmg.XXXXXX")
trap 'rm -rf "$stage"' EXIT

# ditto keeps the bundle's symlinks, permissions and code signatures as they are.
ditto "$out/Quarry.app" "$stage/Quarry.app"
ln -s /Applications "$stage/Applications"
dmg="$out/Quarry-$version.dmg"
hdiutil create -quiet -volname "Quarry $version" -srcfolder "$stage" -fs HFS+ -format UDZO -ov "$dmg"
echo "built $dmg ($(du -sh "$dmg" | cut -f1))"
