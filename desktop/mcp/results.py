"""An MCP tool result as a tool output: text joined, images as image parts, errors as tool errors."""

from __future__ import annotations

import json
from typing import TYPE_CHECKING, Any

from desktop.tools.base import ToolError, ToolOutput

if TYPE_CHECKING:
    from mcp.types import CallToolResult


def to_output(result: CallToolResult) -> ToolOutput:
    from mcp import types  # loaded by then: a result came from a connected server

    texts: list[str] = []
    images: list[dict[str, Any]] = []
    for block in result.content:
        if isinstance(block, types.TextContent):
            texts.append(block.text)
        elif isinstance(block, types.ImageContent):
            images.append({"type": "image_url", "image_url": {"url": f"data:{block.mime_type};base64,{block.data}"}})
        elif isinstance(block, types.AudioContent):
            texts.append(f"[audio ({block.mime_type}) not shown]")
        elif isinstance(block, types.ResourceLink):
            texts.append(f"[resource: {block.uri}]")
        elif isinstance(block, types.EmbeddedResource):
            inner = block.resource
            texts.append(inner.text if isinstance(inner, types.TextResourceContents)
                         else f"[binary resource {inner.uri} not shown]")
    if result.structured_content is not None and not texts:
        texts.append(json.dumps(result.structured_content, ensure_ascii=False, indent=1))
    text = "\n".join(texts)
    if result.is_error:
        raise ToolError(text or "the tool reported an error without a message")
    if not images:
        return text or "(no output)"
    return ([{"type": "text", "text": text}] if text else []) + images
