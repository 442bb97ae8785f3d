"""The README's key table is the one the declarations make: a setting added, renamed or re-described in
code without `python -m tests.readme_settings` fails here."""

from __future__ import annotations

from desktop.config import lookup
from tests.readme_settings import README, section_of, table


def test_the_readme_lists_every_setting_as_declared() -> None:
    shown = section_of(README.read_text(encoding="utf-8"))
    assert shown == table(), "README.md's settings table is stale: run python -m tests.readme_settings"


def test_the_table_says_what_a_person_needs_for_each_key() -> None:
    rows = {line.split(" | ")[0].strip("| `"): line for line in table().splitlines()[2:]}
    assert rows["tools.exec.timeout"] == (f"| `tools.exec.timeout` | `60` | whole number 1 to 600 | "
                                          f"{lookup('tools.exec.timeout').setting.help} |")
    assert "| `internet`, `off`, `host` |" in rows["tools.exec.network"]
    assert "| list of numbers ≥ 0 |" in rows["provider.retry_delays"]
    assert "| number above 0 |" in rows["mcp.servers.NAME.timeout"]
    assert "enable\\|disable" in rows["skills.disabled"]  # a | in help does not end the cell
