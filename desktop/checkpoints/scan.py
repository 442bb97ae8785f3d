"""One look at the whole workspace: every folder, file and link as a manifest entry, keeping the content of each
file that is new or changed since the previous look.

The walk goes by folder descriptors, one level at a time, and never follows a link (a link is recorded as the
text it holds, which is what undo would put back). A file whose size, times and inode are as the previous
manifest says is taken as unchanged without being opened: the change time cannot be set by a program, so a
write always shows, except one within the same tick of the file system's clock as the write the previous look
read, or a store through a mapping that had already dirtied the page. So a file whose change time is close
before the previous look began is read again however its stat looks (git's "racily clean" entries): hashed, and
copied only if that differs. Close means within a second where the file system keeps times finer than a second
(a tick of the kernel's clock is a few milliseconds; the rest is for a network file system's clock being a
little off ours), within three where it keeps whole seconds (FAT's times go by two). The change time alone
decides, never the modification time, which a program may set in the future. Only such recent files and
changed ones cost anything beyond their `lstat`.

Every look counts the names and the bytes of files it meets against `Limits`, before it copies a file: over
either, it stops with OverLimit, so a workspace grown too large is never copied past the cap (nor a folder of
millions of names listed past it). `measure` does the counting alone, for the first look (which would otherwise
copy everything up to the cap only to throw it away).

Folders nested more than MAX_DEPTH deep stop a look the same way. A sandboxed command can nest them thousands deep
(a relative mkdir and cd, over and over), and the walk goes down one call and one open folder per level: without
the cap it ran out of Python's recursion limit, so every look failed, from then on, and only the log said so.
"""

from __future__ import annotations

import errno
import os
import stat
from dataclasses import dataclass
from itertools import islice
from typing import NamedTuple

from desktop.checkpoints.blobs import Blobs
from desktop.workspace import access

DIR = "dir"
LINK = "link:"
RACY_NS = 10**9  # a file changed this soon before a look began is read again by the next one (see above)
RACY_WHOLE_SECONDS_NS = 3 * 10**9  # the same where the file system keeps whole seconds
MAX_DEPTH = 100  # folders in folders; no project nests near this, and the walk's calls stay far below the limit


class Entry(NamedTuple):
    """A name as a look found it: what it is (`digest`: a content's SHA-256, "link:<target>" or "dir") and the
    stat figures that tell, next time, whether it may have changed."""

    digest: str
    mode: int
    size: int
    mtime_ns: int
    ctime_ns: int
    ino: int


Manifest = dict[str, Entry]


class OverLimit(Exception):
    """The workspace holds more than `Limits` allow (`files` names or `size` bytes counted when it stopped), or
    `deep`, a folder nested more than MAX_DEPTH deep."""

    def __init__(self, files: int, size: int, limits: Limits, deep: str = "") -> None:
        super().__init__(f"{files} names, {size} bytes" + (f", {deep} nested too deep" if deep else ""))
        self.files = files
        self.size = size
        self.limits = limits
        self.deep = deep

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
        self.check()

    def check(self) -> None:
        """OverLimit if what was counted is over (a scan counts sizes inline and checks before it copies)."""
        if self.files > self.limits.max_files or (self.sizes_stop and self.size > self.limits.max_bytes):
            raise OverLimit(self.files, self.size, self.limits)

    def room(self) -> int:
        """How many names of a folder to list: one past what the cap still allows, so counting them stops the
        look. One folder can hold millions (a loop in one sandboxed command), and a look must not hold them
        all to find out it is over."""
        return max(self.limits.max_files - self.files, 0) + 1

    def enter(self, path: str) -> None:
        """OverLimit before the folder `path` is entered if it lies more than MAX_DEPTH folders deep."""
        if path.count("/") >= MAX_DEPTH:
            raise OverLimit(self.files, self.size, self.limits, deep=path)


def entry_of(digest: str, info: os.stat_result) -> Entry:
    return Entry(digest, stat.S_IMODE(info.st_mode), info.st_size, info.st_mtime_ns, info.st_ctime_ns,
                 info.st_ino)


def scan(root_fd: int, previous: Manifest, blobs: Blobs, skipped: frozenset[str], limits: Limits,
         looked_ns: int) -> tuple[Manifest, list[str]]:
    """The workspace open as `root_fd` as it is now, and the paths that may differ from `previous` (new, gone,
    or with other stat figures); `skipped` paths are left out (the files only the app writes). `looked_ns`: when
    the look that made `previous` began (wall clock); a file changed close before it is read again. OverLimit
    when the workspace holds more than `limits` allow."""
    found: Manifest = {}
    changed: list[str] = []
    tally = _Tally(limits)
    _walk(root_fd, "", _Look(previous, blobs, found, changed, skipped, tally,
                             looked_ns - RACY_WHOLE_SECONDS_NS, looked_ns - RACY_NS))
    tally.check()
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
        names = list(islice((e.name for e in listing if prefix + e.name not in skipped), tally.room()))
    for name in names:
        try:
            info = os.stat(name, dir_fd=fd, follow_symlinks=False)
        except FileNotFoundError:
            continue
        tally.add(info)
        if stat.S_ISDIR(info.st_mode):
            tally.enter(prefix + name)
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
    """One path as it is now (None when absent), for the paths an undo just wrote: always read, since the undo
    may have written within the clock tick of the look that recorded `previous`."""
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


class _Look(NamedTuple):
    """What one scan carries down the folders."""

    previous: Manifest
    blobs: Blobs
    found: Manifest
    changed: list[str]
    skipped: frozenset[str]
    tally: _Tally
    settled_before: int  # a change time before this is settled whatever the file system's precision
    fine_settled_before: int  # and before this, where it keeps times finer than a second


def _walk(fd: int, prefix: str, scan: _Look) -> None:
    """One folder and those below it. The loop runs once per name in the workspace, so it is kept lean: the
    common case (a file as the previous look saw it, and not changed recently) costs one `lstat`, a comparison
    and its size added to the tally; the limits are checked whenever something is about to be copied."""
    skipped = {p[len(prefix):] for p in scan.skipped if p.startswith(prefix) and "/" not in p[len(prefix):]}
    with os.scandir(fd) as listing:
        items = list(islice((e for e in listing if e.name not in skipped) if skipped else listing, scan.tally.room()))
    tally = scan.tally
    tally.files += len(items)
    tally.check()
    previous, found, settled_before, is_file = scan.previous, scan.found, scan.settled_before, stat.S_ISREG
    for item in items:
        path = prefix + item.name
        try:
            info = item.stat(follow_symlinks=False)  # fstatat in `fd`: never follows a link
        except FileNotFoundError:
            continue  # gone since the listing
        if is_file(info.st_mode):
            tally.size += info.st_size
        old = previous.get(path)
        if old is not None and old.ctime_ns == info.st_ctime_ns and old.mtime_ns == info.st_mtime_ns \
                and old.size == info.st_size and old.ino == info.st_ino and old.digest != DIR \
                and (old.ctime_ns < settled_before
                     or old.ctime_ns % 10**9 and old.ctime_ns < scan.fine_settled_before):
            found[path] = old
            continue
        tally.check()  # before anything more is copied
        if stat.S_ISDIR(info.st_mode):
            _folder(fd, item.name, path, old, info, scan)
            continue
        entry = _entry(fd, item.name, info, old, scan.blobs)
        if entry is not None:
            found[path] = entry
            if entry is not old:
                scan.changed.append(path)


def _folder(fd: int, name: str, path: str, old: Entry | None, info: os.stat_result, scan: _Look) -> None:
    scan.tally.enter(path)
    try:
        inner = access.open_child_dir(fd, name)
    except OSError as exc:
        if exc.errno in (errno.ENOENT, errno.ENOTDIR, errno.ELOOP):
            return  # swapped for something else meanwhile: the next look sees what it is
        raise
    try:
        entry = old if old is not None and old.digest == DIR else entry_of(DIR, info)
        scan.found[path] = entry
        if entry is not old:
            scan.changed.append(path)
        _walk(inner, path + "/", scan)
    finally:
        os.close(inner)


def _entry(fd: int, name: str, info: os.stat_result, previous: Entry | None, blobs: Blobs) -> Entry | None:
    """A name read afresh: `previous` again when nothing about it changed (content, times, inode)."""
    if stat.S_ISDIR(info.st_mode):
        return entry_of(DIR, info)
    if stat.S_ISLNK(info.st_mode):
        try:
            entry = entry_of(LINK + os.readlink(name, dir_fd=fd), info)
        except OSError:
            return None
    elif not stat.S_ISREG(info.st_mode):
        return None  # pipes, sockets, devices: nothing to keep or put back
    else:
        known = previous.digest if previous is not None else None
        kept = blobs.keep(fd, name, known)
        if kept is None:
            return None
        entry = entry_of(*kept)
    return previous if previous is not None and entry == previous else entry
