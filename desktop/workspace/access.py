"""Reading and writing the workspace from the app's own process, where every file may be a trap.

Sandboxed commands can write anything in the workspace. By the time the app reads USER.md it may be a
symbolic link to ~/.ssh/id_rsa, a folder on the way may be a link to the home folder, the file may be a
named pipe that blocks its reader forever, or gigabytes long. The sandbox cannot read what it hides, but it
can make a link to any path, and the app, which runs outside the sandbox, would follow it. So everything the
app reads or writes under the workspace (and under the skill folders) goes through this module:

- A path is opened one component at a time, each relative to the folder opened before it (openat with
  O_NOFOLLOW). A link met on the way is resolved here, against the folders already open, and followed only
  while it stays under the root: a link that leaves (absolute elsewhere, or `..` above the root) is refused
  before anything outside is opened or even looked at. `..` never reaches the kernel either.
- Only regular files are read (a pipe is opened non-blocking, then refused), never more than the caller's
  limit: an oversized file is refused whole rather than cut where a reader would not notice.
- A write goes to a new file in a folder opened this way and is renamed over the target, so a link at the
  target is replaced, never written through, and a crash leaves the old or the new file.

Why not check `realpath()` and then open: a command running at the same moment can swap a component between
the check and the open. Here every decision is made on an open descriptor, so there is nothing to swap.
Why follow links at all: one that stays inside points at more workspace, data of the same trust; refusing it
would only break a user's own tidying up. (Linux's openat2 with RESOLVE_BENEATH does the same in the kernel,
but Python does not offer it.) A `Refused` error says why in words a person understands; `report` logs each
distinct one once, for readers that run every turn.
"""

from __future__ import annotations

import errno
import itertools
import logging
import os
import secrets
import stat
import threading
from collections import deque
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import BinaryIO, Literal

log = logging.getLogger(__name__)

MAX_LINKS = 40  # as the kernel's own limit: more means a loop
_DIR = os.O_RDONLY | os.O_DIRECTORY | os.O_NOFOLLOW | os.O_CLOEXEC
_FILE = os.O_RDONLY | os.O_NOFOLLOW | os.O_NONBLOCK | os.O_NOCTTY | os.O_CLOEXEC
_PATH = os.O_PATH | os.O_NOFOLLOW | os.O_CLOEXEC
_APPEND = os.O_WRONLY | os.O_APPEND | os.O_CREAT | os.O_NOFOLLOW | os.O_NONBLOCK | os.O_NOCTTY | os.O_CLOEXEC
_NEW = os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW | os.O_CLOEXEC
_KINDS = ((stat.S_ISDIR, "a folder"), (stat.S_ISFIFO, "a named pipe"), (stat.S_ISSOCK, "a socket"),
          (stat.S_ISCHR, "a device"), (stat.S_ISBLK, "a device"))
Kind = Literal["file", "dir", "link", "other"]


class Refused(OSError):
    """The app will not use this path; the message says why, for people. An OSError, so code that already
    copes with unreadable files copes with these too."""


@dataclass(frozen=True)
class Entry:
    """One name in a listed folder, as it is on disk: a link is "link", whatever it points at."""

    name: str
    kind: Kind


def read_bytes(root: Path, relpath: str, limit: int) -> bytes:
    """The whole file, which must be a regular file of at most `limit` bytes.
    FileNotFoundError when it (or a folder on the way) does not exist; Refused when it may not be read."""
    with open_file(root, relpath, limit) as fh:
        # Asked for its size, not the limit: a read sets aside all it asks for (megabytes, for a file of bytes).
        size = os.fstat(fh.fileno()).st_size
        data = fh.read(size + 1)
        if len(data) > size:  # a command lengthened it since: the rest, as far as the limit and one more
            data += fh.read(limit + 1 - len(data))
    if len(data) > limit:  # grew after the size check
        raise Refused(f"{relpath} is larger than {_size(limit)}; the app reads files up to that size")
    return data


def read_text(root: Path, relpath: str, limit: int, *, errors: str = "replace") -> str:
    """`read_bytes` decoded as UTF-8 (undecodable bytes replaced unless `errors` says otherwise)."""
    return read_bytes(root, relpath, limit).decode("utf-8", errors=errors)


def load_text(root: Path, relpath: str, limit: int) -> tuple[str, str]:
    """An optional file as (text, refusal): ("", "") when it is absent, ("", why) when it may not be read
    (logged once). For readers that carry on without the file and tell a person why."""
    try:
        return read_text(root, relpath, limit), ""
    except (FileNotFoundError, NotADirectoryError):
        return "", ""
    except OSError as exc:
        return "", report(exc, relpath)


def open_file(root: Path, relpath: str, limit: int | None = None) -> BinaryIO:
    """A regular file opened for reading (for readers that stream); Refused when it is larger than `limit`."""
    with _Walk(root, relpath) as walk:
        fd = walk.open_file()
    try:
        size = os.fstat(fd).st_size
        if limit is not None and size > limit:
            raise Refused(f"{relpath} is {_size(size)}; the app reads files up to {_size(limit)}")
        return os.fdopen(fd, "rb")
    except BaseException:
        os.close(fd)
        raise


def file_stat(root: Path, relpath: str) -> os.stat_result:
    """What `relpath` is (links inside followed, as a read would): for existence checks and caches.
    FileNotFoundError when absent, Refused when it leads outside."""
    with _Walk(root, relpath) as walk:
        fd = walk.open_any()
    try:
        return os.fstat(fd)
    finally:
        os.close(fd)


def stat_children(root: Path, folder: str, leaf: str, *,
                  limit: int | None = None) -> dict[str, os.stat_result | OSError]:
    """For every name in `folder` (the first `limit` listed, if given: a folder can hold millions): what
    `<name>/<leaf>` is, as `file_stat` would say (or why not), with one walk to the folder, for change checks
    such as the skills loader's before every prompt (a walk per skill would cost more than the rest of building
    it). A plain folder with a plain `leaf` is looked at from the
    open folder in one call; where a link is involved the full walk decides. Metadata only, for telling
    whether something changed: a folder swapped for a link in the instant between listing and looking could
    give the size and time of what it points at, which says nothing of its contents. Read through
    `read_bytes` or `open_file`, never on the strength of this answer."""
    try:
        with _Walk(root, folder) as walk:
            fd = walk.open_dir()
    except (FileNotFoundError, NotADirectoryError):
        return {}
    found: dict[str, os.stat_result | OSError] = {}
    try:
        with os.scandir(fd) as entries:
            listed = [(e.name, e.is_dir(follow_symlinks=False))  # from the listing: no call
                      for e in itertools.islice(entries, limit)]
        for name, plain_dir in listed:
            if plain_dir:
                try:
                    info = os.stat(f"{name}/{leaf}", dir_fd=fd, follow_symlinks=False)
                except OSError as exc:
                    found[name] = exc
                    continue
                if not stat.S_ISLNK(info.st_mode):
                    found[name] = info
                    continue
            try:
                found[name] = file_stat(root, f"{folder}/{name}/{leaf}" if folder else f"{name}/{leaf}")
            except OSError as exc:
                found[name] = exc
    finally:
        os.close(fd)
    return found


def kind(root: Path, relpath: str) -> Kind | None:
    """"file", "dir" or "other" for what is there (links inside followed), None when absent or refused."""
    try:
        mode = file_stat(root, relpath).st_mode
    except OSError:
        return None
    return "file" if stat.S_ISREG(mode) else "dir" if stat.S_ISDIR(mode) else "other"


def is_link(root: Path, relpath: str) -> bool:
    """Whether `relpath` itself is a link (the folders on the way are followed as a read would), looked at by
    its name alone: its folder may hold millions of names, too many to list for one."""
    folder, _, name = relpath.rstrip("/").rpartition("/")
    try:
        with opened_dir(root, folder) as fd:
            return stat.S_ISLNK(os.stat(name, dir_fd=fd, follow_symlinks=False).st_mode)
    except (FileNotFoundError, NotADirectoryError):
        return False


def list_dir(root: Path, relpath: str = "", *, limit: int | None = None) -> list[Entry]:
    """The names in a folder, sorted; [] when it is absent. Entries are not followed: a link is a "link".
    Given `limit`, only the first that many listed (in the folder's own order): a folder can hold millions."""
    try:
        with _Walk(root, relpath) as walk:
            fd = walk.open_dir()
    except (FileNotFoundError, NotADirectoryError):
        return []
    try:
        with os.scandir(fd) as entries:
            found = [Entry(e.name, _entry_kind(e)) for e in itertools.islice(entries, limit)]
    finally:
        os.close(fd)
    return sorted(found, key=lambda e: e.name)


def write_bytes(root: Path, relpath: str, data: bytes, *, mode: int | None = None, links: bool = True) -> None:
    """Replace (or create) a file atomically, making missing folders. A link at the target is replaced by
    the new file, not written through; an existing file keeps its permissions unless `mode` is given.
    `links` False: a link on the way is refused even when it stays inside (see `_Walk`)."""
    with _Walk(root, relpath, links) as walk:
        folder, name = walk.open_parent(create=True)
        keep = mode
        try:
            old = os.stat(name, dir_fd=folder, follow_symlinks=False).st_mode
            if keep is None and stat.S_ISREG(old):
                keep = stat.S_IMODE(old)
        except FileNotFoundError:
            pass
        temp = f".{name[:40]}.{secrets.token_hex(6)}.tmp"
        fd = os.open(temp, _NEW, 0o666, dir_fd=folder)  # the umask applies, as for any new file
        try:
            with os.fdopen(fd, "wb") as fh:
                if keep is not None:
                    os.fchmod(fh.fileno(), keep)
                fh.write(data)
                fh.flush()
                os.fsync(fh.fileno())
            os.replace(temp, name, src_dir_fd=folder, dst_dir_fd=folder)
        except BaseException:
            try:
                os.unlink(temp, dir_fd=folder)
            except OSError:
                pass
            raise
        try:
            os.fsync(folder)
        except OSError:
            pass


def write_text(root: Path, relpath: str, text: str) -> None:
    write_bytes(root, relpath, text.encode("utf-8"))


def create_text(root: Path, relpath: str, text: str) -> bool:
    """Write a new file only when the name is free (a dangling link counts as taken: never written through).
    Returns whether it was written."""
    return create_bytes(root, relpath, text.encode("utf-8"))


def create_bytes(root: Path, relpath: str, data: bytes) -> bool:
    """`create_text` for bytes: a new file, making missing folders, only when the name is free."""
    with _Walk(root, relpath) as walk:
        folder, name = walk.open_parent(create=True)
        try:
            fd = os.open(name, _NEW, 0o666, dir_fd=folder)
        except FileExistsError:
            return False
        with os.fdopen(fd, "wb") as fh:
            fh.write(data)
        return True


def open_append(root: Path, relpath: str) -> BinaryIO:
    """A regular file opened for appending (created when absent); a link at the target is refused."""
    with _Walk(root, relpath) as walk:
        folder, name = walk.open_parent(create=True)
        try:
            fd = os.open(name, _APPEND, 0o666, dir_fd=folder)
        except OSError as exc:
            if exc.errno == errno.ELOOP:
                raise Refused(f"{relpath} is a link; the app appends only to a plain file") from None
            raise
    try:
        _require_regular(fd, relpath)
        os.set_blocking(fd, True)
        return os.fdopen(fd, "ab")
    except BaseException:
        os.close(fd)
        raise


def remove(root: Path, relpath: str, *, links: bool = True) -> bool:
    """Delete a file (a link itself, never its target); False when it was not there."""
    try:
        with _Walk(root, relpath, links) as walk:
            folder, name = walk.open_parent()
            os.unlink(name, dir_fd=folder)
    except (FileNotFoundError, NotADirectoryError):
        return False
    return True


def remove_empty_dir(root: Path, relpath: str, *, links: bool = True) -> bool:
    """Delete a folder if it is empty; False when it is not there or not empty."""
    try:
        with _Walk(root, relpath, links) as walk:
            folder, name = walk.open_parent()
            os.rmdir(name, dir_fd=folder)
    except OSError:
        return False
    return True


@contextmanager
def opened_dir(root: Path, relpath: str = "", *, create: bool = False, links: bool = True) -> Iterator[int]:
    """A folder as a descriptor (made, with its parents and the root, when `create`), for work done with
    `dir_fd=`."""
    if create:
        root.mkdir(parents=True, exist_ok=True)  # the root is the app's to make: the user chose it
    with _Walk(root, relpath, links) as walk:
        fd = walk.open_dir(create=create)
    try:
        yield fd
    finally:
        os.close(fd)


def open_child_dir(dir_fd: int, name: str) -> int:
    """A folder inside a folder already open, by a name that must not be a link (for work across names)."""
    return os.open(name, _DIR, dir_fd=dir_fd)


def exists_in(dir_fd: int, name: str) -> bool:
    """Whether `name` is taken in an open folder (a link counts, wherever it points)."""
    try:
        os.stat(name, dir_fd=dir_fd, follow_symlinks=False)
    except FileNotFoundError:
        return False
    return True


def entered(path: str, workspace: Path) -> tuple[Path, str] | None:
    """Where a path the person named (an attachment) enters the workspace, following its links one by one as
    the kernel would: (root, path inside it) from the first step that lies in the workspace, or None when no
    step does. The person may reach the workspace by a link of their own (~/nanobot, a home folder that is
    itself a link), which a read from "/" would follow and then follow the links a sandboxed command left
    inside too (to ~/.ssh, say); read from the root this returns, they are confined to it. Refused for a loop."""
    roots = (workspace.absolute(), workspace.resolve())
    pending = path.split("/")
    current = "/"
    for _ in range(MAX_LINKS * 8):
        if not pending:
            return None
        part = pending.pop(0)
        if part in ("", "."):
            continue
        if part == "..":
            current = os.path.dirname(current)
            continue
        step = os.path.join(current, part)
        for root in roots:
            if Path(step).is_relative_to(root):
                parts = [*Path(step).relative_to(root).parts, *pending]
                return root, "/".join(p for p in parts if p not in ("", "."))
        if os.path.islink(step):
            target = os.readlink(step)
            current = "/" if target.startswith("/") else current
            pending = [*target.split("/"), *pending]
        else:
            current = step
    raise Refused("its path has too many links (a loop?)")


COPY_DEPTH = 100  # folders within folders a copy goes down: a deeper chain is a command's doing, not a person's


class TooLarge(Refused):
    """A copy stopped at a limit; what it had made is left for the caller to remove."""


@dataclass(frozen=True)
class CopyLimits:
    """What one copy may take in all. Counted while copying, not before: a folder a command is still writing
    into can grow past any count made before the copy."""

    names: int  # files, folders and links
    size: int  # bytes of the files' content


def copy_tree(src_fd: int, dst_fd: int, limits: CopyLimits | None = None) -> list[str]:
    """Copy the folder open as `src_fd` into the empty folder `dst_fd`, by descriptors only: files by content
    with their permissions, links as links (their targets are checked when read), folders within folders, pipes
    and sockets left out. A name swapped for a link meanwhile fails the copy; nothing is followed. Returns the
    links made, as paths inside the copy, for a caller that judges where they lead. TooLarge past `limits` or
    past COPY_DEPTH folders deep (a chain nested deeper ran Python out of stack: an internal error)."""
    copy = _Copy(limits)
    copy.folder(src_fd, dst_fd, "", 0)
    return copy.links


class _Copy:
    """One copy_tree's counts, kept across its folders."""

    def __init__(self, limits: CopyLimits | None) -> None:
        self.limits = limits
        self.names = self.size = 0
        self.links: list[str] = []

    def folder(self, src_fd: int, dst_fd: int, at: str, depth: int) -> None:
        if depth > COPY_DEPTH:
            raise TooLarge(f"its folders are nested more than {COPY_DEPTH} deep")
        with os.scandir(src_fd) as found:  # one entry at a time: a folder of millions is never listed whole
            for entry in found:
                name, what, inner = entry.name, _entry_kind(entry), f"{at}{entry.name}"
                self._count(1, 0)
                if what == "link":
                    os.symlink(os.readlink(name, dir_fd=src_fd), name, dir_fd=dst_fd)
                    self.links.append(inner)
                elif what == "dir":
                    os.mkdir(name, 0o700, dir_fd=dst_fd)
                    inner_src, inner_dst = open_child_dir(src_fd, name), open_child_dir(dst_fd, name)
                    try:
                        self.folder(inner_src, inner_dst, inner + "/", depth + 1)
                        os.fchmod(inner_dst, stat.S_IMODE(os.fstat(inner_src).st_mode))
                    finally:
                        os.close(inner_src)
                        os.close(inner_dst)
                elif what == "file":
                    self._file(src_fd, dst_fd, name)

    def _file(self, src_fd: int, dst_fd: int, name: str) -> None:
        src = os.open(name, _FILE, dir_fd=src_fd)
        try:
            _require_regular(src, name)
            self._count(0, os.fstat(src).st_size, keep=False)  # refused before a byte is copied when it is over
            dst = os.open(name, _NEW, 0o600, dir_fd=dst_fd)
            with os.fdopen(dst, "wb") as out:
                os.set_blocking(src, True)
                while chunk := os.read(src, 1024 * 1024):  # counted as read: the file may grow meanwhile
                    self._count(0, len(chunk))
                    out.write(chunk)
                os.fchmod(out.fileno(), stat.S_IMODE(os.fstat(src).st_mode))
        finally:
            os.close(src)

    def _count(self, names: int, size: int, *, keep: bool = True) -> None:
        """Add to the counts (only look, when not `keep`); TooLarge once they would pass the limits."""
        if self.limits is None:
            return
        if self.names + names > self.limits.names:
            raise TooLarge(f"it holds more than {self.limits.names:,} files and folders")
        if self.size + size > self.limits.size:
            raise TooLarge(f"it holds more than {_size(self.limits.size)}")
        if keep:
            self.names += names
            self.size += size


_reported: set[str] = set()
_reported_lock = threading.Lock()


def report(exc: OSError, relpath: str) -> str:
    """A refusal (or read failure) as a sentence for people, logged the first time it is seen."""
    message = str(exc) if isinstance(exc, Refused) else f"{relpath} could not be read ({exc.strerror or exc})"
    with _reported_lock:
        first = message not in _reported
        _reported.add(message)
    if first:
        log.warning("%s", message)
    return message


class _Walk:
    """Resolves one path under a root: the open folders from the root down (closed on exit) and the
    names still to resolve."""

    def __init__(self, root: Path, relpath: str, links: bool = True) -> None:
        self.root = root
        self.relpath = relpath
        self.links_followed = links  # False: for writers that put back paths recorded without following links
        self.fds: list[int] = []
        self.names: list[str] = []
        self.links = 0
        self.pending: deque[str] = deque()

    def __enter__(self) -> _Walk:
        self.fds.append(os.open(self.root, os.O_RDONLY | os.O_DIRECTORY | os.O_CLOEXEC))  # trusted: followed
        self.pending = deque(_parts(self.relpath))
        return self

    def __exit__(self, *exc: object) -> None:
        for fd in self.fds:
            os.close(fd)
        self.fds.clear()

    def open_file(self) -> int:
        name = self._walk_to_last()
        if name is None:
            raise Refused(f"{self._shown()} is a folder, not a file; the app does not read it")
        fd = self._open_last(name, _FILE)
        try:
            _require_regular(fd, self.relpath)  # as asked: a link followed is not what the person named
        except BaseException:
            os.close(fd)
            raise
        return fd

    def open_dir(self, create: bool = False) -> int:
        while self.pending:
            self._step(create)
        return os.dup(self.fds[-1])

    def open_any(self) -> int:
        name = self._walk_to_last()
        if name is None:
            return os.dup(self.fds[-1])
        return self._open_last(name, _PATH)

    def open_parent(self, create: bool = False) -> tuple[int, str]:
        """The folder the last name lives in, and that name (which is not resolved: writes replace it)."""
        while len(self.pending) > 1:
            self._step(create=create)
        name = self.pending.popleft() if self.pending else ""
        if name in ("", ".", ".."):
            raise Refused(f"{self.relpath} does not name a file")
        return self.fds[-1], name

    def _walk_to_last(self) -> str | None:
        """Open every folder but the last name (None when the path names the current folder itself)."""
        while True:
            while len(self.pending) > 1:
                self._step()
            if not self.pending:
                return None
            name = self.pending.popleft()
            if name == "..":
                self._up()
                continue
            if name == ".":
                continue
            return name

    def _open_last(self, name: str, flags: int) -> int:
        """Open the final name; a link there is resolved (inside only) and the walk goes on."""
        while True:
            target: str | None
            try:
                fd = os.open(name, flags, dir_fd=self.fds[-1])
            except OSError as exc:
                if exc.errno != errno.ELOOP:
                    raise
                target = self._link_target(name)
            else:
                if not (flags & os.O_PATH and stat.S_ISLNK(os.fstat(fd).st_mode)):
                    return fd
                target = _read_link(fd)
                os.close(fd)
            if target is None:
                self._count_hop()  # it stopped being a link meanwhile: try the name again
                continue
            self._follow(name, target)
            last = self._walk_to_last()
            if last is None:
                if flags & os.O_PATH:
                    return os.dup(self.fds[-1])
                raise Refused(f"{self._shown()} is a folder, not a file; the app does not read it")
            name = last

    def _step(self, create: bool = False) -> None:
        name = self.pending.popleft()
        if name == "..":
            self._up()
        elif name != ".":
            self._enter(name, create)

    def _enter(self, name: str, create: bool = False) -> None:
        try:
            fd = os.open(name, _DIR, dir_fd=self.fds[-1])
        except FileNotFoundError:
            if not create:
                raise
            try:
                os.mkdir(name, dir_fd=self.fds[-1])
            except FileExistsError:
                pass  # made meanwhile (maybe as a link): the next try resolves what is there
            self.pending.appendleft(name)
            self._count_hop()
            return
        except OSError as exc:
            if exc.errno not in (errno.ENOTDIR, errno.ELOOP):
                raise
            target = self._link_target(name)
            if target is None:
                raise NotADirectoryError(errno.ENOTDIR, f"{self._shown(name)} is not a folder") from None
            self._follow(name, target)
            return
        self.fds.append(fd)
        self.names.append(name)

    def _up(self) -> None:
        if len(self.fds) == 1:
            raise Refused(f"{self.relpath} leads outside {self.root}; the app does not follow it")
        os.close(self.fds.pop())
        self.names.pop()

    def _link_target(self, name: str) -> str | None:
        """The target of the link `name` in the current folder, or None when it is not a link."""
        try:
            fd = os.open(name, _PATH, dir_fd=self.fds[-1])
        except FileNotFoundError:
            return None
        try:
            if not stat.S_ISLNK(os.fstat(fd).st_mode):
                return None
            return _read_link(fd)
        finally:
            os.close(fd)

    def _follow(self, name: str, target: str) -> None:
        """Continue the walk at a link's target, which must stay under the root."""
        self._count_hop()
        where = self._shown(name)
        if not self.links_followed:
            raise Refused(f"{where} is a link now; the app does not follow it to put back {self.relpath}")
        if target.startswith("/"):
            inner = _below(target, (os.path.realpath(self.root), str(self.root)))
            if inner is None:
                raise Refused(f"{where} is a link that leads outside {self.root}; the app does not follow it")
            while len(self.fds) > 1:
                os.close(self.fds.pop())
            self.names.clear()
            target = inner
        parts = _parts(target)
        depth = len(self.names)
        for part in parts:  # a relative target that climbs above the root is refused before anything opens
            depth += -1 if part == ".." else 0 if part == "." else 1
            if depth < 0:
                raise Refused(f"{where} is a link that leads outside {self.root}; the app does not follow it")
        self.pending.extendleft(reversed(parts))

    def _count_hop(self) -> None:
        """Links followed and retries after a race both count: either way the walk always ends."""
        self.links += 1
        if self.links > MAX_LINKS:
            raise Refused(f"{self.relpath} goes through too many links (a loop?); the app does not follow it")

    def _shown(self, name: str | None = None) -> str:
        return "/".join([*self.names, name] if name else self.names) or self.relpath


def _parts(path: str) -> list[str]:
    if path.startswith("/") or "\x00" in path:
        raise Refused(f"{path!r} is not a relative path")
    return [p for p in path.split("/") if p not in ("", ".")]


def _below(target: str, roots: tuple[str, ...]) -> str | None:
    """`target` relative to whichever root it lies under, or None when it lies under none."""
    for root in roots:
        root = root.rstrip("/")
        if target == root or not root:
            return target[len(root):].lstrip("/")
        if target.startswith(root + "/"):
            return target[len(root) + 1:]
    return None


def _read_link(fd: int) -> str:
    return os.readlink("", dir_fd=fd)  # the link the descriptor holds: it cannot be swapped meanwhile


def _require_regular(fd: int, shown: str) -> None:
    mode = os.fstat(fd).st_mode
    if stat.S_ISREG(mode):
        return
    what = next((label for test, label in _KINDS if test(mode)), "not a regular file")
    raise Refused(f"{shown} is {what}, not a file; the app does not read it")


def _entry_kind(entry: os.DirEntry[str]) -> Kind:
    if entry.is_symlink():
        return "link"
    if entry.is_dir(follow_symlinks=False):
        return "dir"
    return "file" if entry.is_file(follow_symlinks=False) else "other"


def _size(n: int) -> str:
    for unit in ("bytes", "KB", "MB"):
        if n < 1024 or unit == "MB":
            return f"{n:,} {unit}" if unit == "bytes" else f"{n:.1f} {unit}".replace(".0 ", " ")
        n /= 1024  # type: ignore[assignment]
    return f"{n} bytes"
