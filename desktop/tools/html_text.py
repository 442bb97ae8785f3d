"""HTML to readable Markdown-ish text, so the model reads a page's content rather than its markup."""

from __future__ import annotations

import re
from html.parser import HTMLParser
from urllib.parse import urljoin

# Whole subtrees that are never content for a reader.
_DROP = {"script", "style", "noscript", "template", "svg", "nav", "iframe", "button", "select"}
_BLOCKS = {"p", "div", "section", "article", "main", "header", "footer", "aside", "blockquote", "figure",
           "figcaption", "table", "form", "fieldset", "address", "details", "summary", "dl", "dt", "dd", "hr"}
_HEADINGS = {"h1": 1, "h2": 2, "h3": 3, "h4": 4, "h5": 5, "h6": 6}
_VOID = {"br", "hr", "img", "input", "meta", "link", "area", "base", "col", "embed", "source", "track", "wbr"}


def html_to_markdown(html: str, base_url: str = "") -> str:
    """Convert a page to Markdown-ish text: headings, paragraphs, links, lists, code; no scripts or navigation.

    The page title (if any) comes first as `# Title` unless the body starts with the same heading."""
    parser = _Converter(base_url)
    parser.feed(html)
    parser.close()
    body = _tidy("".join(parser.out))
    title = " ".join(parser.title.split())
    if title and not body.startswith(f"# {title}"):
        body = f"# {title}\n\n{body}" if body else f"# {title}"
    return body


class _Converter(HTMLParser):
    def __init__(self, base_url: str) -> None:
        super().__init__(convert_charrefs=True)
        self.base_url = base_url
        self.out: list[str] = []
        self.title = ""
        self._in_title = False
        self._drop_depth = 0  # >0 while inside a dropped subtree
        self._drop_tag = ""
        self._pre = 0
        self._lists: list[list[int | str]] = []  # [kind, next number] per open ul/ol
        self._links: list[tuple[str, int]] = []  # (href, index in out where the link text starts)
        self._cell = False

    # --- tags -------------------------------------------------------------------------------
    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        if self._drop_depth:
            if tag == self._drop_tag:
                self._drop_depth += 1
            return
        if tag == "title":
            self._in_title = True
            return
        if tag in _DROP:
            if tag not in _VOID:
                self._drop_depth, self._drop_tag = 1, tag
            return
        attr = {k: v or "" for k, v in attrs}
        if tag in _HEADINGS:
            self._block()
            self.out.append("#" * _HEADINGS[tag] + " ")
        elif tag in _BLOCKS:
            self._block()
        elif tag == "br":
            self.out.append("\n")
        elif tag == "pre":
            self._block()
            self.out.append("```\n")
            self._pre += 1
        elif tag == "code" and not self._pre:
            self.out.append("`")
        elif tag in ("ul", "ol"):
            if not self._lists:
                self._block()
            self._lists.append([tag, 1])
        elif tag == "li":
            self._list_item()
        elif tag in ("strong", "b"):
            self.out.append("**")
        elif tag in ("em", "i"):
            self.out.append("*")
        elif tag == "a":
            self._links.append((attr.get("href", ""), len(self.out)))
        elif tag == "tr":
            self.out.append("\n")
            self._cell = False
        elif tag in ("td", "th"):
            if self._cell:
                self.out.append(" | ")
            self._cell = True

    def handle_startendtag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        self.handle_starttag(tag, attrs)
        if tag not in _VOID:
            self.handle_endtag(tag)

    def handle_endtag(self, tag: str) -> None:
        if self._drop_depth:
            if tag == self._drop_tag:
                self._drop_depth -= 1
            return
        if tag == "title":
            self._in_title = False
        elif tag in _HEADINGS or tag in _BLOCKS:
            self._block()
        elif tag == "pre" and self._pre:
            self._pre -= 1
            if not "".join(self.out[-1:]).endswith("\n"):
                self.out.append("\n")
            self.out.append("```")
            self._block()
        elif tag == "code" and not self._pre:
            self.out.append("`")
        elif tag in ("ul", "ol") and self._lists:
            self._lists.pop()
            if not self._lists:
                self._block()
        elif tag in ("strong", "b"):
            self.out.append("**")
        elif tag in ("em", "i"):
            self.out.append("*")
        elif tag == "a" and self._links:
            self._close_link()

    # --- text -------------------------------------------------------------------------------
    def handle_data(self, data: str) -> None:
        if self._drop_depth:
            return
        if self._in_title:
            self.title += data
            return
        if self._pre:
            self.out.append(data)
            return
        text = re.sub(r"\s+", " ", data)
        if self._at_line_start():
            text = text.lstrip()
        if text:
            self.out.append(text)

    # --- helpers ----------------------------------------------------------------------------
    def _at_line_start(self) -> bool:
        for piece in reversed(self.out):
            if piece:
                return piece[-1] in "\n "
        return True

    def _block(self) -> None:
        self.out.append("\n\n")

    def _list_item(self) -> None:
        if not self._lists:
            self.out.append("\n- ")
            return
        current = self._lists[-1]
        indent = "  " * (len(self._lists) - 1)
        if current[0] == "ol":
            number = int(current[1])
            current[1] = number + 1
            self.out.append(f"\n{indent}{number}. ")
        else:
            self.out.append(f"\n{indent}- ")

    def _close_link(self) -> None:
        href, start = self._links.pop()
        text = " ".join("".join(self.out[start:]).split())
        del self.out[start:]
        href = href.strip()
        if not text:
            return
        if not href or href.startswith(("#", "javascript:", "mailto:", "data:")):
            self.out.append(text)
            return
        self.out.append(f"[{text}]({urljoin(self.base_url, href)})")


def _tidy(text: str) -> str:
    """Trim line ends and collapse runs of blank lines (inside code fences too: harmless for reading)."""
    lines = [line.rstrip() for line in text.split("\n")]
    return re.sub(r"\n{3,}", "\n\n", "\n".join(lines)).strip()
