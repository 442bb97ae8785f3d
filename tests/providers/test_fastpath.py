"""The provider skips the openai client's message transform; that is only right while the transform
would leave messages and tools unchanged. If an openai upgrade makes it change them, this fails."""

from __future__ import annotations

import copy

from openai._utils._transform import async_maybe_transform
from openai.types.chat import completion_create_params

from desktop.config import Config
from desktop.core import default_tools


async def test_openai_transform_is_identity_for_our_messages_and_tools(tmp_path) -> None:
    tools = default_tools(Config(), tmp_path).schemas()
    messages = [
        {"role": "system", "content": "sys"},
        {"role": "user", "content": [{"type": "text", "text": "look"},
                                     {"type": "image_url", "image_url": {"url": "data:image/png;base64,AAAA"}}]},
        {"role": "assistant", "content": None, "reasoning_content": "hmm",
         "tool_calls": [{"id": "c1", "type": "function", "function": {"name": "exec", "arguments": "{}"}}]},
        {"role": "tool", "tool_call_id": "c1", "name": "exec", "content": "out"},
        {"role": "assistant", "content": "done"},
    ]
    body = {"messages": copy.deepcopy(messages), "model": "m", "stream": True, "tools": copy.deepcopy(tools)}
    out = await async_maybe_transform(body, completion_create_params.CompletionCreateParamsStreaming)
    assert out["messages"] == messages and out["tools"] == tools
