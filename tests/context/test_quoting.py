"""How text from the desktop reaches the model: quoted under the question, named by where it came from."""

from __future__ import annotations

from desktop.context.quoting import TEXT_LIMIT, Snippet, preview, snippet, with_context


def test_the_selection_is_quoted_under_the_question_with_its_source() -> None:
    text = with_context("What does this do?", [Snippet("Selected text", "def f(x):\n    return x * 2\n")])
    assert text == "What does this do?\n\nSelected text:\n> def f(x):\n>     return x * 2"


def test_without_snippets_the_question_is_sent_exactly_as_typed() -> None:
    assert with_context("  indented\nlist", []) == "  indented\nlist"


def test_a_question_left_empty_sends_only_the_quoted_material() -> None:
    assert with_context("", [Snippet("Clipboard", "a\n\nb")]) == "Clipboard:\n> a\n>\n> b"


def test_the_chip_preview_is_the_first_lines_cut_to_a_width() -> None:
    assert preview("\n\nfirst\nsecond\nthird") == "first\nsecond …"
    assert preview("x" * 200) == "x" * 79 + "…"
    assert preview("only") == "only"


def test_a_huge_selection_is_cut_and_says_how_much_was_left_out() -> None:
    cut = snippet("Selected text", "y" * (TEXT_LIMIT + 500))
    assert cut.text.startswith("y" * TEXT_LIMIT) and cut.text.endswith("[… cut here: 500 more characters]")
    assert snippet("Clipboard", "short").text == "short"
