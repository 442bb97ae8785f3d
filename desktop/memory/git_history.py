"""Version history of the memory files, so every Dream or manual change can be inspected and undone.

The history is a bare git repository in the app's data folder (`<data>/memory-history/`), which the exec
sandbox hides, and it is written with dulwich alone. No git program runs, and nothing in the workspace can
configure what does: a repository inside the workspace would be writable by sandboxed commands, and git
obeys its repository's configuration (fsmonitor, pager, hooks, filters, ssh command), which is how one
`exec` call and the next Dream used to run a command of the model's choosing outside the sandbox. Commits
are built here object by object from bytes read through `desktop.workspace.access` (no index, no work tree,
no hooks: dulwich runs hooks only from its porcelain commit, which this module never calls), and a restore
writes a blob's bytes back through the same module.

Older versions kept the history in `<workspace>/.git`. That repository is imported once, when it is wholly
the app's (every commit by the app's author), by copying its objects and branch into the new place through
the workspace reader (bounded, links refused, treated as data); it is then left where it is, unused. A
workspace that is the user's own git repository is never touched: its history stays theirs, and the app
starts its own beside it."""

from __future__ import annotations

import asyncio
import hashlib
import io
import logging
import os
import re
import shutil
import tempfile
import time
import zlib
from collections.abc import Callable
from dataclasses import dataclass
from datetime import datetime, timedelta, timezone
from pathlib import Path
from typing import TYPE_CHECKING, Any, TypeVar, cast

from desktop.memory.store import MemoryStore
from desktop.workspace import access
from desktop.workspace.layout import MEMORY_FILES

if TYPE_CHECKING:
    from dulwich.objects import Commit as RawCommit
    from dulwich.repo import Repo

T = TypeVar("T")
log = logging.getLogger(__name__)

AUTHOR_NAME = "Nanobot"
AUTHOR_EMAIL = "nanobot@localhost"
IDENTITY = f"{AUTHOR_NAME} <{AUTHOR_EMAIL}>".encode()
BRANCH = b"refs/heads/main"
FILE_LIMIT = 4 * 1024 * 1024  # a memory file or SKILL.md larger than this is not recorded
OLD_REPO_LIMITS = (20_000, 64 * 1024 * 1024)  # files and bytes copied from an old <workspace>/.git, at most
OLD_REPO_COMMITS = 20_000
_SKILL_FILE = re.compile(r"^skills/[a-z0-9][a-z0-9-]{0,63}/SKILL\.md$")
_HEX = re.compile(r"^[0-9a-f]{40}$")
_FILE_MODE = 0o100644


class GitError(RuntimeError):
    """A history operation failed; the message is for the user."""


@dataclass(frozen=True)
class Commit:
    rev: str
    date: str  # ISO 8601
    subject: str
    body: str = ""

    @property
    def short(self) -> str:
        return self.rev[:7]


def is_memory_path(path: str) -> bool:
    """Files the history may restore: the three memory files and skills' SKILL.md."""
    return path in MEMORY_FILES or bool(_SKILL_FILE.match(path))


def repository_for(history_dir: Path, workspace: Path) -> Path:
    """Where a workspace's history lives: named after the folder, told apart by a hash of its real path."""
    real = os.path.realpath(workspace)
    digest = hashlib.sha256(real.encode("utf-8", "surrogateescape")).hexdigest()[:12]
    name = re.sub(r"[^A-Za-z0-9._-]", "_", Path(real).name)[:40] or "workspace"
    return history_dir / f"{name}-{digest}.git"


class GitHistory:
    """The memory history of the store's workspace (which moves when the settings move it)."""

    def __init__(self, store: MemoryStore, history_dir: Path) -> None:
        self.store = store
        self.history_dir = history_dir
        self._lock = asyncio.Lock()

    @property
    def workspace(self) -> Path:
        return self.store.workspace

    @property
    def repository(self) -> Path:
        return repository_for(self.history_dir, self.workspace)

    async def ensure(self) -> None:
        """Create the history on first use, with a baseline commit of the memory files as they are,
        so even the first change has a "before" to go back to."""
        async with self._lock:
            await self._run(lambda: _close(self._open(create=True)))

    async def commit(self, paths: list[str], message: str) -> str | None:
        """Record these workspace-relative paths as they are now (deleted ones are removed); None when
        nothing changed."""
        async with self._lock:
            return await self._run(lambda: self._with(True, lambda repo: _commit(repo, self.workspace, paths,
                                                                                 message)))

    async def log(self, limit: int = 200) -> list[Commit]:
        async with self._lock:
            return await self._run(lambda: self._with(False, lambda repo: _log(repo, limit)) or [])

    async def show(self, rev: str) -> tuple[Commit, list[str], str]:
        """The commit, the files it changed and its unified diff."""
        def show(repo: Repo) -> tuple[Commit, list[str], str]:
            raw = _resolve(repo, rev)
            return _commit_of(raw), _changed(repo, raw), _diff(repo, raw)

        async with self._lock:
            return await self._run(lambda: self._with_existing(rev, show))

    async def restore_before(self, rev: str) -> tuple[str | None, list[str]]:
        """Put the files a commit changed back as they were before it, as a new commit."""
        async with self._lock:
            return await self._run(lambda: self._with_existing(rev, lambda repo: self._restore(repo, rev)))

    def _restore(self, repo: Repo, rev: str) -> tuple[str | None, list[str]]:
        raw = _resolve(repo, rev)
        full = raw.id.decode()
        if not raw.parents:
            raise GitError(f"{full[:7]} is the first recorded version; there is nothing before it")
        files = [f for f in _changed(repo, raw) if is_memory_path(f)]
        if not files:
            raise GitError(f"{full[:7]} changed no memory files")
        parent = cast("RawCommit", repo[raw.parents[0]])
        # what the files hold now, changed by something that records nothing (an editor, a turn), is recorded first:
        # written over unrecorded, undoing the restore could not give it back
        _commit(repo, self.workspace, files, f"Changes made outside the memory history, kept before restoring "
                                             f"{full[:7]}")
        for name in files:
            _put(self.workspace, name, _blob(repo, parent, name))
        subject = _commit_of(raw).subject
        new = _commit(repo, self.workspace, files, f"Restore {', '.join(files)} to before {full[:7]}\n\n"
                                                   f"Undoes: {subject}")
        return new, files

    async def _run(self, work: Callable[[], T]) -> T:
        try:
            return await asyncio.to_thread(work)
        except GitError:
            raise
        except Exception as exc:  # a damaged repository, a full disk: the user sees why, nothing is lost
            log.warning("memory history: %s", exc, exc_info=True)
            raise GitError(f"the memory history in {self.repository} could not be used ({exc})") from exc

    def _with(self, create: bool, work: Callable[[Repo], T]) -> T | None:
        repo = self._open(create)
        if repo is None:
            return None
        try:
            return work(repo)
        finally:
            repo.close()

    def _with_existing(self, rev: str, work: Callable[[Repo], T]) -> T:
        if not rev.strip():
            raise GitError("no revision given")
        repo = self._open(create=False)
        if repo is None:
            raise GitError(f"unknown revision '{rev.strip()}': the memory history is empty")
        try:
            return work(repo)
        finally:
            repo.close()

    def _open(self, create: bool) -> Repo | None:
        """The repository, or None when there is none yet and `create` is off. Made on first use: imported
        from an old <workspace>/.git of the app's when there is one (decided once: a repository of the user's
        gets an empty history beside it), and given a baseline commit when `create` is on."""
        from dulwich.repo import Repo

        path = self.repository
        if path.is_dir():
            repo = Repo(str(path), bare=True)
        else:
            old = access.kind(self.workspace, ".git/objects") == "dir"
            imported = _import_old(self.workspace, path) if old else None
            if imported is None and not (create or old):
                return None
            repo = imported or _new(path)
        if create and _head(repo) is None:
            try:
                _commit(repo, self.workspace, list(MEMORY_FILES), "Baseline: memory files before any recorded change")
            except BaseException:
                repo.close()
                raise
        return repo


def _new(path: Path) -> Repo:
    """An empty repository at `path`, made aside and renamed into place, so it is there whole or not at all."""
    from dulwich.repo import Repo

    path.parent.mkdir(parents=True, exist_ok=True)
    staging = Path(tempfile.mkdtemp(prefix=".new-", dir=path.parent))
    try:
        _init(staging).close()
        os.rename(staging, path)
    finally:
        shutil.rmtree(staging, ignore_errors=True)
    return Repo(str(path), bare=True)


def _init(path: Path) -> Repo:
    from dulwich.repo import Repo

    # default_branch given: dulwich would otherwise read the user's git configuration for it
    return Repo.init_bare(str(path), default_branch=BRANCH.removeprefix(b"refs/heads/"))


def _close(repo: Repo | None) -> None:
    if repo is not None:
        repo.close()


def _head(repo: Repo) -> RawCommit | None:
    from dulwich.refs import HEADREF

    try:
        return cast("RawCommit", repo[repo.refs[HEADREF]])
    except KeyError:
        return None


def _commit(repo: Repo, workspace: Path, paths: list[str], message: str) -> str | None:
    """A commit of `paths` as they are in the workspace, on top of HEAD; None when nothing changed. Each file
    is read as data through the workspace reader: a link leading out or a pipe is left as it was recorded."""
    from dulwich.index import commit_tree
    from dulwich.object_store import iter_tree_contents
    from dulwich.objects import Blob, Commit, ObjectID
    from dulwich.refs import HEADREF

    head = _head(repo)
    entries: dict[bytes, tuple[ObjectID, int]] = {}
    if head is not None:
        for entry in iter_tree_contents(repo.object_store, head.tree):
            if entry.path is not None and entry.sha is not None and entry.mode is not None:
                entries[entry.path] = (entry.sha, entry.mode)
    for name in dict.fromkeys(paths):
        key = name.encode()
        try:
            data = access.read_bytes(workspace, name, FILE_LIMIT)
        except (FileNotFoundError, NotADirectoryError):
            entries.pop(key, None)
            continue
        except OSError as exc:
            access.report(exc, name)
            continue
        blob = Blob.from_string(data)
        repo.object_store.add_object(blob)
        entries[key] = (blob.id, _FILE_MODE)
    if head is None and not entries:
        return None  # an empty first commit is not worth making
    tree = commit_tree(repo.object_store, [(path, sha, mode) for path, (sha, mode) in sorted(entries.items())])
    if head is not None and tree == head.tree:
        return None
    commit = Commit()
    commit.tree = tree
    commit.parents = [head.id] if head is not None else []
    commit.author = commit.committer = IDENTITY
    commit.author_time = commit.commit_time = int(time.time())
    offset = datetime.now().astimezone().utcoffset() or timedelta(0)
    commit.author_timezone = commit.commit_timezone = int(offset.total_seconds())
    commit.encoding = b"UTF-8"
    commit.message = message.encode("utf-8")
    repo.object_store.add_object(commit)
    if not repo.refs.set_if_equals(HEADREF, head.id if head is not None else None, commit.id,
                                   committer=IDENTITY, message=b"commit"):
        raise GitError("the memory history changed while recording; try again")
    return commit.id.decode()


def _log(repo: Repo, limit: int) -> list[Commit]:
    if _head(repo) is None:
        return []
    return [_commit_of(entry.commit) for entry in repo.get_walker(max_entries=limit)]


def _resolve(repo: Repo, rev: str) -> RawCommit:
    from dulwich.objectspec import parse_commit

    try:
        return parse_commit(repo, rev.strip())
    except (KeyError, ValueError):
        raise GitError(f"unknown revision '{rev.strip()}'") from None


def _changed(repo: Repo, commit: RawCommit) -> list[str]:
    from dulwich.diff_tree import tree_changes

    names = []
    for change in tree_changes(repo.object_store, _parent_tree(repo, commit), commit.tree):
        for side in (change.new, change.old):  # a deletion has only the old side
            if side is not None and side.path:
                names.append(side.path.decode(errors="replace"))
                break
    return names


def _diff(repo: Repo, commit: RawCommit) -> str:
    from dulwich.patch import write_tree_diff

    buffer = io.BytesIO()
    write_tree_diff(buffer, repo.object_store, _parent_tree(repo, commit), commit.tree)
    return buffer.getvalue().decode(errors="replace")


def _blob(repo: Repo, commit: RawCommit, path: str) -> bytes | None:
    from dulwich.object_store import tree_lookup_path

    try:
        _, sha = tree_lookup_path(repo.__getitem__, commit.tree, path.encode())
    except KeyError:
        return None
    return repo[sha].as_raw_string()


def _put(workspace: Path, name: str, content: bytes | None) -> None:
    """Write a restored file through the workspace writer: a link planted at the name is replaced, not
    written through, and a folder on the way that leads out is refused."""
    if content is None:
        access.remove(workspace, name)
        if name.startswith("skills/"):  # the skill folder the change created, if nothing else is in it
            access.remove_empty_dir(workspace, name.rpartition("/")[0])
    else:
        access.write_bytes(workspace, name, content)


def _commit_of(commit: RawCommit) -> Commit:
    zone = timezone(timedelta(seconds=commit.author_timezone))
    date = datetime.fromtimestamp(commit.author_time, zone).isoformat()
    text = commit.message.decode(errors="replace")
    subject, _, body = text.partition("\n")
    return Commit(commit.id.decode(), date, subject.strip(), body.strip())


def _parent_tree(repo: Repo, commit: RawCommit) -> Any:
    return cast("RawCommit", repo[commit.parents[0]]).tree if commit.parents else None


def _import_old(workspace: Path, target: Path) -> Repo | None:
    """Bring an older version's <workspace>/.git over, once, when every commit in it is the app's. Its
    objects and current branch are copied as plain files through the workspace reader (its configuration,
    hooks, alternates and index are never read), into a fresh repository that is checked before it is kept."""
    from dulwich.objects import ObjectID
    from dulwich.refs import Ref
    from dulwich.repo import Repo

    head = _old_head(workspace)
    if head is None or _loose_author(workspace, head) not in (None, IDENTITY):
        return None  # the user's own repository (seen from its newest commit, when that is loose): not copied
    target.parent.mkdir(parents=True, exist_ok=True)
    staging = Path(tempfile.mkdtemp(prefix=".import-", dir=target.parent))
    try:
        repo = _init(staging)
        try:
            _copy_objects(workspace, staging / "objects")
            commits = 0
            for entry in repo.get_walker(include=[ObjectID(head.encode())], max_entries=OLD_REPO_COMMITS + 1):
                commits += 1
                if entry.commit.author != IDENTITY or commits > OLD_REPO_COMMITS:
                    log.info("the workspace's own git repository is left alone; the memory history starts "
                             "anew in %s", target)
                    return None
            repo.refs[Ref(BRANCH)] = ObjectID(head.encode())
        finally:
            repo.close()
        os.rename(staging, target)
    except (OSError, KeyError, ValueError) as exc:
        log.warning("the old memory history in %s/.git could not be imported (%s); it stays there and a new "
                    "one starts in %s", workspace, exc, target)
        return None
    except Exception as exc:  # dulwich's own errors for damaged objects: the old history is data, maybe forged
        log.warning("the old memory history in %s/.git is damaged (%s); it stays there and a new one starts "
                    "in %s", workspace, exc, target)
        return None
    finally:
        shutil.rmtree(staging, ignore_errors=True)
    log.info("memory history moved from %s/.git to %s (the old folder is no longer used)", workspace, target)
    return Repo(str(target), bare=True)


def _old_head(workspace: Path) -> str | None:
    """The commit the old repository's HEAD names (directly, or through a branch, loose or packed)."""
    def text(name: str) -> str:
        try:
            return access.read_text(workspace, f".git/{name}", 1024 * 1024)
        except OSError:
            return ""

    head = text("HEAD").strip()
    if _HEX.match(head):
        return head
    ref = head.removeprefix("ref: ").strip()
    if not re.fullmatch(r"refs/heads/[A-Za-z0-9._/-]{1,200}", ref) or ".." in ref:
        return None
    loose = text(ref).strip()
    if _HEX.match(loose):
        return loose
    for line in text("packed-refs").splitlines():
        sha, _, name = line.partition(" ")
        if name.strip() == ref and _HEX.match(sha):
            return sha
    return None


def _loose_author(workspace: Path, sha: str) -> bytes | None:
    """The author of a commit stored as a loose object (None when it is packed or unreadable)."""
    try:
        data = access.read_bytes(workspace, f".git/objects/{sha[:2]}/{sha[2:]}", 1024 * 1024)
        header = zlib.decompressobj().decompress(data, 64 * 1024)
    except (OSError, zlib.error):
        return None
    match = re.search(rb"\nauthor (.*?) \d+ [+-]\d{4}\n", header)
    return match.group(1) if match else None


def _copy_objects(workspace: Path, objects: Path) -> None:
    """Loose objects and packs of the old repository, as bytes (nothing else from it is copied)."""
    files, room = OLD_REPO_LIMITS

    def copy(relpath: str, dest: Path) -> None:
        nonlocal files, room
        files -= 1
        if files < 0:
            raise ValueError(f"more than {OLD_REPO_LIMITS[0]:,} files in .git/objects")
        data = access.read_bytes(workspace, f".git/objects/{relpath}", max(room, 0))
        room -= len(data)
        dest.parent.mkdir(parents=True, exist_ok=True)
        dest.write_bytes(data)

    def listed(relpath: str) -> list[access.Entry]:
        """A folder's names, no more than are ever copied: a sandboxed command can make millions."""
        entries = access.list_dir(workspace, relpath, limit=OLD_REPO_LIMITS[0] + 1)
        if len(entries) > OLD_REPO_LIMITS[0]:
            raise ValueError(f"more than {OLD_REPO_LIMITS[0]:,} names in {relpath}")
        return entries

    for folder in listed(".git/objects"):
        if folder.kind != "dir":
            continue
        if re.fullmatch(r"[0-9a-f]{2}", folder.name):
            for entry in listed(f".git/objects/{folder.name}"):
                if entry.kind == "file" and re.fullmatch(r"[0-9a-f]{38}", entry.name):
                    copy(f"{folder.name}/{entry.name}", objects / folder.name / entry.name)
        elif folder.name == "pack":
            for entry in listed(".git/objects/pack"):
                if entry.kind == "file" and re.fullmatch(r"pack-[0-9a-f]{40}\.(pack|idx)", entry.name):
                    copy(f"pack/{entry.name}", objects / "pack" / entry.name)
