"""What in HEARTBEAT.md counts as a task, and which answers mean "nothing for the user": plain functions.

Only lines under the active-tasks heading count, up to the next heading of the same or a higher level.
Comments, blank lines, bare bullets and ticked checkboxes are not tasks: a file holding only the
template's hints must cost no model call."""

from __future__ import annotations

import re

QUIET_MARKER = "NOTHING_TO_REPORT"  # the answer that means no notification
_HEADING = re.compile(r"^(#{1,6})\s+(.*?)\s*#*\s*$")
_ACTIVE = re.compile(r"^active\s+tasks?\b", re.IGNORECASE)
_COMMENT = re.compile(r"<!--.*?-->", re.DOTALL)
_BULLET = re.compile(r"^\s*(?:[-*+]|\d+[.)])\s*")
_BOX = re.compile(r"^\[( |x|X)\]\s*")


def active_tasks(text: str) -> list[str]:
    """The task lines under the active-tasks heading, bullets and checkboxes removed."""
    tasks: list[str] = []
    level = 0  # the active heading's level while inside its section, else 0
    for line in _COMMENT.sub("", text).splitlines():
        heading = _HEADING.match(line)
        if heading:
            depth = len(heading.group(1))
            if level and depth <= level:
                level = 0
            if _ACTIVE.match(heading.group(2)):
                level = depth
            continue
        if not level:
            continue
        item = _BULLET.sub("", line, count=1).strip()
        box = _BOX.match(item)
        if box and box.group(1) in "xX":
            continue  # ticked off: done
        item = _BOX.sub("", item, count=1).strip()
        if item:
            tasks.append(item)
    return tasks


def is_quiet(answer: str) -> bool:
    """Whether the model answered that nothing needs the user (the marker anywhere, in any markup)."""
    return QUIET_MARKER in answer.replace("\\_", "_").upper()
