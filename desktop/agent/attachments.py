"""Files a person attaches to a message, made readable for the model.

The model's file tools are kept to the workspace, so a file attached from ~/Downloads would be out of their
reach. Every attached file that is not a picture (pictures go to the model as images: desktop.agent.context)
is copied into the workspace under attachments/<chat>/ and the message says where; a text file of at most
INLINE_LIMIT also goes into the message whole, so the model has it without a tool call, and the saved
message keeps it for the turns after. A PDF's text is extracted (desktop/agent/pdf.py) and goes the same way,
with its page count; a longer text is kept beside the attachments as a .txt file. A file already in the
workspace is used where it is.

The workspace is written by sandboxed commands, so the copy goes through desktop.workspace.access: a command
may have made attachments/ a link out of the workspace, which the app's process must not follow (a file
already in the workspace is read the same way). The source outside the workspace is the person's choice and
is read as they named it; only a regular file is read (a named pipe would block forever)."""

from __future__ import annotations

import asyncio
import mimetypes
import os
import re
import stat
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from desktop.agent.context import user_content
from desktop.agent.pdf import NotReadable, is_pdf, page_count, pdf_text
from desktop.kernel.bus import InboundMessage, MessageKind
from desktop.kernel.wellformed import well_formed
from desktop.workspace import access

ATTACHMENT_LIMIT = 50 * 1024 * 1024  # a larger file is not attached: the person is told when attaching
INLINE_LIMIT = 64 * 1024  # text up to this size goes into the message (about 16,000 tokens)
FOLDER = "attachments"
COMPARED = 3  # taken names of an attachment's size read to find it already there (a Retry finds it first)
_SNIFF = 8192  # bytes looked at for a NUL, which marks a file as not text


class NotAttached(OSError):
    """A file that cannot be attached; the message says why, for people."""


@dataclass(frozen=True)
class Prepared:
    content: str  # what the model reads: the person's text, then a note on each attached file
    images: list[str] = field(default_factory=list)  # pictures, sent as images
    media: list[str] = field(default_factory=list)  # every attachment as kept: other files as their workspace copy
    names: list[str] = field(default_factory=list)  # each of `media` as the person named it (a copy's name is plainer)

    def saved(self) -> dict[str, list[str]]:
        """What the saved message keeps of its attachments: the files, and the names the person sent them by
        when a copy's differs (the chat names them so live, and must after a restart too)."""
        if not self.media:
            return {}
        if self.names == [Path(path).name for path in self.media]:
            return {"media": self.media}
        return {"media": self.media, "names": self.names}


def is_image(path: str) -> bool:
    return (mimetypes.guess_type(path)[0] or "").startswith("image/")


def problem(path: str) -> str | None:
    """Why `path` cannot be attached, in words for the person (None: it can). For the moment of attaching;
    `prepare` finds out again when the message goes."""
    shown = well_formed(Path(path).name or path)
    if well_formed(path) != path:  # given on a command line: the saved message could not keep its name or path
        return f"{shown} cannot be attached: its path is not UTF-8 text; rename it"
    try:
        info = os.stat(path)
    except FileNotFoundError:
        return f"{shown} was not found ({path})"
    except OSError as exc:
        return f"{shown} cannot be read ({exc.strerror or exc})"
    if stat.S_ISDIR(info.st_mode):
        return f"{shown} is a folder; attach the files in it instead"
    if not stat.S_ISREG(info.st_mode):
        return f"{shown} is not a regular file"
    if info.st_size > ATTACHMENT_LIMIT:
        return f"{shown} is {_size(info.st_size)}; files up to {_size(ATTACHMENT_LIMIT)} can be attached"
    if not os.access(path, os.R_OK):
        return f"{shown} cannot be read (permission denied)"
    return None


def prepare(text: str, media: list[str], workspace: Path, session_key: str,
            sent_as: Mapping[str, str] | None = None) -> Prepared:
    """The message the model reads for `text` with `media` attached (blocking: run it in a thread). `sent_as`:
    the names files were first sent by, where `media` names their workspace copies (a Retry): the message keeps
    those names, for the person and the model, and the copies are used where they are."""
    notes: list[str] = []
    images: list[str] = []
    kept: list[str] = []
    names: list[str] = []
    for item in media:
        name = (sent_as or {}).get(item) or Path(item).name or item
        if is_image(item):
            images.append(item)
            kept.append(item)
            names.append(name)
            continue
        try:
            data, where = _bring_in(Path(item), workspace, session_key)
        except OSError as exc:
            notes.append(f"[Not attached: “{name}”: {_reason(exc)}. Tell the user.]")
            continue
        kept.append(str(workspace / where))
        names.append(name)
        notes.append(_describe_pdf(name, where, data, workspace, session_key) if is_pdf(data)
                     else _describe(name, where, data))
    if not notes:
        return Prepared(text, images, kept, names)
    return Prepared("\n\n".join([text, *notes]) if text else "\n\n".join(notes), images, kept, names)


async def read(msg: InboundMessage, text: str, workspace: Path, session_key: str) -> Prepared:
    """`prepare` for a message as it is taken up, off the event loop; a message without files is its text."""
    if not msg.media:
        return Prepared(text)
    return await asyncio.to_thread(prepare, text, msg.media, workspace, session_key, msg.names)


def question(msg: InboundMessage, attached: Prepared) -> dict[str, Any]:
    """The person's message as its chat keeps it: the text the model reads, what they typed when that differs,
    the files kept, and its kind when the app sent it. One form for a message that starts a turn and one sent
    into a running turn, so a reload shows its files either way."""
    user: dict[str, Any] = {"role": "user", "content": attached.content}
    if attached.content != msg.content:
        user["typed"] = msg.content  # what the person wrote, shown as their message (content adds the files)
    user.update(attached.saved())  # the files kept, and the names they were sent by
    if msg.kind is not MessageKind.USER:
        user["kind"] = msg.kind.value
    return user


async def joined(msg: InboundMessage, workspace: Path, session_key: str) -> tuple[dict[str, Any], dict[str, Any]]:
    """A message sent into a running turn, with its files read as for one that starts a turn: as the chat keeps
    it, and as the model reads it (pictures as images, as desktop.agent.context sends the first message's)."""
    attached = await read(msg, msg.content, workspace, session_key)
    content = await asyncio.to_thread(user_content, attached.content, attached.images, workspace)  # reads images
    return question(msg, attached), {"role": "user", "content": content}


def pdf_pages(path: str, workspace: Path) -> str | None:
    """What a PDF's chip says of it before it is sent: "12 pages", or why its text cannot be read; None when
    the file is not a PDF or cannot be read now (the message says why when it goes). Blocking: run it in a
    thread. Read as the message will read it: a file in the workspace never through a link out of it."""
    if mimetypes.guess_type(path)[0] != "application/pdf":
        return None
    try:
        data, _ = _read_in_place(Path(path), workspace)
    except OSError:
        return None
    if not is_pdf(data):
        return None
    try:
        pages = page_count(data)
    except NotReadable as exc:
        return str(exc)
    return f"{pages} page{'' if pages == 1 else 's'}"


def safe_name(name: str) -> str:
    """A file or folder name that is plain in a shell and on any disk: letters, digits, `.`, `-` and `_`."""
    cleaned = re.sub(r"[^\w.\-]+", "_", name).strip("._") or "attachment"
    stem, suffix = os.path.splitext(cleaned)
    return stem[:100] + suffix[:20]


def _bring_in(source: Path, workspace: Path, session_key: str) -> tuple[bytes, str]:
    """The file's bytes and its path in the workspace, copied there when it lies outside."""
    data, relpath = _read_in_place(source, workspace)
    if relpath is not None:
        return data, relpath
    return data, _store(workspace, f"{FOLDER}/{safe_name(session_key)}", safe_name(source.name), data)


def _read_in_place(source: Path, workspace: Path) -> tuple[bytes, str | None]:
    """The file's bytes, and its path in the workspace when it lies there (None: outside it)."""
    inside = access.entered(str(source.absolute()), workspace)
    if inside is not None:
        root, relpath = inside
        return access.read_bytes(root, relpath, ATTACHMENT_LIMIT), relpath
    return _read_chosen(source.absolute()), None


def _read_chosen(path: Path) -> bytes:
    """A file the person chose outside the workspace: a regular file, at most ATTACHMENT_LIMIT."""
    fd = os.open(path, os.O_RDONLY | os.O_NONBLOCK | os.O_NOCTTY | os.O_CLOEXEC)
    with os.fdopen(fd, "rb") as fh:
        info = os.fstat(fd)
        if not stat.S_ISREG(info.st_mode):
            raise NotAttached("it is not a regular file")
        if info.st_size > ATTACHMENT_LIMIT:
            raise NotAttached(f"it is {_size(info.st_size)}; files up to {_size(ATTACHMENT_LIMIT)} can be attached")
        os.set_blocking(fd, True)
        data = fh.read(ATTACHMENT_LIMIT + 1)
    if len(data) > ATTACHMENT_LIMIT:
        raise NotAttached(f"it grew past {_size(ATTACHMENT_LIMIT)} while it was read")
    return data


def _store(workspace: Path, folder: str, name: str, data: bytes) -> str:
    """Write `data` as a new file in `folder` under a free name (report.csv, report-2.csv, ...); the same
    file attached again (a Retry) is found and used, not copied once more. Only the first COMPARED taken names
    of its size are read to compare: a sandboxed command can fill every name up to report-999.csv with files of
    that size, and each read whole made one attachment read up to 50 GB (past them, another copy is made)."""
    stem, suffix = os.path.splitext(name)
    compared = 0
    for number in range(1, 1000):
        relpath = f"{folder}/{name if number == 1 else f'{stem}-{number}{suffix}'}"
        if access.create_bytes(workspace, relpath, data):
            return relpath
        try:
            if compared < COMPARED and access.file_stat(workspace, relpath).st_size == len(data):
                compared += 1
                if access.read_bytes(workspace, relpath, len(data)) == data:
                    return relpath
        except OSError:
            pass  # taken by something else: a link leading out, a folder
    raise NotAttached(f"{folder} already holds 999 files named like {name}")


def _describe(name: str, where: str, data: bytes) -> str:
    """The note the model reads about one attached file: where it is, and its text when that is short."""
    head = f"[Attached file “{name}” ({_size(len(data))}), in the workspace at {where}."
    binary = f"{head} It is not text, so it is not shown here; use tools on that file if the task needs it.]"
    if b"\x00" in data[:_SNIFF]:
        return binary
    if len(data) > INLINE_LIMIT:
        return (f"{head} It is too long to include here ({_size(INLINE_LIMIT)} at most): read the parts you "
                "need from that file with your tools.]")
    try:
        text = data.decode("utf-8-sig").rstrip("\n")
    except UnicodeDecodeError:
        return binary
    return f"{head} Its full text follows, up to the line “[End of {name}]”.]\n{text}\n[End of {name}]"


def _describe_pdf(name: str, where: str, data: bytes, workspace: Path, session_key: str) -> str:
    """The note on an attached PDF: its page count and its text, extracted (in the message when short, else in a
    text file beside the chat's attachments for the model to read in parts)."""
    head = f"[Attached PDF “{name}” ({_size(len(data))}"
    try:
        document = pdf_text(data)
    except NotReadable as exc:
        return f"{head}), in the workspace at {where}. Its text could not be read: {exc}. Tell the user.]"
    head = f"{head}, {document.pages} page{'' if document.pages == 1 else 's'}), in the workspace at {where}."
    if not document.text:
        return f"{head} It has no text to extract (a scan, or pictures only). Tell the user if the task needs it.]"
    part = " (its first part only: the document is very long)" if document.cut else ""
    if len(document.text) <= INLINE_LIMIT:
        return f"{head} Its text{part}, extracted, follows up to the line “[End of {name}]”.]\n{document.text}\n" \
               f"[End of {name}]"
    text_file = _store(workspace, f"{FOLDER}/{safe_name(session_key)}", safe_name(name) + ".txt",
                       document.text.encode("utf-8"))
    return f"{head} Its text{part} is too long to include here; it was extracted to {text_file}: read the parts " \
           "you need from that file with your tools.]"


def _reason(exc: OSError) -> str:
    if isinstance(exc, (NotAttached, access.Refused)):
        return str(exc)
    if isinstance(exc, FileNotFoundError):
        return "it was not found"
    return str(exc.strerror or exc)


def _size(n: int) -> str:
    if n < 1024:
        return f"{n:,} bytes"
    if n < 1024 * 1024:
        return f"{n / 1024:.0f} KB"
    return f"{n / (1024 * 1024):.1f} MB".replace(".0 ", " ")
