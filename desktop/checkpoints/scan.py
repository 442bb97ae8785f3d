"""One look at the whole workspace: every folder, file and link as a manifest entry, keeping the content of each
file that is new or changed since the previous look.

The walk goes by folder descriptors, one level at a time, and never follows a link (a link is recorded as the
text it holds, which is what undo would put back). A file whose size, times and inode are as the previous
manifest says is taken as unchanged without being opened: the change time cannot be set by a program, so a
write always shows. Only a changed file is read, and only a changed file costs anything beyond its `lstat`.
"""

from __future__ import annotations

import errno
import os
import stat
from typing import NamedTuple

from desktop.checkpoints.blobs import Blobs
from desktop.workspace import access

DIR = "dir"
LINK = "link:"


class Entry(NamedTuple):
    """A name as a look found it: what it is (`digest`: a content's SHA-256, "link:<target>" or "dir") and the
    stat figures that tell, next time, whether it may have changed."""

    digest: str
    mode: int
    size: int
    mtime_ns: int
    ctime_ns: int
    ino: int

    def same_stat(self, info: os.stat_result) -> bool:
        return (self.size, self.mtime_ns, self.ctime_ns, self.ino) == (
            info.st_size, info.st_mtime_ns, info.st_ctime_ns, info.st_ino)


Manifest = dict[str, Entry]


def entry_of(digest: str, info: os.stat_result) -> Entry:
    return Entry(digest, stat.S_IMODE(info.st_mode), info.st_size, info.st_mtime_ns, info.st_ctime_ns,
                 info.st_ino)


def scan(root_fd: int, previous: Manifest, blobs: Blobs, skipped: frozenset[str]) -> tuple[Manifest, list[str]]:
    """The workspace open as `root_fd` as it is now, and the paths that may differ from `previous` (new, gone,
    or with other stat figures); `skipped` top-level names are left out (the memory files)."""
    found: Manifest = {}
    changed: list[str] = []
    _walk(root_fd, "", previous, blobs, found, changed, skipped)
    if len(found) - len(changed) != len(previous):  # something went: the only case that needs the key sets
        changed.extend(previous.keys() - found.keys())
    return found, changed


def look(root_fd: int, relpath: str, previous: Entry | None, blobs: Blobs) -> Entry | None:
    """One path as a scan would record it (None when absent), for the paths an undo just wrote."""
    *folders, name = relpath.split("/")
    fds: list[int] = []
    try:
        fd = root_fd
        for folder in folders:
            fd = access.open_child_dir(fd, folder)
            fds.append(fd)
        info = os.stat(name, dir_fd=fd, follow_symlinks=False)
        return _entry(fd, name, info, previous, blobs)
    except OSError as exc:
        if exc.errno in (errno.ENOENT, errno.ENOTDIR, errno.ELOOP):
            return None
        raise
    finally:
        for opened in fds:
            os.close(opened)


def _walk(fd: int, prefix: str, previous: Manifest, blobs: Blobs, found: Manifest, changed: list[str],
          skipped: frozenset[str]) -> None:
    with os.scandir(fd) as listing:
        names = [e.name for e in listing if prefix or e.name not in skipped]
    for name in names:
        path = prefix + name
        try:
            info = os.stat(name, dir_fd=fd, follow_symlinks=False)
        except FileNotFoundError:
            continue  # gone since the listing
        if stat.S_ISDIR(info.st_mode):
            try:
                inner = access.open_child_dir(fd, name)
            except OSError as exc:
                if exc.errno in (errno.ENOENT, errno.ENOTDIR, errno.ELOOP):
                    continue  # swapped for something else meanwhile: the next look sees what it is
                raise
            try:
                old = previous.get(path)
                found[path] = old if old is not None and old.digest == DIR else entry_of(DIR, info)
                if found[path] is not old:
                    changed.append(path)
                _walk(inner, path + "/", previous, blobs, found, changed, skipped)
            finally:
                os.close(inner)
            continue
        old = previous.get(path)
        if old is not None and old.ctime_ns == info.st_ctime_ns and old.mtime_ns == info.st_mtime_ns \
                and old.size == info.st_size and old.ino == info.st_ino and old.digest != DIR:
            found[path] = old  # the common case, inline: a look is a loop over every file
            continue
        entry = _entry(fd, name, info, old, blobs)
        if entry is not None:
            found[path] = entry
            if entry is not old:
                changed.append(path)


def _entry(fd: int, name: str, info: os.stat_result, previous: Entry | None, blobs: Blobs) -> Entry | None:
    if stat.S_ISDIR(info.st_mode):
        return entry_of(DIR, info)
    if previous is not None and previous.digest != DIR and previous.same_stat(info):
        return previous  # a chmod changes the change time too
    if stat.S_ISLNK(info.st_mode):
        try:
            return entry_of(LINK + os.readlink(name, dir_fd=fd), info)
        except OSError:
            return None
    if not stat.S_ISREG(info.st_mode):
        return None  # pipes, sockets, devices: nothing to keep or put back
    kept = blobs.keep(fd, name)
    return entry_of(*kept) if kept is not None else None
