"""One look at the whole workspace: every folder, file and link as a manifest entry, keeping the content of each
file that is new or changed since the previous look.

The walk goes by folder descriptors, one level at a time, and never follows a link (a link is recorded as the
text it holds, which is what undo would put back). A file whose size, times and inode are as the previous
manifest says is taken as unchanged without being opened: the change time cannot be set by a program, so a
write always shows. Only a changed file is read, and only a changed file costs anything beyond its `lstat`.

Every look counts the names and the bytes of files it meets against `Limits`, before it copies a file: over
either, it stops with OverLimit, so a workspace grown too large is never copied past the cap. `measure` does the
counting alone, for the first look (which would otherwise copy everything up to the cap only to throw it away).
"""

from __future__ import annotations

import errno
import os
import stat
from dataclasses import dataclass
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


class OverLimit(Exception):
    """The workspace holds more than `Limits` allow (`files` names or `size` bytes counted when it stopped)."""

    def __init__(self, files: int, size: int, limits: Limits) -> None:
        super().__init__(f"{files} names, {size} bytes")
        self.files = files
        self.size = size
        self.limits = limits

    @property
    def too_many_files(self) -> bool:
        return self.files > self.limits.max_files


@dataclass(frozen=True)
class Limits:
    max_bytes: int  # of regular files' contents
    max_files: int  # names of any kind: files, folders, links


@dataclass
class _Tally:
    limits: Limits
    files: int = 0
    size: int = 0
    sizes_stop: bool = True  # False: only too many names stops the count (the size is then known in full)

    def add(self, info: os.stat_result) -> None:
        self.files += 1
        if stat.S_ISREG(info.st_mode):
            self.size += info.st_size
        if self.files > self.limits.max_files or (self.sizes_stop and self.size > self.limits.max_bytes):
            raise OverLimit(self.files, self.size, self.limits)


def entry_of(digest: str, info: os.stat_result) -> Entry:
    return Entry(digest, stat.S_IMODE(info.st_mode), info.st_size, info.st_mtime_ns, info.st_ctime_ns,
                 info.st_ino)


def scan(root_fd: int, previous: Manifest, blobs: Blobs, skipped: frozenset[str],
         limits: Limits) -> tuple[Manifest, list[str]]:
    """The workspace open as `root_fd` as it is now, and the paths that may differ from `previous` (new, gone,
    or with other stat figures); `skipped` paths are left out (the files only the app writes). OverLimit when it
    holds more than `limits` allow."""
    found: Manifest = {}
    changed: list[str] = []
    _walk(root_fd, "", previous, blobs, found, changed, skipped, _Tally(limits))
    if len(found) - len(changed) != len(previous):  # something went: the only case that needs the key sets
        changed.extend(previous.keys() - found.keys())
    return found, changed


def measure(root_fd: int, skipped: frozenset[str], limits: Limits) -> None:
    """Count the workspace as a scan would, copying nothing: OverLimit when it holds more than `limits` (with
    the whole size when only that is over, so the person can be told it)."""
    tally = _Tally(limits, sizes_stop=False)
    _count(root_fd, "", skipped, tally)
    if tally.size > limits.max_bytes:
        raise OverLimit(tally.files, tally.size, limits)


def _count(fd: int, prefix: str, skipped: frozenset[str], tally: _Tally) -> None:
    with os.scandir(fd) as listing:
        names = [e.name for e in listing if prefix + e.name not in skipped]
    for name in names:
        try:
            info = os.stat(name, dir_fd=fd, follow_symlinks=False)
        except FileNotFoundError:
            continue
        tally.add(info)
        if stat.S_ISDIR(info.st_mode):
            try:
                inner = access.open_child_dir(fd, name)
            except OSError as exc:
                if exc.errno in (errno.ENOENT, errno.ENOTDIR, errno.ELOOP):
                    continue
                raise
            try:
                _count(inner, prefix + name + "/", skipped, tally)
            finally:
                os.close(inner)


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
          skipped: frozenset[str], tally: _Tally) -> None:
    with os.scandir(fd) as listing:
        names = [e.name for e in listing if prefix + e.name not in skipped]
    for name in names:
        path = prefix + name
        try:
            info = os.stat(name, dir_fd=fd, follow_symlinks=False)
        except FileNotFoundError:
            continue  # gone since the listing
        tally.add(info)  # before anything of it is copied
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
                _walk(inner, path + "/", previous, blobs, found, changed, skipped, tally)
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
