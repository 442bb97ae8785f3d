"""Markdown for the transcript: code blocks come out whole (for Copy), prose renders with Qt's importer."""

from __future__ import annotations

import random

from PySide6.QtGui import QFont, QGuiApplication, QPalette, QTextFormat

from desktop.ui.markdown import Code, Prose, prose_document, split_blocks

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
    assert formats["Title"].property(QTextFormat.Property.FontSizeAdjustment) == 2
