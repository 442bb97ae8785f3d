#!/usr/bin/env bash
# Put Nanobot Tray in the desktop's application menu for the current user:
# the .desktop entry goes to $XDG_DATA_HOME/applications and the icons to $XDG_DATA_HOME/icons/hicolor
# (XDG_DATA_HOME defaults to ~/.local/share). No root needed; run it again after moving the install.
#
# Usage: packaging/install-desktop-entry.sh [PATH-TO-nanobot-tray]
# Without an argument it uses `nanobot-tray` from PATH, else the checkout's .venv/bin/nanobot-tray
# (where the README's Quick start installs it). Menus only see PATH from the login session, so the
# entry gets the absolute path.
set -euo pipefail

here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
repo=$(dirname "$here")
data=${XDG_DATA_HOME:-$HOME/.local/share}

exe=${1:-$(command -v nanobot-tray || true)}
if [[ -z $exe && -x $repo/.venv/bin/nanobot-tray ]]; then
  exe=$repo/.venv/bin/nanobot-tray
fi
if [[ -z $exe ]]; then
  echo "error: nanobot-tray is not installed (not on PATH, no $repo/.venv/bin/nanobot-tray)." >&2
  echo "Install it first (README, Quick start) or pass the path to the nanobot-tray program." >&2
  exit 1
fi
if [[ ! -x $exe ]]; then
  echo "error: $exe is not an executable file." >&2
  exit 1
fi
exe=$(cd "$(dirname "$exe")" && pwd)/$(basename "$exe")
if [[ $exe == *[\"\`\$\\%]* ]]; then
  echo "error: the path $exe contains a character a desktop entry cannot hold (\" \` \$ \\ %); move the install." >&2
  exit 1
fi

mkdir -p "$data/applications"
sed "s|^Exec=nanobot-tray\$|Exec=\"$exe\"|" "$here/nanobot-tray.desktop" > "$data/applications/nanobot-tray.desktop"

icons=$repo/resources/icons
for dir in "$icons"/hicolor/*/apps; do
  size=$(basename "$(dirname "$dir")")
  mkdir -p "$data/icons/hicolor/$size/apps"
  cp "$dir"/nanobot-tray*.png "$data/icons/hicolor/$size/apps/"
done
mkdir -p "$data/icons/hicolor/scalable/apps"
cp "$icons"/nanobot-tray*.svg "$data/icons/hicolor/scalable/apps/"

echo "Installed $data/applications/nanobot-tray.desktop (runs $exe) and icons under $data/icons/hicolor."
