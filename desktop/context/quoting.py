"""Text brought in from the desktop (a selection, the clipboard, a window's title) and how it reaches the model:
quoted under the person's question, each piece headed by where it came from, so the model can tell the
question from the material it is about (and the saved chat shows exactly what was sent)."""

from __future__ import annotations

from dataclasses import dataclass

PREVIEW_LINES = 2
PREVIEW_CHARS = 80  # per line shown on a chip
TEXT_LIMIT = 64 * 1024  # characters of one snippet sent (as an attached text file: about 16,000 tokens)


@dataclass(frozen=True)
class Snippet:
    source: str  # where it came from, for the person and the model: "Selected text", "Clipboard", ...
    text: str

    @property
    def lines(self) -> int:
        return len(self.text.splitlines()) or 1


def snippet(source: str, text: str) -> Snippet:
    """A snippet of at most TEXT_LIMIT characters; a longer text is cut, and says so where it was cut."""
    if len(text) <= TEXT_LIMIT:
        return Snippet(source, text)
    return Snippet(source, f"{text[:TEXT_LIMIT]}\n[… cut here: {len(text) - TEXT_LIMIT:,} more characters]")


def preview(text: str, lines: int = PREVIEW_LINES, width: int = PREVIEW_CHARS) -> str:
    """The first non-blank lines of `text`, each cut to `width`, with … where more follows."""
    shown = [line.strip() for line in text.splitlines() if line.strip()]
    head = [line if len(line) <= width else line[:width - 1] + "…" for line in shown[:lines]]
    if len(shown) > lines and head:
        head[-1] += " …"
    return "\n".join(head)


def with_context(question: str, snippets: list[Snippet]) -> str:
    """The message the model reads: the question as typed, then each snippet as a Markdown quote under its
    source."""
    parts = [question] if question.strip() else []
    for snippet in snippets:
        quoted = "\n".join(f"> {line}".rstrip() for line in snippet.text.rstrip("\n").splitlines())
        parts.append(f"{snippet.source}:\n{quoted}")
    return "\n\n".join(parts)
