"""A failed model call names its cause in plain words and the next step, for the chat and the Settings test alike."""

from __future__ import annotations

import pytest

from desktop.config import Config
from desktop.providers.failures import FailureKind
from desktop.providers.llm import LLMProvider, ProviderError
from desktop.providers.settings import ProviderConfig
from tests.fakeserver import FakeOpenAI

HI = [{"role": "user", "content": "hi"}]


def provider(api_base: str, retries: int = 0) -> LLMProvider:
    return LLMProvider(Config(model="openai/test", api_base=api_base,
                              provider=ProviderConfig(timeout=5, retry_delays=[0.01] * retries)))


async def failure(call: LLMProvider) -> ProviderError:
    with pytest.raises(ProviderError) as caught:
        await call.chat(HI)
    return caught.value


async def test_nothing_listening_names_the_server_and_asks_if_it_runs(closed_port: int) -> None:
    error = await failure(provider(f"http://127.0.0.1:{closed_port}/v1"))
    assert str(error) == f"Can't reach the model server at http://127.0.0.1:{closed_port} — is it running?"
    assert error.kind is FailureKind.UNREACHABLE


async def test_a_refused_key_points_at_settings(fake: FakeOpenAI) -> None:
    fake.add({"status": 401, "body": {"error": {"message": "invalid api key"}}})
    error = await failure(provider(fake.base_url))
    assert error.kind is FailureKind.KEY
    assert "refused the API key (HTTP 401)" in str(error) and "Settings" in str(error)


async def test_an_unknown_model_lists_what_the_server_offers(fake: FakeOpenAI) -> None:
    fake.models = ["llama-3.2-3b", "qwen2.5-7b"]
    fake.add({"status": 404, "body": {"error": {"message": "model 'test' not found"}}})
    error = await failure(provider(fake.base_url))
    assert error.kind is FailureKind.MODEL
    assert str(error) == (f"The model server at http://127.0.0.1:{fake.port} does not know the model 'openai/test'. "
                          "It offers: llama-3.2-3b, qwen2.5-7b.")


async def test_quota_says_so_and_is_not_retried(fake: FakeOpenAI) -> None:
    fake.add({"status": 429, "body": {"error": {"message": "You exceeded your current quota",
                                                "type": "insufficient_quota"}}})
    error = await failure(provider(fake.base_url, retries=3))
    assert error.kind is FailureKind.QUOTA and "out of quota or credit" in str(error)
    assert len(fake.requests) == 1


@pytest.mark.parametrize("model", ["nosuch/x", "gpt-x"])
async def test_a_model_name_naming_no_provider_says_what_to_give(fake: FakeOpenAI, model: str) -> None:
    """litellm refused it with its own text (about Huggingface endpoints); the server was never asked."""
    call = LLMProvider(Config(model=model, provider=ProviderConfig(timeout=5, retry_delays=[0.01])))
    error = await failure(call)
    assert str(error) == (f"The model name '{model}' names no provider the app knows; give provider/model, such as "
                          "openai/gpt-4o-mini or ollama/llama3 (Settings → Model).")
    assert error.kind is FailureKind.MODEL
    assert fake.requests == []


async def test_a_bare_model_name_for_a_server_says_to_put_openai_before_it(fake: FakeOpenAI) -> None:
    error = await failure(LLMProvider(Config(model="my-model", api_base=fake.base_url,
                                             provider=ProviderConfig(timeout=5))))
    assert str(error) == ("The model name 'my-model' names no provider the app knows; for an OpenAI-compatible "
                          "server give it as openai/my-model (Settings → Model).")
    assert error.kind is FailureKind.MODEL and fake.requests == []
