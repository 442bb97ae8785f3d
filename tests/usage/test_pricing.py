"""A call's price comes from litellm's price map, cached prompt tokens at their own price; a local server and a
model the map does not know have no price."""

from __future__ import annotations

import pytest

from desktop.providers.litellm_env import litellm
from desktop.usage.pricing import audio_cost, cost_usd, is_local


def test_a_priced_model_costs_what_the_price_map_says_with_cached_tokens_cheaper() -> None:
    info = litellm().get_model_info("openai/gpt-4o-mini")
    full, cached, out = info["input_cost_per_token"], info["cache_read_input_token_cost"], info["output_cost_per_token"]
    assert cached < full
    assert cost_usd("openai/gpt-4o-mini", 1000, 100, 0, None) == pytest.approx(1000 * full + 100 * out)
    assert cost_usd("openai/gpt-4o-mini", 1000, 100, 600, "https://api.openai.com/v1") == pytest.approx(
        400 * full + 600 * cached + 100 * out)


def test_no_price_for_a_local_server_or_an_unknown_model() -> None:
    assert cost_usd("openai/gpt-4o-mini", 1000, 100, 0, "http://127.0.0.1:1234/v1") is None
    assert cost_usd("openai/my-finetune-nobody-prices", 1000, 100, 0, None) is None


def test_speech_models_cost_what_the_map_bills_them_by_seconds_heard_or_characters_read() -> None:
    whisper, tts = litellm().get_model_info("openai/whisper-1"), litellm().get_model_info("openai/tts-1")
    assert audio_cost("openai/whisper-1", False, 10.0, 0, None) == pytest.approx(10 * whisper["input_cost_per_second"])
    assert audio_cost("openai/tts-1", True, None, 1000, None) == pytest.approx(1000 * tts["input_cost_per_character"])
    assert audio_cost("openai/whisper-1", False, 10.0, 0, "http://127.0.0.1:8080/v1") is None
    assert audio_cost("openai/gpt-4o-mini-tts", True, None, 1000, None) is None  # by tokens only: cost_usd's part
    assert audio_cost("openai/nobody-prices-this", False, 10.0, 0, None) is None


@pytest.mark.parametrize(("api_base", "local"), [
    ("http://localhost:11434", True), ("http://127.0.0.1:8080/v1", True), ("http://192.168.1.20:1234/v1", True),
    ("http://[::1]:8080/v1", True), ("http://gpu-box:8000/v1", True), ("http://studio.local:1234", True),
    ("https://openrouter.ai/api/v1", False), ("https://8.8.8.8/v1", False), (None, False)])
def test_which_servers_are_local(api_base: str | None, local: bool) -> None:
    assert is_local(api_base) is local
