"""The `voice` section of config.yaml: which speech model turns a recording into text, where it runs, and what
happens with the text; and whether answers can be read aloud, by which model and voice (desktop/config.py says
how a section is declared; the key that starts dictating is `hotkeys.dictate`, beside the other desktop keys)."""

from __future__ import annotations

import re
from collections.abc import Callable
from dataclasses import dataclass

from desktop.config import SECONDS, Section, setting


def _server_address(value: str) -> str | None:
    """A speech server's address names its scheme: without it every recording would fail against it."""
    if value.strip() and not value.strip().startswith(("http://", "https://")):
        return "empty or an address that starts with http:// or https:// (e.g. http://127.0.0.1:8080/v1)"
    return None


def _language(value: str) -> str | None:
    """Speech servers take the language as its ISO 639-1 code: "English" or "EN" fails every recording."""
    if value.strip() and not re.fullmatch(r"[a-z]{2}", value.strip()):
        return "empty or a two-letter language code in small letters, such as en, de or fr"
    return None


def _model_name(example: str) -> Callable[[str], str | None]:
    """A model name with a space or a line break inside (pasted with its surroundings, or typed as said) is
    refused by every provider, and only when it is first used."""
    def check(value: str) -> str | None:
        if any(c.isspace() or not c.isprintable() for c in value.strip()):
            return f"empty or a model name with no space or line break in it, as litellm spells it (e.g. {example})"
        return None
    return check


@dataclass
class VoiceConfig:
    stt_model: str = setting("", label="Speech model",
                             help="The model that turns speech into text, as litellm names it, e.g. openai/whisper-1 "
                             "or groq/whisper-large-v3; empty: none yet (the microphone button says so).",
                             check=_model_name("openai/whisper-1"))
    api_base: str = setting("", label="Speech server address",
                             help="An OpenAI-compatible speech server of your own, for dictation and reading "
                             "aloud, e.g. whisper.cpp's server at http://127.0.0.1:8080/v1 (with the model "
                             "openai/whisper-1); empty for the provider's own.", check=_server_address)
    language: str = setting("", label="Language",
                            help="The language spoken, as a two-letter code (en, de, fr); empty: the model "
                            "recognises it.", check=_language)
    send_on_stop: bool = setting(False, label="Send the text as soon as the recording stops",
                                 help="Off: the text lands in the message box to edit before sending.")
    max_seconds: int = setting(300, low=5, high=600, unit=SECONDS, label="Longest recording",
                               help="A recording stops by itself after this long (speech servers take about ten "
                               "minutes at most).")
    read_aloud: bool = setting(False, label="Read answers aloud",
                               help="A speaker button on each answer in the chat reads it out: with the "
                               "read-aloud model when one is set, else with the computer's own voice "
                               "(speech-dispatcher).")
    tts_model: str = setting("", label="Read-aloud model",
                             help="The model that turns an answer into speech, as litellm names it, e.g. "
                             "openai/tts-1 or openai/gpt-4o-mini-tts; empty: speech-dispatcher (spd-say), when "
                             "installed.", check=_model_name("openai/tts-1"))
    tts_voice: str = setting("alloy", label="Read-aloud voice",
                             help="The read-aloud model's voice, e.g. alloy, nova or onyx for OpenAI's models.")


SECTION = Section("voice", VoiceConfig, label="Voice",
                  help="Dictation: what you say into the microphone becomes the message's text; and answers "
                  "read aloud.")
