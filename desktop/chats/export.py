"""A chat as a file a person can read anywhere: Markdown, or one self-contained HTML page.

Built from the same rows the chat window shows (desktop/conversation/transcript.py), so the export reads like
the chat: each message under a bold speaker line, each tool step folded (a `<details>` in HTML, whose summary is
what the chat's folded step says), reasoning only when asked for. Everything in the page that came from a
message is escaped: Markdown is rendered with raw HTML turned off (markdown-it), so a message holding `<script>`
shows those characters and runs nothing, and links only keep safe schemes. Attached images are put inline as
`data:` URLs, so the page needs nothing beside it.

An attached file is named as the chat names it: by the name it was sent by ("Q3 report (final).pdf"), not its
workspace copy's plainer one. In Markdown that name links to the copy (a picture shows inline from it), which a
viewer on this computer opens; the HTML page, meant to be read anywhere, names it and links nowhere."""

from __future__ import annotations

import base64
import html
import mimetypes
import re
from collections.abc import Callable
from pathlib import Path
from typing import Any

from desktop.agent.attachments import is_image
from desktop.agent.context import image_bytes
from desktop.conversation.transcript import (
    ChatRow,
    Kind,
    attachment_names,
    format_arguments,
    rows_from_messages,
    tool_summary,
)

FORMATS = ("md", "html")
SPEAKERS = {Kind.USER: "You", Kind.ASSISTANT: "Assistant", Kind.REASONING: "Reasoning"}
_STYLE = """
body { font: 15px/1.5 system-ui, sans-serif; max-width: 46em; margin: 2em auto; padding: 0 1em; color: #222; }
h1 { font-size: 1.4em; } .speaker { font-weight: 600; margin: 1.4em 0 .2em; }
.reasoning { color: #666; border-left: 3px solid #ccc; padding-left: .8em; }
details { margin: .3em 0; color: #444; } summary { cursor: pointer; font-family: monospace; }
pre { background: #f4f4f4; padding: .6em; overflow-x: auto; white-space: pre-wrap; }
.notice { color: #777; font-style: italic; } img { max-width: 100%; }
"""


def export(title: str, messages: list[dict[str, Any]], fmt: str, workspace: Path, reasoning: bool = False) -> str:
    """The chat as `fmt` ("md" or "html"); reasoning rows only with `reasoning`. `workspace`: where attached
    images in it are read without following a link out of it."""
    rows = [r for r in rows_from_messages(messages) if reasoning or r.kind is not Kind.REASONING]
    if fmt == "md":
        return _markdown(title, rows)
    if fmt == "html":
        return _html(title, rows, workspace)
    raise ValueError(f"unknown format {fmt!r}: one of {', '.join(FORMATS)}")


def _markdown(title: str, rows: list[ChatRow]) -> str:
    parts = [f"# {_one_line(title)}"]
    for row in rows:
        if row.kind is Kind.TOOL and row.tool is not None:
            fence = _fence(row.tool.result or "")
            parts.append(f"<details><summary>{html.escape(_step(row))}</summary>\n\n{fence}\n"
                         f"{row.tool.result or ''}\n{fence}\n\n</details>")
        elif row.kind in (Kind.NOTICE, Kind.ERROR):
            parts.append(f"*{row.text.strip()}*")
        else:
            quoted = "\n".join("> " + line for line in row.text.splitlines()) if row.kind is Kind.REASONING \
                else row.text
            media = "".join(f"\n\n{_attached(path, name)}" for path, name in attachment_names(row).items())
            parts.append(f"**{SPEAKERS[row.kind]}:**\n\n{quoted}{media}")
    return "\n\n".join(parts) + "\n"


def _html(title: str, rows: list[ChatRow], workspace: Path) -> str:
    from markdown_it import MarkdownIt  # here: 2 MB of the app's start for an export that is seldom made

    markdown = MarkdownIt("commonmark", {"html": False}).enable("table")
    markdown.add_render_rule("image", _picture)
    render: Callable[[str], str] = markdown.render
    parts = []
    for row in rows:
        if row.kind is Kind.TOOL and row.tool is not None:
            call = row.tool
            parts.append(f"<details><summary>{html.escape(_step(row))}</summary>"
                         f"<pre>{html.escape(format_arguments(call.arguments))}</pre>"
                         f"<pre>{html.escape(call.result or '')}</pre></details>")
        elif row.kind in (Kind.NOTICE, Kind.ERROR):
            parts.append(f'<p class="notice">{html.escape(row.text.strip())}</p>')
        else:
            body = render(row.text) + "".join(_image(path, name, workspace)
                                              for path, name in attachment_names(row).items())
            css = ' class="reasoning"' if row.kind is Kind.REASONING else ""
            parts.append(f'<p class="speaker">{SPEAKERS[row.kind]}</p><div{css}>{body}</div>')
    name = html.escape(_one_line(title))
    return (f'<!DOCTYPE html>\n<html><head><meta charset="utf-8"><title>{name}</title>'
            f'<meta http-equiv="Content-Security-Policy" content="default-src \'none\'; img-src data:; '
            f'style-src \'unsafe-inline\'"><style>{_STYLE}</style></head>\n<body><h1>{name}</h1>\n'
            + "\n".join(parts) + "\n</body></html>\n")


def _picture(renderer: Any, tokens: Any, idx: int, options: Any, env: Any) -> str:
    """A picture a message names (`![chart](/home/you/Pictures/x.png)`) as its words, unless the message holds it
    (a data: URL). A browser would not load the file (the page allows data: pictures only), but the PDF is this
    page laid out by Qt, which heeds no such rule: an answer, the model's words, could put a file of the person's
    into the PDF, or name a pipe and freeze the app."""
    token = tokens[idx]
    if str(token.attrGet("src") or "").startswith("data:"):
        return str(renderer.image(tokens, idx, options, env))
    return html.escape(renderer.renderInlineAsText(token.children, options, env))


def _attached(path: str, name: str) -> str:
    """An attached file in Markdown: a picture inline, another file a link, each named as it was sent."""
    link = f"[{_markdown_text(name)}]({Path(path).as_uri()})"
    return f"!{link}" if is_image(path) else f"Attached: {link}"


def _markdown_text(text: str) -> str:
    """`text` as itself in a link's words: what Markdown would read as markup or as the link's end escaped."""
    return re.sub(r"([\\`*_\[\]<>&])", r"\\\1", " ".join(text.split()))


def _image(path: str, name: str, workspace: Path) -> str:
    """An attached file inline as a data: URL when it is an image that can be read, else its name. Read as the
    model's copy is (desktop/agent/context.py): a link planted in the workspace is never followed out of it."""
    source = Path(path)
    kind = mimetypes.guess_type(source.name)[0] or ""
    data = image_bytes(source, workspace) if kind.startswith("image/") else None
    if data is not None:  # None: not readable, or over the model's image limit
        encoded = base64.b64encode(data).decode("ascii")
        return f'<p><img alt="{html.escape(name)}" src="data:{kind};base64,{encoded}"></p>'
    return f'<p class="notice">Attached: {html.escape(name)} (not included)</p>'


def _step(row: ChatRow) -> str:
    """A tool step as the chat folds it: its name and what it acted on, and whether it failed."""
    assert row.tool is not None
    failed = " (failed)" if row.tool.ok is False else ""
    return f"{row.tool.title}: {tool_summary(row.tool)}{failed}"[:200]


def _fence(text: str) -> str:
    """A code fence longer than any run of backticks in `text`, so the text cannot close it."""
    longest, run = 0, 0
    for char in text:
        run = run + 1 if char == "`" else 0
        longest = max(longest, run)
    return "`" * max(3, longest + 1)


def _one_line(text: str) -> str:
    return " ".join(text.split()) or "Chat"
