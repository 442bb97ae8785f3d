#!/usr/bin/env bash
# Build Nanobot Tray from the committed tree (git archive HEAD: a clean checkout, whatever the work tree holds):
#   dist/nanobot-tray/                         PyInstaller one-folder app (resources and built-in skills inside)
#   dist/nanobot-tray_VERSION_ARCH.deb         that folder under /opt/nanobot-tray, /usr/bin/nanobot-tray,
#                                              the menu entry and hicolor icons; Depends from ldd over the bundle
# Usage: packaging/build.sh [OUT_DIR]           (default: dist/ in the checkout)
# BUILD_VENV=/path/to/venv reuses a virtualenv that already has the app's dependencies and pyinstaller
# (faster; the app itself is taken from the archive); without it a fresh venv is made and filled from PyPI.
# Linux only (dpkg-deb); packaging/README.md says how to build on Windows and macOS.
set -euo pipefail

repo=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
out=$(mkdir -p "${1:-$repo/dist}" && cd "${1:-$repo/dist}" && pwd)
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT

src=$work/src
mkdir -p "$src"
git -C "$repo" archive --format=tar HEAD | tar -x -C "$src"

version=$(python3 -c 'import sys, tomllib; print(tomllib.load(open(sys.argv[1], "rb"))["project"]["version"])' \
          "$src/pyproject.toml")
code_version=$(sed -n 's/^__version__ = "\(.*\)"$/\1/p' "$src/desktop/__init__.py")
if [[ $version != "$code_version" ]]; then
  echo "error: pyproject.toml says $version but desktop/__init__.py says $code_version; make them agree" >&2
  exit 1
fi

if [[ -n ${BUILD_VENV:-} ]]; then
  venv=$BUILD_VENV
else
  venv=$work/venv
  python3 -m venv "$venv"
  "$venv/bin/pip" install --quiet "$src" "pyinstaller>=6.10,<7"
fi

# What goes in and why: packaging/nanobot-tray.spec and packaging/README.md ("What the spec holds").
PYTHONPATH="$src" "$venv/bin/pyinstaller" --noconfirm --clean --log-level WARN \
  --distpath "$work/dist" --workpath "$work/build" "$src/packaging/nanobot-tray.spec"
app=$work/dist/nanobot-tray
"$app/nanobot-tray" --version

arch=$(dpkg --print-architecture)
root=$work/deb
mkdir -p "$root/opt" "$root/usr/bin" "$root/DEBIAN"
cp -a "$app" "$root/opt/nanobot-tray"
ln -s /opt/nanobot-tray/nanobot-tray "$root/usr/bin/nanobot-tray"
"$app/nanobot-tray" install-desktop-entry --data-dir "$root/usr/share" --exec nanobot-tray >/dev/null
# Depends: what the bundle does not carry. PyInstaller copies most shared libraries from the build machine
# (Qt's xcb helpers, fontconfig, glib, dbus, gtk for Qt's gtk3 theme) but leaves out glibc, libxcb, libGL,
# libEGL and libwayland, which must match the user's system; ldd names them and dpkg -S their packages.
# From apt-packages.txt come the programs and data the app uses at run time (bubblewrap, socat, fonts; not
# python3-venv, which is for pip installs), and PortAudio, which sounddevice opens by name when dictation starts
# (so ldd never sees it); fontconfig-config gives the bundled fontconfig its /etc/fonts.
package_of() {  # a library path -> its Debian package (dpkg knows /lib and /usr/lib apart)
  dpkg -S "$1" 2>/dev/null || dpkg -S "${1#/usr}" 2>/dev/null || dpkg -S "/usr$1" 2>/dev/null || true
}
find "$app" -type f \( -name '*.so*' -o -name nanobot-tray \) -print0 \
  | xargs -0 env LD_LIBRARY_PATH="$app/_internal" ldd 2>/dev/null \
  | awk -v app="$app" '$2 == "=>" && $3 ~ /^\// && index($3, app) != 1 {print $3}' | sort -u \
  | while read -r lib; do package_of "$lib"; done | cut -d: -f1 | sort -u > "$work/libraries"
glibc=$(dpkg-query -W -f='${Version}' libc6 | sed 's/-.*//')
depends=$({ sed "s/^libc6\$/libc6 (>= $glibc)/" "$work/libraries"
            grep -v -e '^\s*#' -e '^\s*$' -e '^lib' -e '^python3-venv$' "$src/packaging/apt-packages.txt"
            grep -x libportaudio2 "$src/packaging/apt-packages.txt"
            echo fontconfig-config; } | paste -sd, | sed 's/,/, /g')
cat > "$root/DEBIAN/control" <<CONTROL
Package: nanobot-tray
Version: $version
Architecture: $arch
Maintainer: Nanobot Tray developers <nanobot-tray@localhost>
Installed-Size: $(du -sk "$root/opt" "$root/usr" | awk '{s += $1} END {print s}')
Depends: $depends
Section: utils
Priority: optional
Description: personal AI assistant in the system tray
 One agent loop with tools, Markdown skills, file-based memory, reminders and
 MCP servers, reaching any model through litellm; keys in the OS keyring.
CONTROL
find "$root" -type d -exec chmod 0755 {} +
deb=$out/nanobot-tray_${version}_${arch}.deb
dpkg-deb --root-owner-group -Zxz --build "$root" "$deb" >/dev/null

rm -rf "$out/nanobot-tray"
mv "$app" "$out/nanobot-tray"
echo "bundle: $out/nanobot-tray ($(du -sh "$out/nanobot-tray" | cut -f1))"
echo "deb:    $deb ($(du -h "$deb" | cut -f1))"
