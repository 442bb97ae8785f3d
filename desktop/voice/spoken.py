"""An answer's Markdown as words to say: what a person would read out from the rendered answer, not its source.

Emphasis marks, heading hashes, list bullets, table pipes and HTML tags are not spoken; each block (paragraph,
heading, list item, table row) is a sentence of its own, so a voice pauses between them. A code block is not
read out symbol by symbol: it becomes "Code block omitted." A web address is not spelled out either: a link is
read as its text, and an address standing alone as "a link to example.com". A picture is its description.

Speech models take a few thousand characters at a time (OpenAI's: 4096), so a long answer is cut into pieces
at paragraph, then sentence, then word boundaries (`pieces`)."""

from __future__ import annotations

import re
from functools import cache
from typing import TYPE_CHECKING
from urllib.parse import urlsplit

if TYPE_CHECKING:
    from markdown_it import MarkdownIt
    from markdown_it.token import Token

CODE_BLOCK = "Code block omitted."
LONG_CODE = 80  # characters: inline code longer than this is a listing, not a word, and is not read out
_URL = re.compile(r"\b(?:https?|ftp)://[^\s<>()\[\]]+|\bwww\.[^\s<>()\[\]]+\.[a-z]{2,}[^\s<>()\[\]]*", re.I)
_SENTENCE_END = re.compile(r"[.!?:;…]['\")\]]*$")
_SENTENCES = re.compile(r"(?<=[.!?…])\s+")


@cache
def _parser() -> MarkdownIt:
    """Made on the first answer read aloud: the Markdown library is 2 MB of the app's start otherwise."""
    from markdown_it import MarkdownIt

    return MarkdownIt("commonmark", {"html": True}).enable(["table", "strikethrough"])


def speakable(markdown: str) -> str:
    """The words of `markdown`, one block a line."""
    lines: list[str] = []
    current: list[str] = []

    def end_block() -> None:
        line = re.sub(r"\s+", " ", "".join(current)).strip()
        current.clear()
        if line:
            lines.append(line if _SENTENCE_END.search(line) else line + ".")

    for token in _parser().parse(markdown):
        if token.type in ("fence", "code_block"):
            end_block()
            lines.append(CODE_BLOCK)
        elif token.type == "inline":
            if current and current[-1] and not current[-1].endswith(" "):
                current.append(", ")  # the next cell of a table row
            current.append(_inline(token.children or []))
        elif token.type in ("paragraph_close", "heading_close", "tr_close", "list_item_close"):
            end_block()
    end_block()
    return "\n".join(lines)


def _inline(children: list[Token]) -> str:
    out: list[str] = []
    link_start: int | None = None  # where the open link's words begin in `out`
    link_text = href = ""  # the open link's text as written, and where it leads
    for child in children:
        if child.type == "text":
            out.append(_URL.sub(lambda match: _link_to(match.group(0)), child.content))
            link_text += child.content
        elif child.type == "code_inline":
            code = child.content.strip()
            out.append(_link_to(code) if _URL.fullmatch(code) else "code omitted" if len(code) > LONG_CODE else code)
            link_text += code
        elif child.type in ("softbreak", "hardbreak"):
            out.append(" ")
        elif child.type == "image":
            described = child.content.strip()
            out.append(f"picture: {described}" if described else "a picture")
        elif child.type == "link_open":
            link_start, link_text, href = len(out), "", str(child.attrs.get("href") or "")
        elif child.type == "link_close" and link_start is not None:
            if not link_text.strip() or _URL.fullmatch(link_text.strip()) or link_text.strip() == href:
                out[link_start:] = [_link_to(href)]  # an address written out as its own words
            link_start = None
    return "".join(out)


def _link_to(url: str) -> str:
    """How an address is said: only where it leads."""
    address = url.rstrip(".,;:!?'\"")
    host = urlsplit(address if "://" in address else f"http://{address}").hostname or ""
    host = host.removeprefix("www.")
    said = f"a link to {host}" if host else "a link"
    return said + url[len(address):]


def pieces(text: str, limit: int) -> list[str]:
    """`text` in pieces of at most `limit` characters, cut between lines where it can, else between sentences,
    else between words."""
    out: list[str] = []
    current = ""
    for part, new_line in _parts(text, limit):
        joined = f"{current}{chr(10) if new_line else ' '}{part}" if current else part
        if len(joined) <= limit:
            current = joined
        else:
            out.append(current)
            current = part
    if current:
        out.append(current)
    return out


def _parts(text: str, limit: int) -> list[tuple[str, bool]]:
    """Lines, each split further until no part is longer than `limit`; with each part, whether it starts a
    line."""
    parts: list[tuple[str, bool]] = []
    for line in map(str.strip, text.splitlines()):
        if not line:
            continue
        if len(line) <= limit:
            parts.append((line, True))
            continue
        first = True
        for sentence in _SENTENCES.split(line):
            while len(sentence) > limit:
                cut = sentence.rfind(" ", 0, limit + 1)
                cut = cut if cut > 0 else limit
                parts.append((sentence[:cut].rstrip(), first))
                sentence, first = sentence[cut:].lstrip(), False
            if sentence:
                parts.append((sentence, first))
                first = False
    return parts
