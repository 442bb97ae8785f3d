"""Kept file contents, by the SHA-256 of their bytes, in the app's data folder (which the sandbox hides).

A file is kept by copying it from a descriptor the scan opened without following links: as a reflink where the
file system offers one (btrfs, XFS: the copy shares the blocks until either side changes, so keeping a large
file costs no time and no space), else by reading it once, hashing and writing in the same pass. Same content,
one blob, whatever the path or turn. A blob is written to a temporary name and renamed into place, without an
fsync per blob (a baseline of thousands of files would pay one each): a blob a crash left damaged is caught when
it is read back, because it is checked against its name then.
"""

from __future__ import annotations

import errno
import fcntl
import hashlib
import os
import secrets
import stat
from pathlib import Path

FICLONE = 0x40049409  # linux/fs.h: _IOW(0x94, 9, int)
CHUNK = 1024 * 1024
LARGE = "large:"  # the digest of a file too large to keep: its size and times, so a change still shows
_SOURCE = os.O_RDONLY | os.O_NOFOLLOW | os.O_NONBLOCK | os.O_NOCTTY | os.O_CLOEXEC


class Damaged(OSError):
    """A kept copy no longer matches its digest (a crash while it was written, or the disk)."""


class Blobs:
    """The content store; `limit` is the largest file kept (a larger one is recorded as changed, not kept)."""

    def __init__(self, folder: Path, limit: int) -> None:
        self.folder = folder
        self.limit = limit
        self._reflinks = True  # until the file system says otherwise

    def keep(self, dir_fd: int, name: str, known: str | None = None) -> tuple[str, os.stat_result] | None:
        """Keep the regular file `name` of the open folder; its digest and its stat as opened (the content kept
        is at least as new as that stat). None when it is no longer a regular file there (gone, a link now).
        `known`: the digest it had, already kept; it is only hashed, and copied only when that differs (a file
        read again because its stat cannot tell, which has mostly not changed)."""
        try:
            src = os.open(name, _SOURCE, dir_fd=dir_fd)
        except OSError as exc:
            if exc.errno in (errno.ENOENT, errno.ELOOP, errno.ENOTDIR, errno.ENXIO):
                return None
            raise
        try:
            info = os.fstat(src)
            if not stat.S_ISREG(info.st_mode):
                return None
            if info.st_size > self.limit:
                return f"{LARGE}{info.st_size}:{info.st_mtime_ns}:{info.st_ctime_ns}", info
            os.set_blocking(src, True)
            if known is not None and _hash(src) == known:
                return known, info
            return self._copy(src), info
        finally:
            os.close(src)

    def path(self, digest: str) -> Path:
        return self.folder / digest[:2] / digest[2:]

    def has(self, digest: str) -> bool:
        return self.path(digest).is_file()

    def size(self, digest: str) -> int | None:
        """A kept content's size without reading it; None when it was not kept."""
        try:
            return self.path(digest).stat().st_size
        except OSError:
            return None

    def read(self, digest: str) -> bytes:
        """A kept content, checked against its digest. FileNotFoundError when it was not kept; Damaged."""
        data = self.path(digest).read_bytes()
        if hashlib.sha256(data).hexdigest() != digest:
            raise Damaged(f"the kept copy {digest[:12]} is damaged")
        return data

    def collect(self, needed: set[str]) -> int:
        """Remove every kept content not in `needed`, and temporary files a crash left; how many went. Only while
        nothing is being kept (the caller holds off looks): a copy in progress is a temporary file too."""
        removed = 0
        if not self.folder.is_dir():
            return 0
        for entry in self.folder.iterdir():
            if entry.is_file() and entry.name.endswith(".tmp"):
                entry.unlink(missing_ok=True)
            elif entry.is_dir() and len(entry.name) == 2:
                for blob in entry.iterdir():
                    if entry.name + blob.name not in needed:
                        blob.unlink(missing_ok=True)
                        removed += 1
        return removed

    def _copy(self, src: int) -> str:
        self.folder.mkdir(parents=True, exist_ok=True)
        temp = self.folder / f".{secrets.token_hex(8)}.tmp"
        dst = os.open(temp, os.O_RDWR | os.O_CREAT | os.O_EXCL | os.O_CLOEXEC, 0o600)
        try:
            digest = self._clone(src, dst) or _copy_hashing(src, dst)
        except BaseException:
            os.close(dst)
            temp.unlink(missing_ok=True)
            raise
        os.close(dst)
        final = self.path(digest)
        if final.exists():
            temp.unlink()
        else:
            final.parent.mkdir(exist_ok=True)
            os.replace(temp, final)
        return digest

    def _clone(self, src: int, dst: int) -> str | None:
        """A reflink of `src` into `dst`, hashed from the clone (which nothing else writes); None when the file
        system (or the pair of them) cannot clone."""
        if not self._reflinks:
            return None
        try:
            fcntl.ioctl(dst, FICLONE, src)
        except OSError as exc:
            if exc.errno in (errno.EOPNOTSUPP, errno.EXDEV, errno.EINVAL, errno.ENOTTY, errno.EPERM):
                self._reflinks = False
                return None
            raise
        return _hash(dst)


def _hash(src: int) -> str:
    digest = hashlib.sha256()
    offset = 0
    while chunk := os.pread(src, CHUNK, offset):
        digest.update(chunk)
        offset += len(chunk)
    return digest.hexdigest()


def _copy_hashing(src: int, dst: int) -> str:
    digest = hashlib.sha256()
    while chunk := os.read(src, CHUNK):
        digest.update(chunk)
        view = memoryview(chunk)
        while view:
            view = view[os.write(dst, view):]
    return digest.hexdigest()
