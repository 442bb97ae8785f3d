"""The README's table of config.yaml keys, made from the schema (which is made from the declarations in
desktop/config.py and the features' own sections), so the README cannot drift from what the app reads.

    python -m tests.readme_settings     # rewrite the table in README.md

tests/test_readme_settings.py fails while the README's table is not what this makes."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from desktop.config import schema

README = Path(__file__).resolve().parents[1] / "README.md"
START = "<!-- settings table: made by `python -m tests.readme_settings` from the settings declarations; do not edit -->"
END = "<!-- end of settings table -->"


def table() -> str:
    rows = ["| key | default | allowed | what it does |", "|---|---|---|---|"]
    for key, node in _keys(schema()):
        default = f"`{json.dumps(node['default'])}`" if "default" in node else ""
        rows.append(f"| `{key}` | {default} | {_allowed(node)} | {_cell(node['description'])} |")
    return "\n".join(rows)


def section_of(readme: str) -> str:
    """The table as the README holds it now (empty when its markers are missing)."""
    if START not in readme or END not in readme:
        return ""
    return readme.split(START, 1)[1].split(END, 1)[0].strip()


def _keys(node: dict[str, Any], prefix: str = "") -> list[tuple[str, dict[str, Any]]]:
    """Each key that holds a value, in the file's order; the keys of named entries as NAME.key."""
    found = []
    for name, inner in node["properties"].items():
        key = f"{prefix}{name}"
        if "properties" in inner:
            found += _keys(inner, f"{key}.")
            continue
        found.append((key, inner))
        entries = inner.get("additionalProperties")
        if isinstance(entries, dict) and "properties" in entries:
            found += _keys(entries, f"{key}.NAME.")
    return found


def _allowed(node: dict[str, Any], plural: bool = False) -> str:
    if "anyOf" in node:
        return ", or ".join(_allowed(option, plural) for option in node["anyOf"])
    kinds = node["type"] if isinstance(node["type"], list) else [node["type"]]
    return " or ".join(_kind(kind, node, plural) for kind in kinds)


def _kind(kind: str, node: dict[str, Any], plural: bool) -> str:
    if kind == "array":
        return f"list of {_allowed(node['items'], plural=True)}"
    if kind == "object":
        entries = node["additionalProperties"]
        if "properties" in entries:
            return "named entries, each with the NAME keys below"
        return f"{'mappings' if plural else 'mapping'} of names to {_allowed(entries)}"
    if kind == "string" and "enum" in node:
        return ", ".join(f"`{value}`" for value in node["enum"])
    words = {"boolean": "true or false", "integer": "whole number", "number": "number", "string": "text",
             "null": "empty"}[kind] + ("s" if plural and kind in ("integer", "number") else "")
    if kind in ("integer", "number"):
        low = node.get("minimum", node.get("exclusiveMinimum"))
        if "exclusiveMinimum" in node:
            words += f" above {low:g}" + (f", at most {node['maximum']:g}" if "maximum" in node else "")
        else:
            words += f" {low:g} to {node['maximum']:g}" if "maximum" in node else f" ≥ {low:g}"
    return words


def _cell(text: str) -> str:
    """Help as Markdown shows it: a | would end the cell and <name> would be read as HTML."""
    return text.replace("|", "\\|").replace("<", "&lt;").replace(">", "&gt;")


def main() -> None:
    readme = README.read_text(encoding="utf-8")
    if START not in readme or END not in readme:
        raise SystemExit(f"README.md has no settings table markers; put these two lines where it goes:\n{START}\n{END}")
    before, rest = readme.split(START, 1)
    after = rest.split(END, 1)[1]
    README.write_text(f"{before}{START}\n{table()}\n{END}{after}", encoding="utf-8")


if __name__ == "__main__":
    main()
