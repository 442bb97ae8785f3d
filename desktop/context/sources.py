"""What other features let a person attach from the `+` menu besides what is on screen: an MCP server's
resources. A source is one submenu. It says without asking anyone whether it has anything to offer (no dead
entry in the menu), lists its offers when the menu opens (it may ask servers: within a bound it keeps), and
fetches one only when the message is sent, so what goes is what the thing holds then, and choosing costs nothing.

Qt-free, like the rest of desktop/context: a source is plain asyncio and is tested headless; the shelf
(desktop/ui/context/shelf.py) shows it."""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import Protocol

from desktop.context.quoting import Snippet


@dataclass(frozen=True)
class Offer:
    label: str  # in the menu and on the chip: "notes · Shopping list"
    mime_type: str  # what it is, shown on the chip ("" when its source does not say)
    where: str  # its address, in the chip's tooltip (a resource's URI)

    @property
    def image(self) -> bool:
        """A picture: sent as one only to a model that reads images, else the chip says it will not go."""
        return self.mime_type.startswith("image/")


@dataclass(frozen=True)
class Listing:
    offers: list[Offer]
    notes: list[str]  # shown as disabled lines, for what could not be listed: "notes: no answer"


@dataclass(frozen=True)
class Fetched:
    """What one offer brought when the message was sent."""

    snippets: list[Snippet] = field(default_factory=list)  # text, quoted under the question
    images: list[Path] = field(default_factory=list)  # pictures kept as files, sent as image parts
    notes: list[str] = field(default_factory=list)  # what could not be sent, in words: the chat and the model read it


class Source(Protocol):
    title: str  # the submenu's name ("Resource")
    waiting: str  # its line while the listing comes ("Asking the servers…")

    def available(self) -> bool:
        """Whether there is anything to offer now, known without asking anyone (the menu is opening)."""

    async def listing(self) -> Listing:
        """What can be attached now, within the source's own bound."""

    async def fetch(self, offer: Offer, images: bool) -> Fetched:
        """`offer` read for the message; `images`: the chat's model reads pictures. Never raises: a failure is
        a note."""
