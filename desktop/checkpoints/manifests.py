"""The last look at each workspace, kept for the next run (desktop/checkpoints/service.py saves it once the looks
go quiet and when the app closes), so that run's first look reads again only what changed since. One file per
workspace, named by a digest of its path: a person who switches workspaces keeps each one's."""

from __future__ import annotations

import hashlib
import json
import logging
from collections.abc import Iterator
from pathlib import Path

from desktop.checkpoints.scan import Entry, Manifest
from desktop.kernel.atomic import atomic_write_text

log = logging.getLogger(__name__)


class Manifests:
    def __init__(self, folder: Path) -> None:
        self.folder = folder

    def load(self, root: Path) -> tuple[Manifest, int]:
        """The last look at the workspace `root` in an earlier run, and when it began (nothing: ({}, 0))."""
        return self._read(self._file(root))

    def save(self, root: Path, manifest: Manifest, looked: int) -> None:
        atomic_write_text(self._file(root), json.dumps(  # an Entry is a tuple: written as a list
            {"workspace": str(root), "looked": looked, "entries": manifest}, separators=(",", ":")))

    def others(self, root: Path | None) -> Iterator[Manifest]:
        """Every saved look but the one at `root`: the other workspaces' (their kept contents stay needed)."""
        current = self._file(root) if root is not None else None
        for path in self.folder.glob("*.json"):
            if path != current:
                yield self._read(path)[0]

    def _file(self, root: Path) -> Path:
        return self.folder / f"{hashlib.sha256(str(root).encode()).hexdigest()[:16]}.json"

    @staticmethod
    def _read(path: Path) -> tuple[Manifest, int]:
        try:
            raw = json.loads(path.read_text(encoding="utf-8"))
            # A manifest saved before looks were dated: its own time is the nearest to when its look was made.
            looked = int(raw["looked"]) if "looked" in raw else path.stat().st_mtime_ns
            return {p: Entry(*e) for p, e in raw["entries"].items()}, looked
        except FileNotFoundError:
            return {}, 0
        except (OSError, ValueError, KeyError, TypeError) as exc:
            log.warning("%s could not be read (%s); the workspace is looked at afresh", path, exc)
            return {}, 0
