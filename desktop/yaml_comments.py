"""A person's comments in config.yaml, carried into the file the app writes in its place.

The app writes config.yaml whole (every setting, from the settings in force: desktop/config.py `save_config`), and
PyYAML, the design's YAML library, reads no comments. So the notes a person wrote by hand (or copied with the
README's example) would be gone after the first setting changed in a window. They are taken from the old text
and put back beside the same keys: a comment block above the key it stood above, a comment after a value after
that value (also after a list's item, matched by the item), and the comments of a key the new file no longer
has, with those after the last key, at the end. Nothing is ever dropped, only moved.

Text in, text out: the keys are found by their indentation, as PyYAML writes them (block style). What comes out
must read as exactly the same settings as what the app wrote, or the app's text is used as it is."""

from __future__ import annotations

import re
from dataclasses import dataclass, field

import yaml

Path = tuple[str, ...]  # a key's place: its name and those of the mappings it is in

_KEY = re.compile(r"^(?P<indent>\s*)(?P<dash>(?:-\s+)?)(?P<key>[^\s#'\"\-][^:#]*?|\"[^\"]*\"|'[^']*'):(?=\s|$)"
                  r"(?P<rest>.*)$")
_ITEM = re.compile(r"^(?P<indent>\s*)-\s+(?P<rest>.*)$")


@dataclass
class _Comments:
    above: dict[Path, list[str]] = field(default_factory=dict)  # comment lines above a key
    after: dict[Path, str] = field(default_factory=dict)  # a comment after a key's value
    after_item: dict[tuple[Path, str], str] = field(default_factory=dict)  # after a list item, by its text
    end: list[str] = field(default_factory=list)  # below the last key, or of keys the new file lacks


def carry_comments(old: str, new: str, skip: frozenset[str] = frozenset()) -> str:
    """`new` with the comments of `old` put back (see the module's docstring); `skip`: comment lines the app
    writes itself (its header), never carried."""
    comments = _read(old, skip)
    if not (comments.above or comments.after or comments.after_item or comments.end):
        return new
    merged = _write(new, comments)
    try:
        same = yaml.safe_load(merged) == yaml.safe_load(new)
    except yaml.YAMLError:
        same = False
    return merged if same else new


def _read(text: str, skip: frozenset[str]) -> _Comments:
    found = _Comments()
    pending: list[str] = []
    places = _Places()
    scalar_below: int | None = None  # inside a block scalar (| or >) of a key at this indentation
    for line in text.splitlines():
        stripped = line.strip()
        indent = len(line) - len(line.lstrip())
        if scalar_below is not None:
            if not stripped or indent > scalar_below:
                continue
            scalar_below = None
        if not stripped:
            continue
        if stripped.startswith("#"):
            if stripped not in skip:
                pending.append(stripped)
            continue
        key = _KEY.match(line)
        if key is not None:
            path = places.key(key)
            if pending:
                found.above.setdefault(path, []).extend(pending)
                pending = []
            value, comment = _split_comment(key["rest"])
            if comment:
                found.after[path] = comment
            if value.startswith(("|", ">")):
                scalar_below = len(key["indent"]) + len(key["dash"])
            continue
        item = _ITEM.match(line)
        if item is not None:
            value, comment = _split_comment(item["rest"])
            if comment:
                found.after_item[(places.current(len(item["indent"])), value)] = comment
    found.end.extend(pending)
    return found


def _write(text: str, comments: _Comments) -> str:
    out: list[str] = []
    places = _Places()
    used_above: set[Path] = set()
    used_after: set[Path] = set()
    used_items: set[tuple[Path, str]] = set()
    for line in text.splitlines():
        key = _KEY.match(line)
        item = _ITEM.match(line) if key is None else None
        if key is not None:
            path = places.key(key)
            margin = " " * (len(key["indent"]) + len(key["dash"]))
            if path in comments.above and path not in used_above:
                used_above.add(path)
                out.extend(f"{margin}{comment}" for comment in comments.above[path])
            if path in comments.after and path not in used_after and "#" not in key["rest"]:
                used_after.add(path)
                line = f"{line}  {comments.after[path]}"
        elif item is not None:
            spot = (places.current(len(item["indent"])), item["rest"].strip())
            if spot in comments.after_item and spot not in used_items:
                used_items.add(spot)
                line = f"{line}  {comments.after_item[spot]}"
        out.append(line)
    left = [line for path, lines in comments.above.items() if path not in used_above for line in lines]
    left += [comment for path, comment in comments.after.items() if path not in used_after]
    left += [comment for spot, comment in comments.after_item.items() if spot not in used_items]
    out.extend([*left, *comments.end])
    return "\n".join(out) + "\n"


class _Places:
    """The path of each key line as the lines go by: the keys above it at smaller indentations."""

    def __init__(self) -> None:
        self._stack: list[tuple[int, str]] = []

    def key(self, match: re.Match[str]) -> Path:
        indent = len(match["indent"]) + len(match["dash"])
        name = match["key"].strip().strip("\"'")
        while self._stack and self._stack[-1][0] >= indent:
            self._stack.pop()
        self._stack.append((indent, name))
        return tuple(name for _, name in self._stack)

    def current(self, indent: int) -> Path:
        """The path of the mapping a line at `indent` belongs to (a list item: its key is the one above)."""
        return tuple(name for at, name in self._stack if at <= indent)


def _split_comment(rest: str) -> tuple[str, str]:
    """A value and the comment after it ("" when none): a # that starts a word, outside quotes."""
    value = rest.strip()
    quote = value[:1] if value[:1] in ("'", '"') else ""
    start = 0
    if quote:
        end = value.find(quote, 1)
        while quote == "'" and end != -1 and value[end + 1:end + 2] == "'":  # '' is a quote inside '...'
            end = value.find("'", end + 2)
        if quote == '"':
            while end != -1 and value[end - 1] == "\\":
                end = value.find('"', end + 1)
        if end == -1:
            return value, ""
        start = end + 1
    found = re.search(r"(^|\s)#", value[start:])
    if found is None:
        return value, ""
    at = start + found.start() + len(found.group(1))
    return value[:at].rstrip(), value[at:].strip()
