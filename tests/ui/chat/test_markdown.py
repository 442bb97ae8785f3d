"""Markdown for the transcript: code blocks come out whole (for Copy), prose renders with Qt's importer."""

from __future__ import annotations

import os
import random
from pathlib import Path

import pytest
from PySide6.QtCore import QUrl
from PySide6.QtGui import (
    QColor,
    QFont,
    QGuiApplication,
    QImage,
    QPalette,
    QTextCharFormat,
    QTextDocument,
    QTextFormat,
)

from desktop.ui.highlight import HIGHLIGHT_CHARS
from desktop.ui.markdown import (
    MAX_PICTURES,
    Code,
    MarkdownBrowser,
    Prose,
    code_document,
    prose_document,
    quote_bars,
    split_blocks,
)

ANSWER = """Run this:

```bash
ls -la
echo "done"
```

Then in Python (note the longer fence around a fence):

````markdown
```python
print("hi")
```
````

~~~
tilde fence
~~~
That's all."""


def test_code_blocks_are_cut_out_with_their_language_and_exact_text() -> None:
    blocks = split_blocks(ANSWER)
    assert [b for b in blocks if isinstance(b, Code)] == [
        Code('ls -la\necho "done"', "bash"), Code('```python\nprint("hi")\n```', "markdown"), Code("tilde fence", "")]
    assert [type(b).__name__ for b in blocks] == ["Prose", "Code", "Prose", "Code", "Code", "Prose"]
    assert [b.text.strip() for b in blocks if isinstance(b, Prose)] == [
        "Run this:", "Then in Python (note the longer fence around a fence):", "That's all."]


def test_an_unclosed_fence_while_streaming_is_code_up_to_the_end() -> None:
    assert split_blocks("Look:\n```py\nx = 1\ny =") == [Prose("Look:"), Code("x = 1\ny =", "py")]


def test_fences_indented_in_a_list_keep_their_code_unindented() -> None:
    blocks = split_blocks("1. Install:\n   ```sh\n   pip install x\n   ```\n2. Run it")
    assert Code("pip install x", "sh") in blocks


def test_long_prose_is_cut_into_pieces_that_stay_the_same_as_text_streams_in() -> None:
    rng = random.Random(4)
    words = ["alpha", "beta", "gamma", "delta", "`code`", "**bold**", "[link](https://example.org)", "-", "item"]
    paragraphs = [" ".join(rng.choice(words) for _ in range(rng.randint(5, 60))) for _ in range(80)]
    full = "\n\n".join(paragraphs[:40]) + "\n\n```\ncode block\n```\n\n" + "\n\n".join(paragraphs[40:])
    final = split_blocks(full)
    assert len(final) > 6  # the answer is several pieces, so a streamed update re-renders only the last
    assert all(len(b.text) < 1200 + 400 for b in final if isinstance(b, Prose))
    for cut in range(0, len(full), 97):
        partial = split_blocks(full[:cut])
        settled = partial[:-1]
        assert final[:len(settled)] == settled, f"an earlier block changed at {cut}"


def test_prose_renders_markdown_with_tinted_inline_code_and_links(qapp) -> None:  # type: ignore[no-untyped-def]
    palette = QPalette()
    doc = prose_document("# Title\n\nSome `inline` and a [link](https://example.org).", QFont(), palette, 400)
    assert doc.toPlainText().splitlines() == ["Title", "Some inline and a link."]
    formats = {}
    block = doc.begin()
    while block.isValid():
        it = block.begin()
        while not it.atEnd():
            fragment = it.fragment()
            formats[fragment.text()] = fragment.charFormat()
            it += 1
        block = block.next()
    assert formats["inline"].background().color().isValid()
    assert formats["inline"].background().style().name != "NoBrush"
    assert formats["link"].anchorHref() == "https://example.org"
    assert formats["link"].foreground().color() == QGuiApplication.palette().color(QPalette.ColorRole.Link)
    assert doc.firstBlock().blockFormat().headingLevel() == 1
    assert formats["Title"].font().bold()


def _fragments(doc: QTextDocument) -> list[tuple[str, QTextCharFormat]]:
    out = []
    block = doc.begin()
    while block.isValid():
        it = block.begin()
        while not it.atEnd():
            out.append((it.fragment().text(), it.fragment().charFormat()))
            it += 1
        block = block.next()
    return out


def test_headings_grow_a_little_for_a_chat_column_not_like_a_page(qapp) -> None:  # type: ignore[no-untyped-def]
    body = QFont()
    body.setPointSizeF(10)
    doc = prose_document("# One\n\n## Two\n\n### Three\n\n#### Four\n\nText", body, QPalette(), 400)
    sizes = {text: fmt.font().pointSizeF() for text, fmt in _fragments(doc)}
    assert sizes["One"] > sizes["Two"] > sizes["Three"] >= sizes["Four"] == sizes["Text"] == 10
    assert sizes["One"] <= 14  # Qt's own importer would make it 20


def test_block_quotes_get_a_bar_per_level_spanning_their_lines(qapp) -> None:  # type: ignore[no-untyped-def]
    doc = prose_document("Before\n\n> first\n>\n> second\n>\n> > nested\n\nAfter", QFont(), QPalette(), 300)
    bars = quote_bars(doc)
    assert len(bars) == 2
    outer, inner = sorted(bars, key=lambda r: r.x())
    assert outer.x() < inner.x() and outer.width() == inner.width() == 3
    assert outer.top() < inner.top() and outer.bottom() >= inner.bottom()
    text_block = doc.lastBlock()
    assert doc.documentLayout().blockBoundingRect(text_block).top() >= outer.bottom()  # "After" is not quoted
    assert quote_bars(prose_document("No quote here", QFont(), QPalette(), 300)) == []


def _colours(doc: QTextDocument) -> dict[str, str]:
    return {text.strip(): fmt.foreground().color().name() for text, fmt in _fragments(doc)
            if fmt.hasProperty(QTextFormat.Property.ForegroundBrush)}


def _palette(base: str, text: str) -> QPalette:
    palette = QPalette()
    palette.setColor(QPalette.ColorRole.Base, QColor(base))
    palette.setColor(QPalette.ColorRole.Text, QColor(text))
    return palette


def test_code_is_coloured_by_language_with_schemes_for_light_and_dark(qapp) -> None:  # type: ignore[no-untyped-def]
    code = 'def f(x):\n    return "hi"  # note'
    light = code_document(code, "python", QFont("monospace"), _palette("#ffffff", "#000000"), 400)
    dark = code_document(code, "python", QFont("monospace"), _palette("#1b1b1d", "#e8e8e8"), 400)
    assert light.toPlainText() == dark.toPlainText() == code
    light_colours, dark_colours = _colours(light), _colours(dark)
    assert light_colours["def"] != light_colours['"hi"']  # keywords and strings differ
    assert light_colours["def"] != dark_colours["def"]
    assert QColor(light_colours["# note"]).lightness() < 128 < QColor(dark_colours["# note"]).lightness()


def test_code_in_an_unknown_language_or_too_long_stays_plain(qapp) -> None:  # type: ignore[no-untyped-def]
    palette = _palette("#ffffff", "#000000")
    for code, language in [("def f(): pass", "no-such-language"), ("def f(): pass", ""),
                           ("x = 1\n" * (HIGHLIGHT_CHARS // 6 + 1), "python")]:
        doc = code_document(code, language, QFont("monospace"), palette, 400)
        assert doc.toPlainText() == code
        assert _colours(doc) == {}


@pytest.mark.timeout(30)
def test_pictures_never_make_qt_open_a_file_itself(qapp, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    """Markdown from the model or the workspace may name a pipe (Qt would block the GUI thread on it) or a
    file outside: only pictures inside the given folder are read, through the workspace reader."""
    pipe = tmp_path / "pipe.png"
    os.mkfifo(pipe)
    outside = tmp_path / "outside.png"
    QImage(3, 3, QImage.Format.Format_ARGB32).save(str(outside))
    skill = tmp_path / "skill"
    (skill / "img").mkdir(parents=True)
    QImage(2, 2, QImage.Format.Format_ARGB32).save(str(skill / "img" / "ok.png"))
    (skill / "img" / "out.png").symlink_to(outside)
    names = [str(pipe), f"file://{outside}", "img/ok.png", "img/out.png", "../outside.png"]
    doc = prose_document(" ".join(f"![{i}]({n})" for i, n in enumerate(names)), QFont(), QPalette(), 400,
                         (skill, ""))
    kind = QTextDocument.ResourceType.ImageResource.value
    sizes = [doc.resource(kind, QUrl(n)).size() for n in names]
    assert [(s.width(), s.height()) for s in sizes] == [(1, 1), (1, 1), (2, 2), (1, 1), (1, 1)]
    plain = prose_document(f"![x]({pipe})", QFont(), QPalette(), 400)  # no folder: no picture at all
    assert plain.resource(kind, QUrl(str(pipe))).size().width() == 1
    browser = MarkdownBrowser()
    browser.setMarkdown(f"![x]({pipe}) and ![y]({outside})")
    browser.resize(300, 200)
    browser.show()
    qapp.processEvents()
    browser.close()


def test_a_skill_naming_a_large_picture_over_and_over_is_shown_only_as_far_as_a_budget(qapp, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    """A SKILL.md in the workspace (a sandboxed command writes it) can name one picture thousands of times, each
    name a little different (`big.png?1`, `big.png?2`...): the skills window decoded each anew on the GUI thread,
    a 3000x3000 picture a tenth of a second and 36 MB of the app's memory each, so a page froze the app for hours
    and took all its memory. Now a page shows pictures up to MAX_PICTURES and MAX_PICTURE_PIXELS in all; the
    rest are left blank."""
    big = QImage(3000, 3000, QImage.Format.Format_ARGB32)
    big.fill(0)
    big.save(str(tmp_path / "big.png"))
    QImage(2, 2, QImage.Format.Format_ARGB32).save(str(tmp_path / "small.png"))
    names = [f"big.png?{i}" for i in range(3)] + [f"small.png?{i}" for i in range(MAX_PICTURES + 5)]
    doc = prose_document(" ".join(f"![x]({n})" for n in names), QFont(), QPalette(), 400, (tmp_path, ""))
    kind = QTextDocument.ResourceType.ImageResource.value
    widths = [doc.resource(kind, QUrl(n)).width() for n in names]
    assert widths[:3] == [3000, 1, 1]  # the second would pass MAX_PICTURE_PIXELS: each looked at, none shown
    assert widths[3:] == [2] * (MAX_PICTURES - 3) + [1] * 8


def test_a_single_line_break_in_an_answer_stays_a_break_and_lists_and_tables_are_unchanged(qapp) -> None:  # type: ignore[no-untyped-def]
    def lines(text: str) -> list[str]:
        return prose_document(text, QFont(), QPalette(), 400).toPlainText().splitlines()

    assert lines("Shopping list:\nmilk\neggs") == ["Shopping list:", "milk", "eggs"]
    assert lines("Hello.\n\nAgain.") == ["Hello.", "Again."]
    assert lines("# Plan\n- one\n- two\n\n1. first\n2. second") == ["Plan", "one", "two", "first", "second"]
    table = prose_document("| a | b |\n|---|---|\n| 1 | 2 |", QFont(), QPalette(), 400)
    assert table.rootFrame().childFrames() or "a" in table.toPlainText()  # still a table, not text with pipes
    assert "|" not in table.toPlainText()
