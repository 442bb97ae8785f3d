"""File tools: read, write, edit, list, glob and grep, every path checked by the workspace guard.

With the workspace restriction on, a path the guard accepted is also opened through desktop.workspace.access
within its root, so a link a command swaps in between the check and the open cannot lead the read or the
write out (and a named pipe is refused instead of blocking the tool)."""

from __future__ import annotations

import asyncio
import base64
import contextlib
import difflib
import fnmatch
import heapq
import io
import os
import stat
import time
from collections.abc import Callable, Iterator
from pathlib import Path, PurePosixPath
from typing import TYPE_CHECKING, Any, BinaryIO, TextIO, TypeVar

from desktop.kernel.atomic import atomic_write_text
from desktop.kernel.patterns import BadPattern, Pattern, TooSlow
from desktop.tools import glob_walk
from desktop.tools.base import Tool, ToolContext, ToolError, ToolOutput, display_path
from desktop.tools.path_guard import PathGuard
from desktop.workspace import access

if TYPE_CHECKING:
    from desktop.config import Config

READ_CHAR_LIMIT = 16_000
IMAGE_BYTE_LIMIT = 10 * 1024 * 1024
LIST_LIMIT = 200
LIST_SECONDS = 10.0  # counting a folder's entries: millions take longer than anyone waits
GLOB_LIMIT = 200
GREP_LIMIT = 200
GREP_LINE_CHARS = 300
NEAR_MATCH_CHARS = 2_000  # of an old_text edit_file looks for a near match of (a comparison costs its square)
NEAR_MATCH_SECONDS = 2.0
NEAR_MATCH_RATIO = 0.5  # how alike a passage must be to be shown
GREP_SEARCHED_CHARS = 1_000_000  # of one line: the rest of a longer one is not searched
GLOB_SECONDS = 10.0  # walking the folder: a workspace of millions of files takes longer than anyone waits
GREP_SECONDS = 10.0  # matching, over all files (desktop/kernel/patterns.py: why a pattern can run for hours)
GREP_WALK_SECONDS = 10.0  # the whole search, files listed and searched (matching alone has GREP_SECONDS)
TOO_DEEP = "stopped: folders here are nested too deep to search; pass a folder inside as `path`"
_SNIFF_BYTES = 8192
DIFF_LINES = 400  # an approval card's diff is cut here: it shows what it can, the rest is marked
DIFF_READ_BYTES = 1024 * 1024  # of the file as it is, for that diff
_IMAGE_TYPES = {".png": "image/png", ".jpg": "image/jpeg", ".jpeg": "image/jpeg",
                ".gif": "image/gif", ".webp": "image/webp"}

# Mode for files the tools create: what the user's shell would give them (mkstemp alone gives 0600).
_UMASK = os.umask(0o022)
os.umask(_UMASK)
_NEW_FILE_MODE = 0o666 & ~_UMASK

T = TypeVar("T")


async def _in_thread(fn: Callable[..., T], *args: Any) -> T:
    """Run blocking file work off the event loop; OS failures become errors the model can read."""
    try:
        return await asyncio.to_thread(fn, *args)
    except OSError as exc:
        where = f" ({exc.filename})" if exc.filename else ""
        raise ToolError(f"{exc.strerror or exc}{where}") from None


def _path_param(description: str) -> dict[str, Any]:
    return {"type": "string", "minLength": 1, "description": description}


class _FileTool(Tool):
    def __init__(self, guard: PathGuard) -> None:
        self.guard = guard

    def display(self, path: Path) -> str:
        return display_path(path, self.guard.workspace.resolve())

    async def needs_approval(self, config: Config, arguments: dict[str, Any]) -> str | None:
        """Inside the workspace the guard keeps it; outside, with the restriction off, the person says yes."""
        if self.guard.restrict:
            return None
        path = Path(arguments.get("path") or ".").expanduser()
        path = (path if path.is_absolute() else self.guard.workspace / path).resolve()
        workspace = self.guard.workspace.resolve()
        if path == workspace or workspace in path.parents:
            return None
        return f"{path} is outside the workspace and tools.restrict_to_workspace is off"

    async def diff(self, path: str, new_of: Callable[[str], str]) -> str:
        """The change `new_of(old text)` would make, against the file as it is now (read off the loop, through
        the guarded reader: a link out of the workspace or a pipe gives no "before", never its contents or a
        wait), cut at DIFF_LINES."""
        def before() -> tuple[str, str]:
            shown = path
            try:
                target = self.guard.resolve(path, write=True)
                shown = str(target)
                with self.open_read(target) as fh:
                    return shown, fh.read(DIFF_READ_BYTES).decode("utf-8", errors="replace")
            except (OSError, ToolError):
                return shown, ""

        shown, old = await asyncio.to_thread(before)
        lines = list(difflib.unified_diff(old.splitlines(), new_of(old).splitlines(), shown, shown, lineterm=""))
        if len(lines) > DIFF_LINES:
            lines = [*lines[:DIFF_LINES], f"… {len(lines) - DIFF_LINES} more lines"]
        return "\n".join(lines)

    def open_read(self, target: Path) -> BinaryIO:
        """A path the guard resolved, opened for reading within its root (within "/" when unrestricted:
        any path then, but still only a regular file, so a named pipe never blocks the tool)."""
        where = self.guard.confine(target) or (Path("/"), str(target).lstrip("/"))
        return access.open_file(*where)

    def write(self, target: Path, text: str) -> None:
        """Atomic write keeping an existing file's permissions, within the target's root when restricted."""
        where = self.guard.confine(target)
        if where is None:
            write_text_keeping_mode(target, text)
        else:
            access.write_text(*where, text)


class ReadFileTool(_FileTool):
    name = "read_file"
    description = ("Read a text file (shown with line numbers, which are not part of the file) or an image "
                   "(png, jpg, gif, webp). Long files are cut: use offset/limit to read further.")
    parameters = {
        "type": "object",
        "properties": {
            "path": _path_param("File path, relative to the workspace or absolute."),
            "offset": {"type": "integer", "minimum": 1, "description": "First line to read (1-based)."},
            "limit": {"type": "integer", "minimum": 1, "description": "Maximum number of lines to read."},
        },
        "required": ["path"],
        "additionalProperties": False,
    }

    async def execute(self, ctx: ToolContext, path: str, offset: int = 1,  # type: ignore[override]
                      limit: int | None = None) -> ToolOutput:
        target = self.guard.resolve(path)
        return await _in_thread(self._read, target, offset, limit)

    def _read(self, target: Path, offset: int, limit: int | None) -> ToolOutput:
        _require_file(target, self.display(target))
        if target.suffix.lower() in _IMAGE_TYPES:
            return self._image(target)
        numbered: list[str] = []
        used = total = 0
        cut = False
        with self.open_read(target) as raw:
            _require_text(raw, self.display(target))
            raw.seek(0)
            fh = io.TextIOWrapper(raw, encoding="utf-8", errors="replace")
            for total, line in enumerate(_lines(fh, READ_CHAR_LIMIT + 1), 1):
                if total < offset or cut or (limit is not None and len(numbered) >= limit):
                    continue
                entry = f"{total:>6}\t" + line
                if used + len(entry) + 1 > READ_CHAR_LIMIT:
                    if not numbered:  # one huge line: show its start rather than nothing
                        numbered.append(entry[:READ_CHAR_LIMIT] + " ... [line cut]")
                    cut = True
                    continue
                numbered.append(entry)
                used += len(entry) + 1
        if total == 0:
            return f"({self.display(target)} is empty)"
        if offset > total:
            raise ToolError(f"offset {offset} is past the end of {self.display(target)} ({total} lines)")
        last = offset + len(numbered) - 1
        text = "\n".join(numbered)
        if last < total:
            why = "output cut at the size limit" if cut else "limit reached"
            text += (f"\n\n[Showing lines {offset}-{last} of {total} ({why}). "
                     f"Use offset={last + 1} to read more.]")
        return text

    def _image(self, target: Path) -> ToolOutput:
        with self.open_read(target) as fh:
            size = os.fstat(fh.fileno()).st_size
            if size > IMAGE_BYTE_LIMIT:
                raise ToolError(f"{self.display(target)} is too large to view ({size:,} bytes; "
                                f"the limit is {IMAGE_BYTE_LIMIT:,})")
            data = base64.b64encode(fh.read(IMAGE_BYTE_LIMIT)).decode("ascii")
        mime = _IMAGE_TYPES[target.suffix.lower()]
        return [{"type": "text", "text": f"Image {self.display(target)} ({size:,} bytes)"},
                {"type": "image_url", "image_url": {"url": f"data:{mime};base64,{data}"}}]


class WriteFileTool(_FileTool):
    name = "write_file"
    approval_title = "Write this file?"
    description = "Create or overwrite a text file with the given content (parent folders are created)."
    parameters = {
        "type": "object",
        "properties": {
            "path": _path_param("File path, relative to the workspace or absolute."),
            "content": {"type": "string", "description": "The complete new content of the file."},
        },
        "required": ["path", "content"],
        "additionalProperties": False,
    }

    async def execute(self, ctx: ToolContext, path: str, content: str) -> ToolOutput:  # type: ignore[override]
        target = self.guard.resolve(path, write=True)
        return await _in_thread(self._write, target, content)

    async def change(self, arguments: dict[str, Any]) -> str:
        return await self.diff(str(arguments["path"]), lambda _old: str(arguments.get("content", "")))

    def _write(self, target: Path, content: str) -> str:
        if target.is_dir():
            raise ToolError(f"{self.display(target)} is a folder")
        verb = "Overwrote" if target.exists() else "Created"
        self.write(target, content)
        return f"{verb} {self.display(target)} ({len(content):,} characters)."


class EditFileTool(_FileTool):
    name = "edit_file"
    approval_title = "Change this file?"
    description = ("Replace old_text with new_text in a file. old_text must match the file exactly (whitespace "
                   "included) and occur exactly once, unless replace_all is true.")
    parameters = {
        "type": "object",
        "properties": {
            "path": _path_param("File path, relative to the workspace or absolute."),
            "old_text": {"type": "string", "minLength": 1, "description": "Exact text to find."},
            "new_text": {"type": "string", "description": "Replacement text."},
            "replace_all": {"type": "boolean", "description": "Replace every occurrence (default false)."},
        },
        "required": ["path", "old_text", "new_text"],
        "additionalProperties": False,
    }

    async def execute(self, ctx: ToolContext, path: str, old_text: str,  # type: ignore[override]
                      new_text: str, replace_all: bool = False) -> ToolOutput:
        target = self.guard.resolve(path, write=True)
        return await _in_thread(self._edit, target, old_text, new_text, replace_all)

    async def change(self, arguments: dict[str, Any]) -> str:
        found, put = str(arguments.get("old_text", "")), str(arguments.get("new_text", ""))
        return await self.diff(str(arguments["path"]),
                               lambda old: old.replace(found, put, -1 if arguments.get("replace_all") else 1))

    def _edit(self, target: Path, old: str, new: str, replace_all: bool) -> str:
        if old == new:
            raise ToolError("old_text and new_text are identical: nothing to change")
        _require_file(target, self.display(target))
        with self.open_read(target) as fh:
            _require_text(fh, self.display(target))
            fh.seek(0)
            data = fh.read()
        try:
            content = data.decode("utf-8")  # bytes as they are: CRLF files stay CRLF
        except UnicodeDecodeError:
            raise ToolError(f"{self.display(target)} is not UTF-8 text; edit_file only edits UTF-8 files") from None
        if old not in content and "\r\n" in content and "\r\n" not in old:
            old, new = old.replace("\n", "\r\n"), new.replace("\n", "\r\n")
        count = content.count(old)
        if count == 0:
            raise ToolError(f"old_text was not found in {self.display(target)}.{_near_match_hint(content, old)}")
        if count > 1 and not replace_all:
            lines = _line_numbers_of(content, old)
            raise ToolError(f"old_text occurs {count} times in {self.display(target)} (lines {lines}). Include "
                            "more surrounding text so it matches once, or set replace_all to true.")
        self.write(target, content.replace(old, new))
        return f"Edited {self.display(target)}: replaced {count} occurrence{'s' if count > 1 else ''}."


class _Counted:
    """Counts what passes through `over`, and ends it at a deadline (`stopped` then says so)."""

    def __init__(self, seconds: float) -> None:
        self.seconds = seconds
        self.n = 0
        self.stopped = False

    def over(self, items: Iterator[T]) -> Iterator[T]:
        deadline = time.monotonic() + self.seconds
        for item in items:
            if time.monotonic() > deadline:
                self.stopped = True
                return
            self.n += 1
            yield item


class ListDirTool(_FileTool):
    name = "list_dir"
    description = "List a folder: sub-folders end with '/', files show their size."
    parameters = {
        "type": "object",
        "properties": {"path": _path_param("Folder path, relative to the workspace (default: the workspace).")},
        "additionalProperties": False,
    }

    async def execute(self, ctx: ToolContext, path: str = ".") -> ToolOutput:  # type: ignore[override]
        target = self.guard.resolve(path)
        return await _in_thread(self._list, target)

    def _list(self, target: Path) -> str:
        if not target.exists():
            raise ToolError(f"{self.display(target)} does not exist")
        if not target.is_dir():
            raise ToolError(f"{self.display(target)} is a file, not a folder; use read_file")
        where = self.guard.confine(target)
        counted = _Counted(LIST_SECONDS)
        with contextlib.ExitStack() as stack:
            folder = target if where is None else stack.enter_context(access.opened_dir(*where))
            with os.scandir(folder) as it:
                # Only the first LIST_LIMIT are kept while the rest are counted: a folder can hold millions.
                # A link sorts as what it is, not what it leads to: that could be outside, or slow to reach.
                first = heapq.nsmallest(LIST_LIMIT, counted.over(it),
                                        key=lambda e: (not e.is_dir(follow_symlinks=False), e.name.lower()))
                lines = [self._describe(e, where) for e in first]
        if not first and not counted.stopped:
            return f"{self.display(target)} is empty."
        if counted.stopped:
            lines.append(f"... stopped counting after {LIST_SECONDS:.0f} s at {counted.n} entries (the folder "
                         f"holds more): these are the first {len(first)} by name of those counted")
        elif counted.n > LIST_LIMIT:
            lines.append(f"... and {counted.n - LIST_LIMIT} more entries ({counted.n} in all; "
                         f"showing the first {LIST_LIMIT} by name)")
        return "\n".join(lines)


    @staticmethod
    def _describe(entry: os.DirEntry[Any], where: tuple[Path, str] | None) -> str:
        """An entry as listed; within a root, a link is looked through only as far as it stays inside."""
        if where is None or not entry.is_symlink():
            return _describe_entry(entry)
        root, folder = where
        try:
            info = access.file_stat(root, f"{folder}/{entry.name}" if folder else entry.name)
        except access.Refused:
            return f"{entry.name} (link leading outside; not followed)"
        except OSError:
            return f"{entry.name} (broken link)"
        return f"{entry.name}/" if stat.S_ISDIR(info.st_mode) else f"{entry.name}  ({_human_size(info.st_size)})"


class GlobTool(_FileTool):
    name = "glob"
    description = ("Find files by glob pattern (e.g. '**/*.py', 'notes/*.md'), relative to the workspace or to "
                   "`path`. Results are sorted; .git folders are skipped.")
    parameters = {
        "type": "object",
        "properties": {
            "pattern": {"type": "string", "minLength": 1, "description": "Glob pattern; ** matches any depth."},
            "path": _path_param("Folder to search from (default: the workspace)."),
        },
        "required": ["pattern"],
        "additionalProperties": False,
    }

    async def execute(self, ctx: ToolContext, pattern: str, path: str = ".") -> ToolOutput:  # type: ignore[override]
        base = self.guard.resolve(path)
        if pattern.startswith(("/", "~")) or ".." in PurePosixPath(pattern).parts:
            raise ToolError("pattern must be relative and must not contain '..'; pass the folder as `path`")
        return await _in_thread(self._glob, base, pattern)

    def _glob(self, base: Path, pattern: str) -> str:
        if not base.is_dir():
            raise ToolError(f"{self.display(base)} is not a folder")
        parts = glob_walk.pattern_parts(pattern)
        if not parts:
            raise ToolError("pattern names nothing; use '*' for every file in the folder")
        count = 0

        def shown() -> Iterator[str]:
            nonlocal count
            for found, _ in glob_walk.matches(base, parts, GLOB_SECONDS):
                match = base / found
                if self._allowed(match):
                    count += 1
                    yield self.display(match) + ("/" if match.is_dir() else "")

        try:  # only the first GLOB_LIMIT are kept while the rest are counted: a folder can hold millions
            lines = heapq.nsmallest(GLOB_LIMIT, shown())
        except glob_walk.TooLong:
            raise ToolError(f"stopped after {GLOB_SECONDS:.0f} s: the folder holds too much to search this way; "
                            f"narrow the path or the pattern ({count} found so far)") from None
        except glob_walk.TooDeep:  # a chain of folders a command nested past glob_walk.MAX_DEPTH
            raise ToolError(f"{TOO_DEEP} ({count} found so far)") from None
        if not lines:
            return f"No files match {pattern!r} in {self.display(base)}."
        if count > GLOB_LIMIT:
            lines.append(f"... and {count - GLOB_LIMIT} more (showing {GLOB_LIMIT} of {count})")
        return "\n".join(lines)

    def _allowed(self, path: Path) -> bool:
        """A match may be a symlink leading out of the workspace: apply the guard to each result."""
        try:
            self.guard.resolve(str(path))
        except ToolError:
            return False
        return True


class GrepTool(_FileTool):
    name = "grep"
    description = ("Search file contents for a regular expression (or a fixed string) under a folder or in one "
                   "file. Prints 'path:line: text'. Binary files and .git folders are skipped; a line longer than "
                   f"{GREP_SEARCHED_CHARS:,} characters is searched in its first {GREP_SEARCHED_CHARS:,}.")
    parameters = {
        "type": "object",
        "properties": {
            "pattern": {"type": "string", "minLength": 1, "description": "Python regular expression."},
            "path": _path_param("Folder or file to search (default: the workspace)."),
            "glob": {"type": "string", "description": "Only search files whose name matches, e.g. '*.md'."},
            "fixed_strings": {"type": "boolean", "description": "Treat pattern as plain text (default false)."},
            "ignore_case": {"type": "boolean", "description": "Case-insensitive search (default false)."},
        },
        "required": ["pattern"],
        "additionalProperties": False,
    }

    async def execute(self, ctx: ToolContext, pattern: str, path: str = ".",  # type: ignore[override]
                      glob: str | None = None, fixed_strings: bool = False,
                      ignore_case: bool = False) -> ToolOutput:
        root = self.guard.resolve(path)
        try:
            regex = Pattern(pattern, ignore_case=ignore_case, literal=fixed_strings, seconds=GREP_SECONDS)
        except BadPattern as exc:
            raise ToolError(f"invalid regular expression {pattern!r}: {exc}. "
                            "Escape special characters or set fixed_strings to true.") from None
        try:
            return await _in_thread(self._grep, root, regex, glob)
        except glob_walk.TooDeep:  # as for glob
            raise ToolError(TOO_DEEP) from None
        except TooSlow:
            raise ToolError(f"stopped after {GREP_SECONDS:.0f} s: the regular expression {pattern!r} backtracks too "
                            "much on these files; simplify it (no nested repeats like (a+)+), narrow the path or "
                            "glob, or set fixed_strings to true") from None

    def _grep(self, root: Path, regex: Pattern, glob: str | None) -> str:
        if not root.exists():
            raise ToolError(f"{self.display(root)} does not exist")
        hits: list[str] = []
        more = False
        for file in self._files(root, glob):
            for number, line in self._matching_lines(file, regex):
                if len(hits) >= GREP_LIMIT:
                    more = True
                    break
                text = line if len(line) <= GREP_LINE_CHARS else line[:GREP_LINE_CHARS] + " ..."
                hits.append(f"{self.display(file)}:{number}: {text}")
            if more:
                break
        if not hits:
            return f"No matches for {regex.pattern!r} in {self.display(root)}."
        if more:
            hits.append(f"... [stopped at {GREP_LIMIT} matches; narrow the pattern, path or glob]")
        return "\n".join(hits)

    def _files(self, root: Path, glob: str | None) -> Iterator[Path]:
        """The files to search, as the walk finds them; it stops GREP_WALK_SECONDS after it began (searching
        included). Listing a workspace of millions of files (a sandboxed command makes them in minutes) ran on in
        a thread no Stop can end, and held every name before the first was searched."""
        if root.is_file():
            yield root
            return
        try:
            for found, is_dir in glob_walk.matches(root, glob_walk.EVERY_PATH, GREP_WALK_SECONDS):
                if is_dir or (glob and not _glob_matches(found, glob)):
                    continue
                file = root / found
                try:
                    self.guard.resolve(str(file))  # a symlink may point outside the workspace
                except ToolError:
                    continue
                yield file
        except glob_walk.TooLong:
            raise ToolError(f"stopped after {GREP_WALK_SECONDS:.0f} s: this folder holds too much to search this way; "
                            "narrow the path or glob") from None

    def _matching_lines(self, file: Path, regex: Pattern) -> Iterator[tuple[int, str]]:
        """Each matching line's number and start, as they are found: the caller stops at GREP_LIMIT, so a file
        whose every line matches is not held whole."""
        try:
            with self.open_read(file) as fh:
                if b"\x00" in fh.read(_SNIFF_BYTES):
                    return
                fh.seek(0)
                text = io.TextIOWrapper(fh, encoding="utf-8", errors="replace")
                for n, line in enumerate(_lines(text, GREP_SEARCHED_CHARS), 1):
                    if regex.search(line):
                        yield n, line[:GREP_LINE_CHARS + 1]
        except (OSError, ToolError):  # unreadable, vanished or refused while walking: skip, like grep -s
            return


def _lines(text: TextIO, keep: int) -> Iterator[str]:
    """Each line without its newline, cut to its first `keep` characters. The rest of a longer line is read and
    dropped a piece at a time: a file of one line (a sandboxed command can write one up to tools.exec.max_file_mb)
    is never held whole by the app."""
    while line := text.readline(keep):
        if not line.endswith("\n"):
            while (rest := text.readline(keep)) and not rest.endswith("\n"):
                pass
        yield line.rstrip("\n")


def write_text_keeping_mode(target: Path, text: str) -> None:
    """Atomic write that keeps an existing file's permissions (a script stays executable)."""
    try:
        mode = target.stat().st_mode & 0o7777
    except FileNotFoundError:
        mode = _NEW_FILE_MODE
    atomic_write_text(target, text)
    os.chmod(target, mode)


def _require_file(target: Path, label: str) -> None:
    if not target.exists():
        raise ToolError(f"{label} does not exist")
    if target.is_dir():
        raise ToolError(f"{label} is a folder; use list_dir")


def _require_text(fh: BinaryIO, label: str) -> None:
    if b"\x00" in fh.read(_SNIFF_BYTES):
        raise ToolError(f"{label} looks like a binary file ({os.fstat(fh.fileno()).st_size:,} bytes); "
                        "only text files and images can be read")


def _glob_matches(relative: str, glob: str) -> bool:
    if "/" in glob:
        return PurePosixPath(relative).match(glob)
    return fnmatch.fnmatch(os.path.basename(relative), glob)


def _describe_entry(entry: os.DirEntry[Any]) -> str:
    try:
        if entry.is_dir():
            return f"{entry.name}/"
        size = entry.stat().st_size
    except OSError:  # a dangling symlink
        return f"{entry.name} (broken link)"
    return f"{entry.name}  ({_human_size(size)})"


def _human_size(size: int) -> str:
    if size < 1024:
        return f"{size} B"
    value = float(size)
    for unit in ("KB", "MB", "GB"):
        value /= 1024
        if value < 1024 or unit == "GB":
            break
    return f"{value:.1f} {unit}"


def _line_numbers_of(content: str, old: str) -> str:
    starts: list[str] = []
    at = content.find(old)
    while at != -1 and len(starts) < 10:
        starts.append(str(content.count("\n", 0, at) + 1))
        at = content.find(old, at + 1)
    return ", ".join(starts)


def _near_match_hint(content: str, old: str) -> str:
    """Point at the most similar passage, so the model can copy the exact text instead of guessing.

    One comparison costs up to the product of the two lengths (a stretch of one repeated letter is the worst),
    in a thread no Stop can end: so only stretches that could be alike enough to show are compared (their
    lengths within three times of each other, which `real_quick_ratio` tells for free), only for an old_text
    of at most NEAR_MATCH_CHARS, and not past NEAR_MATCH_SECONDS in all."""
    lines = content.splitlines()
    width = max(1, len(old.splitlines()))
    if not lines or len(lines) > 20_000 or len(old) > NEAR_MATCH_CHARS:
        return " Read the file again and copy the exact text."
    best, best_at = NEAR_MATCH_RATIO, -1
    deadline = time.monotonic() + NEAR_MATCH_SECONDS
    matcher = difflib.SequenceMatcher(autojunk=False)
    matcher.set_seq2(old)
    for start in range(0, max(1, len(lines) - width + 1)):
        if time.monotonic() > deadline:
            break
        matcher.set_seq1("\n".join(lines[start:start + width]))
        if matcher.real_quick_ratio() > best and matcher.quick_ratio() > best:
            ratio = matcher.ratio()
            if ratio > best:
                best, best_at = ratio, start
    if best_at < 0:
        return " Read the file again and copy the exact text (whitespace and indentation must match)."
    snippet = "\n".join(lines[best_at:best_at + width])
    return (f" The most similar text ({best:.0%} alike) starts at line {best_at + 1}:\n{snippet}\n"
            "Copy it exactly (whitespace and indentation must match).")
