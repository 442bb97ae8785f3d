"""Every chat in one zip, for a backup a person can open anywhere and the app's own files to put back.

Each chat goes in twice: as Markdown under `chats/` (named by its last day and title, so a file manager lists
them in order), and as the app's own session file under `sessions/`, byte for byte, which is what a restore
needs (copied into the data folder's `sessions/`). The zip is written to a temporary file beside the target and
renamed over it only when whole, so a full disk or a crash never leaves half an archive under the chosen name."""

from __future__ import annotations

import asyncio
import contextlib
import os
import re
import tempfile
import zipfile
from pathlib import Path

from desktop.chats.export import export
from desktop.session.session import Session, SessionInfo, SessionStore

_UNSAFE = re.compile(r"[^\w\- .,()'&+]+")


async def write_archive(store: SessionStore, infos: list[SessionInfo], workspace: Path, target: Path) -> int:
    """Write the chats of `infos` to the zip `target` (off the caller's thread); the number of chats written."""
    chats = [(info, await store.snapshot(info.key)) for info in infos]
    await asyncio.to_thread(_zip, chats, store, workspace, target)
    return len(chats)


def _zip(chats: list[tuple[SessionInfo, Session]], store: SessionStore, workspace: Path, target: Path) -> None:
    handle, partial = tempfile.mkstemp(prefix=f".{target.name}.", suffix=".part", dir=target.parent)
    os.close(handle)
    taken: set[str] = set()
    try:
        with zipfile.ZipFile(partial, "w", compression=zipfile.ZIP_DEFLATED) as archive:
            for info, session in chats:
                text = export(session.title, session.messages, "md", workspace)
                archive.writestr(f"chats/{_unique(_name(info), taken)}.md", text)
                session_file = store.path_for(info.key)
                with contextlib.suppress(FileNotFoundError):  # deleted since it was read: its Markdown is in
                    archive.write(session_file, f"sessions/{session_file.name}")
        os.replace(partial, target)
    except BaseException:
        Path(partial).unlink(missing_ok=True)
        raise


def file_title(title: str) -> str:
    """`title` as a file name any system takes: no slashes, control or other odd characters, not hidden, at
    most 80 characters, "Chat" when nothing is left."""
    return " ".join(_UNSAFE.sub(" ", title).split()).strip(".")[:80].strip() or "Chat"


def _name(info: SessionInfo) -> str:
    return f"{info.updated_at[:10]} {file_title(info.title)}"


def _unique(name: str, taken: set[str]) -> str:
    candidate, n = name, 1
    while candidate.lower() in taken:
        n += 1
        candidate = f"{name} ({n})"
    taken.add(candidate.lower())
    return candidate
