"""An answer's Markdown as the words a voice says: what a person reads on the screen, without code listings
symbol by symbol or web addresses letter by letter; and a long answer in pieces a speech model takes."""

from __future__ import annotations

from desktop.voice.spoken import pieces, speakable

ANSWER = """# Setting it up

Install **the package** with `pip install requests`, as [its guide](https://requests.readthedocs.io/en/latest/)
says; the source is at https://github.com/psf/requests.

```python
import requests
print(requests.get("https://example.com").status_code)
```

Then:

- check the *status*
- read `response.json()`

| Code | Meaning |
|------|---------|
| 200 | OK |

![A diagram of the flow](flow.png) See <https://www.python.org/doc/> too.

    indented = "code"
"""


def test_markdown_becomes_sentences_without_code_or_addresses() -> None:
    assert speakable(ANSWER).splitlines() == [
        "Setting it up.",
        "Install the package with pip install requests, as its guide says; the source is at a link to github.com.",
        "Code block omitted.",
        "Then:",
        "check the status.",
        "read response.json().",
        "Code, Meaning.",
        "200, OK.",
        "picture: A diagram of the flow See a link to python.org too.",
        "Code block omitted.",
    ]


def test_a_link_whose_text_is_its_address_is_said_by_where_it_leads() -> None:
    assert speakable("See [https://docs.python.org/3/](https://docs.python.org/3/) and www.gnu.org/licenses.") == (
        "See a link to docs.python.org and a link to gnu.org.")


def test_html_and_long_inline_code_are_not_read_out() -> None:
    long_code = "x" * 100
    assert speakable(f"Press <kbd>Ctrl</kbd>+<kbd>C</kbd>, not `{long_code}`.") == "Press Ctrl+C, not code omitted."


def test_an_answer_of_only_code_has_nothing_else_to_say() -> None:
    assert speakable("```\nls -la\n```") == "Code block omitted."
    assert speakable("   \n") == ""


def test_a_long_text_is_cut_between_paragraphs_then_sentences_then_words() -> None:
    paragraph = "This sentence is forty characters long. " * 30  # 1200 characters
    text = "\n".join([paragraph.strip(), "A short line.", paragraph.strip()])
    cut = pieces(text, 1000)
    assert all(len(piece) <= 1000 for piece in cut)
    assert " ".join(" ".join(cut).split()) == " ".join(text.split())  # nothing lost, nothing added
    assert cut[0].endswith("long.") and cut[1].startswith("This sentence")  # at a sentence's end
    words = pieces("word " * 300, 100)
    assert all(len(piece) <= 100 and not piece.endswith(" ") for piece in words) and len(words) == 15
