"""The figures a benchmark reports, and the one JSON line it ends with under --json: tests/bench/run_all.py reads
that last stdout line of every bench to build one table, so each bench keeps its own readable output above it."""

from __future__ import annotations

import json
from dataclasses import dataclass, field


@dataclass
class Figures:
    rows: list[dict[str, str | None]] = field(default_factory=list)

    def add(self, figure: str, ours: str, target: str | None = None, nanobot: str | None = None) -> None:
        self.rows.append({"figure": figure, "target": target, "ours": ours, "nanobot": nanobot})

    def skipped(self, figure: str, why: str) -> None:
        self.add(figure, f"skipped: {why}")

    def line(self) -> str:
        return json.dumps({"figures": self.rows})
