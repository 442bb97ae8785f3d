"""Version history of the memory files: a git repository inside the workspace, so every Dream or
manual change can be inspected and undone. Uses the git program when installed, else dulwich."""

from __future__ import annotations

import asyncio
import io
import os
import re
import shutil
from dataclasses import dataclass
from datetime import datetime, timedelta, timezone
from pathlib import Path
from typing import TYPE_CHECKING, Any, TypeVar, cast

from desktop.atomic import atomic_write_text
from desktop.memory.store import MemoryStore
from desktop.workspace import MEMORY_FILES

if TYPE_CHECKING:  # dulwich is imported only when the git program is missing
    from collections.abc import Callable

    from dulwich.objects import Commit as RawCommit
    from dulwich.repo import Repo

T = TypeVar("T")

AUTHOR_NAME = "Nanobot"
AUTHOR_EMAIL = "nanobot@localhost"
_SKILL_FILE = re.compile(r"^skills/[a-z0-9][a-z0-9-]{0,63}/SKILL\.md$")


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


class GitHistory:
    def __init__(self, store: MemoryStore, use_cli: bool | None = None) -> None:
        self.store = store
        self.use_cli = shutil.which("git") is not None if use_cli is None else use_cli
        self._lock = asyncio.Lock()

    @property
    def workspace(self) -> Path:
        return self.store.workspace

    def _backend(self) -> _CliGit | _DulwichGit:
        return _CliGit(self.workspace) if self.use_cli else _DulwichGit(self.workspace)

    async def ensure(self) -> None:
        """Create the repository on first use, with a baseline commit of the memory files as they are,
        so even the first change has a "before" to go back to."""
        async with self._lock:
            await self._ensure(self._backend())

    async def commit(self, paths: list[str], message: str) -> str | None:
        """Commit these workspace-relative paths (deleted ones are removed); None when nothing changed."""
        async with self._lock:
            git = self._backend()
            await self._ensure(git)
            return await git.commit(paths, message)

    async def log(self, limit: int = 200) -> list[Commit]:
        if not (self.workspace / ".git").exists():
            return []
        return await self._backend().log(limit)

    async def show(self, rev: str) -> tuple[Commit, list[str], str]:
        """The commit, the files it changed and its unified diff."""
        git = self._backend()
        full = await self._resolve(git, rev)
        return await git.info(full), await git.changed(full), await git.diff(full)

    async def restore_before(self, rev: str) -> tuple[str | None, list[str]]:
        """Put the files a commit changed back as they were before it, as a new commit."""
        async with self._lock:
            git = self._backend()
            full = await self._resolve(git, rev)
            parent = await git.parent(full)
            if parent is None:
                raise GitError(f"{full[:7]} is the first recorded version; there is nothing before it")
            files = [f for f in await git.changed(full) if is_memory_path(f)]
            if not files:
                raise GitError(f"{full[:7]} changed no memory files")
            for name in files:
                content = await git.blob(parent, name)
                await asyncio.to_thread(_put, self.workspace, name, content)
            info = await git.info(full)
            new = await git.commit(files, f"Restore {', '.join(files)} to before {full[:7]}\n\n"
                                          f"Undoes: {info.subject}")
            return new, files

    async def _ensure(self, git: _CliGit | _DulwichGit) -> None:
        if (self.workspace / ".git").exists():
            return
        await git.init()
        await git.commit(list(MEMORY_FILES), "Baseline: memory files before any recorded change")

    async def _resolve(self, git: _CliGit | _DulwichGit, rev: str) -> str:
        if not rev.strip() or not (self.workspace / ".git").exists():
            raise GitError(f"unknown revision '{rev}': the memory history is empty" if rev.strip()
                           else "no revision given")
        return await git.resolve(rev.strip())


def _put(workspace: Path, name: str, content: bytes | None) -> None:
    path = workspace / name
    if content is None:
        path.unlink(missing_ok=True)
        if name.startswith("skills/"):
            try:
                path.parent.rmdir()  # the skill folder the change created, if nothing else is in it
            except OSError:
                pass
    else:
        atomic_write_text(path, content.decode("utf-8", errors="replace"))


class _CliGit:
    def __init__(self, workspace: Path) -> None:
        self.workspace = workspace

    async def _run(self, *args: str, check: bool = True, stdin: bytes | None = None) -> tuple[int, bytes]:
        env = {k: v for k, v in os.environ.items() if not k.startswith("GIT_")}
        env["GIT_TERMINAL_PROMPT"] = "0"
        proc = await asyncio.create_subprocess_exec(
            "git", "-c", f"user.name={AUTHOR_NAME}", "-c", f"user.email={AUTHOR_EMAIL}",
            "-c", "commit.gpgsign=false", "-c", "core.hooksPath=/dev/null", "-c", "core.quotepath=off",
            *args, cwd=self.workspace, env=env, stdin=asyncio.subprocess.PIPE if stdin is not None else None,
            stdout=asyncio.subprocess.PIPE, stderr=asyncio.subprocess.PIPE)
        out, err = await proc.communicate(stdin)
        code = proc.returncode or 0
        if check and code != 0:
            raise GitError(f"git {args[0]} failed: {err.decode(errors='replace').strip()[:500]}")
        return code, out

    async def init(self) -> None:
        await self._run("init", "-q")

    async def commit(self, paths: list[str], message: str) -> str | None:
        present = [p for p in paths if (self.workspace / p).exists()]
        gone = [p for p in paths if p not in present]
        if present:
            await self._run("add", "--", *present)
        if gone:
            await self._run("rm", "-q", "--cached", "--ignore-unmatch", "--", *gone)
        code, _ = await self._run("diff", "--cached", "--quiet", check=False)
        if code == 0:
            return None
        await self._run("commit", "-q", "-F", "-", stdin=message.encode())
        return (await self._run("rev-parse", "HEAD"))[1].decode().strip()

    async def log(self, limit: int) -> list[Commit]:
        code, out = await self._run("log", f"-n{limit}", "--format=%H%x1f%aI%x1f%s%x1f%b%x1e", check=False)
        if code != 0:
            return []  # no commit yet
        return [_parse_log(record) for record in out.decode(errors="replace").split("\x1e") if record.strip()]

    async def info(self, rev: str) -> Commit:
        out = (await self._run("log", "-1", "--format=%H%x1f%aI%x1f%s%x1f%b", rev))[1]
        return _parse_log(out.decode(errors="replace"))

    async def resolve(self, rev: str) -> str:
        code, out = await self._run("rev-parse", "-q", "--verify", f"{rev}^{{commit}}", check=False)
        if code != 0:
            raise GitError(f"unknown revision '{rev}'")
        return out.decode().strip()

    async def parent(self, rev: str) -> str | None:
        code, out = await self._run("rev-parse", "-q", "--verify", f"{rev}^", check=False)
        return out.decode().strip() if code == 0 else None

    async def changed(self, rev: str) -> list[str]:
        out = (await self._run("diff-tree", "--no-commit-id", "--name-only", "-r", "-z", "--root", rev))[1]
        return [p for p in out.decode(errors="replace").split("\0") if p]

    async def diff(self, rev: str) -> str:
        return (await self._run("show", "--no-color", "--format=", "--patch", rev))[1].decode(errors="replace")

    async def blob(self, rev: str, path: str) -> bytes | None:
        code, out = await self._run("cat-file", "blob", f"{rev}:{path}", check=False)
        return out if code == 0 else None


def _parse_log(record: str) -> Commit:
    rev, date, subject, body = (record.strip("\n").split("\x1f") + ["", "", "", ""])[:4]
    return Commit(rev.strip(), date, subject, body.strip())


class _DulwichGit:
    """The same operations in pure Python, for machines without the git program."""

    def __init__(self, workspace: Path) -> None:
        self.workspace = workspace

    async def init(self) -> None:
        from dulwich import porcelain

        await asyncio.to_thread(lambda: porcelain.init(str(self.workspace)).close())

    async def commit(self, paths: list[str], message: str) -> str | None:
        return await asyncio.to_thread(self._commit, paths, message)

    async def log(self, limit: int) -> list[Commit]:
        return await asyncio.to_thread(self._log, limit)

    async def info(self, rev: str) -> Commit:
        return await asyncio.to_thread(self._with_commit, rev, _commit_of)

    async def resolve(self, rev: str) -> str:
        return await asyncio.to_thread(self._with_commit, rev, lambda repo, c: c.id.decode())

    async def parent(self, rev: str) -> str | None:
        return await asyncio.to_thread(self._with_commit, rev,
                                       lambda repo, c: c.parents[0].decode() if c.parents else None)

    async def changed(self, rev: str) -> list[str]:
        def changed(repo: Repo, commit: RawCommit) -> list[str]:
            from dulwich.diff_tree import tree_changes

            names = []
            for change in tree_changes(repo.object_store, _parent_tree(repo, commit), commit.tree):
                for side in (change.new, change.old):  # a deletion has only the old side
                    if side is not None and side.path:
                        names.append(side.path.decode(errors="replace"))
                        break
            return names

        return await asyncio.to_thread(self._with_commit, rev, changed)

    async def diff(self, rev: str) -> str:
        def diff(repo: Repo, commit: RawCommit) -> str:
            from dulwich.patch import write_tree_diff

            buffer = io.BytesIO()
            write_tree_diff(buffer, repo.object_store, _parent_tree(repo, commit), commit.tree)
            return buffer.getvalue().decode(errors="replace")

        return await asyncio.to_thread(self._with_commit, rev, diff)

    async def blob(self, rev: str, path: str) -> bytes | None:
        def blob(repo: Repo, commit: RawCommit) -> bytes | None:
            from dulwich.object_store import tree_lookup_path

            try:
                _, sha = tree_lookup_path(repo.__getitem__, commit.tree, path.encode())
            except KeyError:
                return None
            return repo[sha].as_raw_string()

        return await asyncio.to_thread(self._with_commit, rev, blob)

    def _with_commit(self, rev: str, fn: Callable[[Repo, RawCommit], T]) -> T:
        from dulwich.objectspec import parse_commit
        from dulwich.repo import Repo

        with Repo(str(self.workspace)) as repo:
            try:
                commit = parse_commit(repo, rev)
            except (KeyError, ValueError):
                raise GitError(f"unknown revision '{rev}'") from None
            return fn(repo, commit)

    def _commit(self, paths: list[str], message: str) -> str | None:
        from dulwich import porcelain
        from dulwich.repo import Repo

        with Repo(str(self.workspace)) as repo:
            index = repo.open_index()
            gone = [p for p in paths if not (self.workspace / p).exists() and p.encode() in index]
            for name in gone:
                del index[name.encode()]
            index.write()
            present = [str(self.workspace / p) for p in paths if (self.workspace / p).exists()]
            if present:
                porcelain.add(repo, present)
            tree = repo.open_index().commit(repo.object_store)
            try:
                head_tree = cast("RawCommit", repo[repo.head()]).tree
            except KeyError:
                head_tree = None if present else tree  # an empty first commit is not worth making
            if tree == head_tree:
                return None
            ident = f"{AUTHOR_NAME} <{AUTHOR_EMAIL}>".encode()
            return porcelain.commit(repo, message=message.encode(), author=ident, committer=ident,
                                    no_verify=True, sign=False).decode()

    def _log(self, limit: int) -> list[Commit]:
        from dulwich.repo import Repo

        with Repo(str(self.workspace)) as repo:
            try:
                repo.head()
            except KeyError:
                return []
            return [_commit_of(repo, entry.commit) for entry in repo.get_walker(max_entries=limit)]


def _commit_of(repo: Repo, commit: RawCommit) -> Commit:
    zone = timezone(timedelta(seconds=commit.author_timezone))
    date = datetime.fromtimestamp(commit.author_time, zone).isoformat()
    text = commit.message.decode(errors="replace")
    subject, _, body = text.partition("\n")
    return Commit(commit.id.decode(), date, subject.strip(), body.strip())


def _parent_tree(repo: Repo, commit: RawCommit) -> Any:
    return cast("RawCommit", repo[commit.parents[0]]).tree if commit.parents else None
