"""A chat as Markdown and as one HTML page: a speaker line per message, tool steps folded, reasoning only when
asked, images inline, and nothing a message holds can become markup in the page."""

from __future__ import annotations

import base64
import re
from html.parser import HTMLParser
from pathlib import Path

import pytest
from markdown_it import MarkdownIt

from desktop.chats.export import export
from desktop.core import Core
from tests.chats.conftest import PNG, a_chat
from tests.conftest import Conversation
from tests.fakeserver import FakeOpenAI
from tests.pdfs import pdf

WORKSPACE = Path("/nonexistent-workspace")  # the attachments of these chats lie outside it, chosen by the person


class Tags(HTMLParser):
    def __init__(self) -> None:
        super().__init__()
        self.tags: list[str] = []
        self.srcs: list[str] = []

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        self.tags.append(tag)
        self.srcs += [v or "" for k, v in attrs if k == "src"]


def test_markdown_has_a_speaker_line_per_message_and_folds_tool_steps(tmp_path: Path) -> None:
    chat = a_chat(tmp_path / "photo.png")
    text = export(chat.title, chat.messages, "md", WORKSPACE)
    assert text.startswith("# Plans for <b>Friday</b>\n")
    assert text.count("**You:**") == 1 and text.count("**Assistant:**") == 1
    assert "<details><summary>read_file: todo.md</summary>" in text
    assert "````\n- buy milk\n- ``` fence" in text  # a fence longer than the backticks in the result
    assert "You have **two** things:" in text
    assert "Reasoning" not in text and "read todo.md" not in text
    with_reasoning = export(chat.title, chat.messages, "md", WORKSPACE, reasoning=True)
    assert "**Reasoning:**\n\n> The person wants the list; read todo.md." in with_reasoning
    assert f"![photo.png]({(tmp_path / 'photo.png').as_uri()})" in text


def test_html_is_self_contained_and_nothing_in_a_message_becomes_markup(tmp_path: Path) -> None:
    chat = a_chat(tmp_path / "photo.png")
    page = export(chat.title, chat.messages, "html", WORKSPACE)
    parsed = Tags()
    parsed.feed(page)
    assert "script" not in parsed.tags and "b" not in parsed.tags  # the title's <b> and every <script> are text
    assert "What is on my list? &lt;script&gt;alert('x')&lt;/script&gt;" in page
    assert "&lt;script&gt;bad()&lt;/script&gt;" in page and "&lt;/details&gt;&lt;script&gt;x()" in page
    assert parsed.tags.count("details") == 1 and "<summary>read_file: todo.md</summary>" in page
    assert "<strong>two</strong>" in page and "<ol>" in page  # the answer's Markdown, rendered
    assert parsed.srcs == ["data:image/png;base64," + base64.b64encode(PNG).decode()]
    assert not re.search(r"(src|href)=\"(?!data:)", page)  # nothing fetched from elsewhere
    assert page.count('class="speaker"') == 2 and "The person wants the list" not in page
    assert "The person wants the list" in export(chat.title, chat.messages, "html", WORKSPACE, reasoning=True)


def test_an_attachment_that_is_gone_is_named_not_lost(tmp_path: Path) -> None:
    chat = a_chat(tmp_path / "photo.png")
    (tmp_path / "photo.png").unlink()
    assert "Attached: photo.png (not included)" in export(chat.title, chat.messages, "html", WORKSPACE)


def test_a_link_planted_in_the_workspace_is_not_followed_into_the_page(tmp_path: Path) -> None:
    """An attachment copied into the workspace can be replaced by a sandboxed command with a link to a file of
    the person's: the page names it and never carries what the link points at."""
    workspace = tmp_path / "workspace"
    (workspace / "attachments").mkdir(parents=True)
    secret = tmp_path / "secret.png"
    secret.write_bytes(PNG)
    (workspace / "attachments" / "photo.png").symlink_to(secret)
    chat = a_chat(workspace / "attachments" / "photo.png")
    page = export(chat.title, chat.messages, "html", workspace)
    assert "Attached: photo.png (not included)" in page and "data:image" not in page


def links(markdown: str) -> list[tuple[str, str]]:
    """Each link of a Markdown text as a viewer on this computer shows it: (its words, where it leads)."""
    viewer = MarkdownIt("commonmark")
    viewer.validateLink = lambda url: True  # type: ignore[method-assign]  # file: links too (a web page drops them)
    found = []
    for block in viewer.parse(markdown):
        for i, token in enumerate(block.children or []):
            if token.type == "link_open":
                found.append((block.children[i + 1].content, str(token.attrs["href"])))  # type: ignore[index]
    return found


async def test_attachments_are_named_as_they_were_sent(chat: Conversation, core: Core, fake: FakeOpenAI,
                                                        tmp_path: Path) -> None:
    """A pasted text and a file named with spaces and parentheses are kept in the workspace under plainer names;
    the export names them as the person sent them: in Markdown a link to the copy, in HTML just the name."""
    pasted = tmp_path / "pasted" / "Pasted text 2026-11-28 14.10.41.txt"
    pasted.parent.mkdir()
    pasted.write_text("x\n" * 200, encoding="utf-8")
    report = tmp_path / "Q3 report (final).pdf"
    report.write_bytes(pdf(["Revenue rose 12%."]))
    plan = tmp_path / "plan [v2] *draft*.txt"  # words Markdown would read as markup
    plan.write_text("grow\n", encoding="utf-8")
    fake.add({"content": "Revenue rose."})
    await chat.ask("what changed?", media=[str(pasted), str(report), str(plan)])
    session = await core.sessions.load(chat.key)
    copies = core.workspace / "attachments" / "cli_test"

    markdown = export(session.title, session.messages, "md", core.workspace)
    assert links(markdown) == [("Pasted text 2026-11-28 14.10.41.txt",
                                (copies / "Pasted_text_2026-11-28_14.10.41.txt").as_uri()),
                               ("Q3 report (final).pdf", (copies / "Q3_report_final_.pdf").as_uri()),
                               ("plan [v2] *draft*.txt", (copies / "plan_v2_draft_.txt").as_uri())]
    page = export(session.title, session.messages, "html", core.workspace)
    assert "Attached: Pasted text 2026-11-28 14.10.41.txt (not included)" in page
    assert "Attached: Q3 report (final).pdf (not included)" in page
    assert "Q3_report_final_" not in page and "Pasted_text_" not in page


def test_an_unknown_format_is_refused() -> None:
    with pytest.raises(ValueError, match="md, html"):
        export("t", [], "pdf", WORKSPACE)
