"""The connected servers' resources in the `+` menu of the chat and the quick prompt (a desktop-context source,
desktop/context/sources.py): listed afresh when the menu opens, read only when the message is sent.

Text goes quoted under the question, headed by its server and URI, capped as a tool result is (a resource may
be a whole mailbox); a picture goes as an image part to a model that reads images, kept as a file like a
screenshot so the saved chat shows and sends it again. A read that fails is said in the message, which still goes."""

from __future__ import annotations

import asyncio
import base64
import binascii
import logging
import mimetypes
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING

from desktop.agent.runner import MODEL_RESULT_CAP
from desktop.context.captures import keep_capture
from desktop.context.quoting import Snippet
from desktop.context.sources import Fetched, Listing, Offer
from desktop.mcp.manager import McpServers
from desktop.mcp.results import UNTRUSTED_NOTE
from desktop.tools.base import ToolError, cap_text

if TYPE_CHECKING:
    from mcp.types import ReadResourceResult, Resource

    from desktop.mcp.connection import ServerConnection

log = logging.getLogger(__name__)
# Seconds the menu waits for the servers' lists: a server slower than that is shown as not answering, and
# its request is cancelled (the person is looking at the menu, not at a spinner).
LIST_WITHIN = 3.0


@dataclass(frozen=True)
class ResourceOffer(Offer):
    server: str = ""

    @property
    def uri(self) -> str:
        return self.where


class ResourceSource:
    """The `Resource` submenu: each connected server's resources, by server and name."""

    title = "Resource"
    waiting = "Asking the servers…"

    def __init__(self, servers: McpServers, data_dir: Path) -> None:
        self._servers = servers
        self._data_dir = data_dir  # pictures are kept under its captures/, as screenshots are

    def _offering(self) -> list[ServerConnection]:
        """Connected servers that listed resources when they connected or last said their list changed."""
        return [conn for conn in self._servers.servers.values() if conn.state == "connected" and conn.resources]

    def available(self) -> bool:
        return bool(self._offering())

    async def listing(self) -> Listing:
        """Every offering server asked at once, each answer waited for up to LIST_WITHIN seconds."""
        asked = {conn.name: asyncio.ensure_future(conn.list_resources()) for conn in self._offering()}
        if not asked:
            return Listing([], [])
        try:
            _, late = await asyncio.wait(asked.values(), timeout=LIST_WITHIN)
        finally:
            for task in asked.values():
                task.cancel()  # those still asking: no one will look at their answer
        offers: list[Offer] = []
        notes: list[str] = []
        for server, task in asked.items():
            if task in late:
                notes.append(f"{server}: no answer")
            elif (failed := task.exception()) is not None:
                log.info("MCP server %s: listing its resources failed: %s", server, failed)
                notes.append(f"{server}: could not list its resources")
            elif not (resources := task.result()[0]):
                notes.append(f"{server}: no resources now")
            else:
                offers.extend(offer(server, resource) for resource in resources)
        return Listing(offers, notes)

    async def fetch(self, offer: Offer, images: bool) -> Fetched:
        assert isinstance(offer, ResourceOffer)
        conn = self._servers.servers.get(offer.server)
        try:
            if conn is None:
                state = self._servers.states().get(offer.server, "no longer configured")
                raise ToolError(f"MCP server '{offer.server}' is not connected ({state})")
            result = await conn.read_resource(offer.uri)
        except ToolError as exc:
            return Fetched(notes=[not_sent(offer, str(exc))])
        return await self._contents(offer, result, images)

    async def _contents(self, offer: ResourceOffer, result: ReadResourceResult, images: bool) -> Fetched:
        from mcp import types  # loaded by then: the result came from a connected server

        texts: list[str] = []
        pictures: list[Path] = []
        notes: list[str] = []
        for contents in result.contents:
            if isinstance(contents, types.TextResourceContents):
                texts.append(contents.text)
                continue
            mime = contents.mime_type or ""
            suffix = mimetypes.guess_extension(mime) if mime.startswith("image/") else None
            if suffix is None:
                notes.append(not_sent(offer, f"its contents ({mime or 'of an unknown type'}, about "
                                             f"{len(contents.blob) * 3 // 4:,} bytes) are not text or a picture"))
            elif not images:
                notes.append(not_sent(offer, "it is a picture and the chat's model does not read images"))
            else:
                try:
                    data = base64.b64decode(contents.blob, validate=True)
                    pictures.append(await asyncio.to_thread(keep_capture, self._data_dir, data, "resource", suffix))
                except (binascii.Error, OSError) as exc:
                    notes.append(not_sent(offer, f"its picture could not be kept ({exc})"))
        # marked as any MCP result is: the person chose the resource, but a server relays what anyone wrote
        capped = cap_text("\n".join(texts), MODEL_RESULT_CAP)
        text = f"{UNTRUSTED_NOTE.format(server=offer.server)}\n\n{capped}"
        snippets = [Snippet(f"Resource {offer.uri} of MCP server '{offer.server}'", text)] if texts else []
        if not (snippets or pictures or notes):
            notes.append(not_sent(offer, "the server sent it empty"))
        return Fetched(snippets, pictures, notes)


def offer(server: str, resource: Resource) -> ResourceOffer:
    """A resource as the menu and its chip show it: by server and its title (else its name, else its URI)."""
    uri = str(resource.uri)
    return ResourceOffer(f"{server} · {resource.title or resource.name or uri}", resource.mime_type or "", uri,
                         server)


def not_sent(offer: ResourceOffer, why: str) -> str:
    """What the person (in their message, in the chat) and the model read instead of the resource."""
    return f"[Not attached: {offer.label} ({offer.uri}): {why.rstrip('.')}.]"
