"""The `voice` section of config.yaml: which speech model turns a recording into text, where it runs, and what
happens with the text (desktop/config.py says how a section is declared; the key that starts dictating is
`hotkeys.dictate`, beside the other desktop keys)."""

from __future__ import annotations

from dataclasses import dataclass

from desktop.config import SECONDS, Section, setting


@dataclass
class VoiceConfig:
    stt_model: str = setting("", label="Speech model",
                             help="The model that turns speech into text, as litellm names it, e.g. openai/whisper-1 "
                             "or groq/whisper-large-v3; empty: none yet (the microphone button says so).")
    api_base: str = setting("", label="Speech server address",
                             help="An OpenAI-compatible speech server of your own, e.g. whisper.cpp's server at "
                             "http://127.0.0.1:8080/v1 (with the model openai/whisper-1); empty for the "
                             "provider's own.")
    language: str = setting("", label="Language",
                            help="The language spoken, as a two-letter code (en, de, fr); empty: the model "
                            "recognises it.")
    send_on_stop: bool = setting(False, label="Send the text as soon as the recording stops",
                                 help="Off: the text lands in the message box to edit before sending.")
    max_seconds: int = setting(300, low=5, high=600, unit=SECONDS, label="Longest recording",
                               help="A recording stops by itself after this long (speech servers take about ten "
                               "minutes at most).")


SECTION = Section("voice", VoiceConfig, label="Voice",
                  help="Dictation: what you say into the microphone becomes the message's text.")
