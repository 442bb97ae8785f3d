"""A person's comments in config.yaml survive the app writing the file (desktop/yaml_comments.py): a setting
changed in a window or by a command rewrites config.yaml whole, and PyYAML reads no comments, so every note
written by hand (or copied with the README's example) was gone after the first change."""

from __future__ import annotations

from pathlib import Path

import yaml

from desktop.settings import Settings
from desktop.skills.loader import set_skill_enabled

HAND_WRITTEN = """\
# my setup: the cheap model at home
model: openai/gpt-4o-mini   # the cheap one
provider:
  # slow network at home
  timeout: 300.0
  retry_delays:
    - 1.0   # first try soon
    - 5.0
tools:  # shell commands
  exec:
    timeout: 120  # long builds
voice:
  tts_voice: "alloy # a hash in a value"
# last line: ask Sam before changing
"""


def lines(path: Path) -> list[str]:
    return path.read_text(encoding="utf-8").splitlines()


async def test_comments_written_by_hand_stay_beside_their_keys_when_a_setting_is_saved(tmp_path: Path) -> None:
    path = tmp_path / "config.yaml"
    path.write_text(HAND_WRITTEN, encoding="utf-8")
    settings = Settings.open(path)

    await set_skill_enabled(settings, "weather", False)  # `nanobot-tray skills disable weather`, or the Skills window

    saved = lines(path)
    assert saved[saved.index("model: openai/gpt-4o-mini  # the cheap one") - 1] == "# my setup: the cheap model at home"
    assert saved[saved.index("  timeout: 300.0") - 1] == "  # slow network at home"
    assert "  - 1.0  # first try soon" in saved and "tools:  # shell commands" in saved
    assert "    timeout: 120  # long builds" in saved
    assert saved[-1] == "# last line: ask Sam before changing"
    data = yaml.safe_load(path.read_text(encoding="utf-8"))
    assert data["skills"]["disabled"] == ["weather"] and data["voice"]["tts_voice"] == "alloy # a hash in a value"
    assert data["provider"]["timeout"] == 300.0 and data["tools"]["exec"]["timeout"] == 120
    assert sum("#" in line for line in saved) == sum("#" in line for line in HAND_WRITTEN.splitlines()) + 2  # header

    await set_skill_enabled(settings, "weather", True)
    again = lines(path)
    assert [line for line in again if "#" in line] == [line for line in saved if "#" in line]  # none moved or doubled


async def test_a_file_the_app_wrote_is_written_as_before(tmp_path: Path) -> None:
    path = tmp_path / "config.yaml"
    settings = Settings.open(path)  # none yet: the app writes its defaults
    first = path.read_text(encoding="utf-8")

    await set_skill_enabled(settings, "weather", False)

    assert path.read_text(encoding="utf-8") == first.replace("  disabled: []", "  disabled:\n  - weather")
