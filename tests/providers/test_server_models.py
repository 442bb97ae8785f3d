"""The server's own model list for the Settings picker, a check of the address, and the cloud catalogue
trimmed to models one chats with, plain names first."""

from __future__ import annotations

import socket

import pytest

from desktop.providers import catalog
from desktop.providers.server_models import ServerModelsError, address_problem, list_server_models
from tests.fakeserver import FakeOpenAI


@pytest.mark.parametrize(("address", "wrong"), [
    ("127.0.0.1:1234/v1", "must start with http:// or https://"),
    ("ftp://example.org", "must start with http:// or https://"),
    ("http://", "must name a host"),
    ("http://local host:1234", "must not contain spaces"),
    ("http://127.0.0.1:port/v1", "port that is not a number"),
])
def test_an_address_without_scheme_or_host_is_named(address: str, wrong: str) -> None:
    problem = address_problem(address)
    assert problem is not None and wrong in problem


def test_usable_addresses_pass() -> None:
    for address in ("", "http://127.0.0.1:1234/v1", "https://api.example.org/v1", "http://localhost:11434"):
        assert address_problem(address) is None


async def test_lists_an_openai_style_server_and_an_ollama_root(fake: FakeOpenAI) -> None:
    fake.models = ["qwen3:8b", "llama3.1"]
    assert await list_server_models(fake.base_url) == ["llama3.1", "qwen3:8b"]
    root = fake.base_url.removesuffix("/v1")
    assert await list_server_models(root) == ["llama3.1", "qwen3:8b"]


async def test_a_dead_port_and_a_silent_server_say_so_quickly() -> None:
    with pytest.raises(ServerModelsError, match=r"Nothing answers at http://127.0.0.1:9/v1\. Is the server running"):
        await list_server_models("http://127.0.0.1:9/v1")
    with socket.socket() as silent:  # accepts connections, never answers
        silent.bind(("127.0.0.1", 0))
        silent.listen()
        address = f"http://127.0.0.1:{silent.getsockname()[1]}/v1"
        with pytest.raises(ServerModelsError, match="did not answer within 0.2 s"):
            await list_server_models(address, timeout=0.2)


async def test_a_server_without_a_model_list_says_type_the_name(fake: FakeOpenAI) -> None:
    with pytest.raises(ServerModelsError, match="lists no models .*Type the model name"):
        await list_server_models(fake.base_url + "/nothing-here")


async def test_catalogue_offers_chat_models_only_with_plain_names_first() -> None:
    openai = (await catalog.chat_models())["openai"]
    assert "openai/gpt-4o-mini" in openai
    assert not [m for m in openai if "ft:" in m or "container" in m or "audio" in m or "embedding" in m]
    common, others = catalog.common_first(["openai/gpt-4o-2024-08-06", "openai/gpt-4o", "openai/o3-mini",
                                           "openai/gpt-4o-search-preview", "anthropic/claude-sonnet-4-5-20250929"])
    assert common == ["openai/gpt-4o", "openai/o3-mini"]
    assert others == ["openai/gpt-4o-2024-08-06", "openai/gpt-4o-search-preview",
                      "anthropic/claude-sonnet-4-5-20250929"]
    assert not catalog.for_chat("openai/text-embedding-3-small") and not catalog.for_chat("openai/ft:gpt-4o")
    assert catalog.for_chat("ollama_chat/llama3.1")


async def test_the_catalogue_offers_no_model_whose_provider_litellm_cannot_tell() -> None:
    """litellm's price map files some chat models under a provider no call takes (vertex_ai-language-models/...,
    anyscale/..., bedrock_converse/...): Settings' provider list and the chat's model picker offered them, and a turn
    with one failed at once (and Settings refuses such a name on Save). The catalogue offers only names whose provider
    litellm can tell, as `/model` asks it."""
    models = await catalog.chat_models()
    unnamed = [names[0] for names in models.values() if names and not await catalog.names_provider(names[0])]
    assert unnamed == []
    assert "openai/gpt-4o-mini" in models["openai"] and len(models) > 20
