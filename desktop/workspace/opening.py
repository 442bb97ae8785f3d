"""What the app hands to the desktop's opener (xdg-open) from the workspace: the changes panel's Open
(desktop/checkpoints/made.py), and a link clicked in a chat.

The opener runs outside the sandbox, and it runs rather than shows a launcher (.desktop), a script or a program,
which a sandboxed command can leave in the workspace. So a workspace file is opened only when nothing about it
says it could run: its name, its first bytes, its executable bit, or being a link (what the opener would resolve
is not what was looked at). A chat's links are the model's words, and the model reads what web pages, MCP
servers and workspace files say: a click opens web and mail links, a file link only to such a file in the
workspace, and says why for anything else (another program's handler, like ssh: or vscode:, a file elsewhere).
Blocking functions: run them in a thread."""

from __future__ import annotations

import os
import stat
from pathlib import Path, PurePosixPath
from urllib.parse import unquote, urlsplit

from desktop.kernel.paths import inside
from desktop.workspace import access

SNIFF = 8192  # first bytes looked at
OPENED_SCHEMES = frozenset({"http", "https", "mailto"})
# What a desktop opener may run rather than show, by name: launchers, scripts, programs, installers.
RUNS: dict[str, frozenset[str]] = {
    "a desktop launcher": frozenset({".desktop", ".directory", ".flatpakref", ".jnlp"}),
    "a script": frozenset({".sh", ".bash", ".zsh", ".fish", ".csh", ".ksh", ".command", ".py", ".pyw", ".pl",
                           ".rb", ".php", ".lua", ".tcl", ".js", ".mjs", ".cjs", ".ps1", ".bat", ".cmd", ".vbs",
                           ".wsf", ".hta", ".applescript", ".scpt"}),
    "a program or installer": frozenset({".exe", ".com", ".msi", ".appimage", ".run", ".bin", ".jar", ".so",
                                         ".deb", ".rpm", ".apk", ".flatpak", ".snap", ".app", ".scr", ".out",
                                         ".elf", ".x86_64"}),
}
MAGIC = {b"#!": "a script", b"\x7fELF": "a program", b"MZ": "a program", b"[Desktop Entry]": "a desktop launcher"}


def open_refusal(root: Path, relpath: str) -> str:
    """Why the desktop must not open this file (empty: it may), looked at again when Open is clicked: the file
    may have changed since its preview was read (blocking)."""
    try:
        _size, mode, head = read_head(root, relpath, SNIFF, over=SNIFF)
    except FileNotFoundError:
        return "it is no longer in the workspace"
    except OSError as exc:
        return access.report(exc, relpath)
    return could_run(root, relpath, PurePosixPath(relpath).suffix.lower(), mode, head)


def read_head(root: Path, relpath: str, limit: int, over: int) -> tuple[int, int, bytes]:
    """A regular file's size, mode and first bytes: all of them up to `limit` (one more if it grew meanwhile),
    only `over` of them when it is larger."""
    with access.open_file(root, relpath) as fh:
        info = os.fstat(fh.fileno())
        return info.st_size, info.st_mode, fh.read(limit + 1 if info.st_size <= limit else over)


def could_run(root: Path, relpath: str, suffix: str, mode: int, head: bytes) -> str:
    for what, suffixes in RUNS.items():
        if suffix in suffixes:
            return f"it is {what} ({suffix}), and opening it could run it"
    for magic, what in MAGIC.items():
        if head.startswith(magic):
            return f"it is {what} (by its first bytes), and opening it could run it"
    if mode & (stat.S_IXUSR | stat.S_IXGRP | stat.S_IXOTH):
        return "it is marked executable, and opening it could run it"
    if access.is_link(root, relpath):
        return "it is a link, and what it leads to is not what was looked at"
    return ""


def link_refusal(link: str, root: Path) -> str:
    """Why a click on `link` must not open it (empty: it may). A link with no scheme names a file in `root` (the
    workspace, as the model names its files; a skill's folder), the only folder a file link may open from."""
    parts = urlsplit(link)
    scheme = parts.scheme.lower()
    if scheme in OPENED_SCHEMES:
        return ""
    if scheme not in ("", "file"):
        return f"links “{scheme}:” are not opened from here; copy it if you trust it"
    if parts.netloc not in ("", "localhost"):
        return "links to files on another computer are not opened from here; copy it if you trust it"
    path = Path(os.path.normpath(root / unquote(parts.path)))  # an absolute path stays as it is
    if not inside(path, root):
        return f"only files in {root} are opened from here"
    return open_refusal(root, str(path.relative_to(root)))
