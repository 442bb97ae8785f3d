"""Hotkey text from Settings/config: what is accepted, how it is shown, and what each backend is asked for."""

from __future__ import annotations

import re

import pytest

from desktop.ui.hotkey import BIND_COMMAND, Chord, Hotkey, detect_backend, parse_chord
from desktop.ui.hotkey.portal import preferred_trigger
from desktop.ui.hotkey.pynput_backend import pynput_combo
from desktop.ui.hotkey.x11 import keysym_name


@pytest.mark.parametrize(("text", "shown"), [
    ("Ctrl+Alt+Space", "Ctrl+Alt+Space"), ("alt + ctrl + space", "Ctrl+Alt+Space"),
    ("Super+K", "Super+K"), ("Meta+Shift+f12", "Shift+Super+F12"), ("Control+Return", "Ctrl+Return"),
])
def test_hotkeys_are_read_leniently_and_shown_canonically(text: str, shown: str) -> None:
    assert str(parse_chord(text)) == shown


@pytest.mark.parametrize(("text", "message"), [
    ("", "write it like Ctrl+Alt+Space"), ("Ctrl+", "write it like"), ("Space", "needs at least one modifier"),
    ("Hyper+Space", "'hyper' in 'Hyper+Space' is not a modifier"), ("Ctrl+Alt", "has no key besides"),
])
def test_bad_hotkeys_say_what_is_wrong(text: str, message: str) -> None:
    with pytest.raises(ValueError, match=re.escape(message)):
        parse_chord(text)


def test_each_backend_gets_the_chord_in_its_own_syntax() -> None:
    chord = parse_chord("Ctrl+Alt+Space")
    assert keysym_name(chord.key) == "space" and keysym_name("f5") == "F5" and keysym_name("enter") == "Return"
    assert preferred_trigger(chord) == "CTRL+ALT+space"
    assert preferred_trigger(parse_chord("Super+Shift+k")) == "SHIFT+LOGO+k"
    assert pynput_combo(chord) == "<ctrl>+<alt>+<space>"
    assert pynput_combo(Chord(frozenset({"super"}), "f3")) == "<cmd>+<f3>"


async def test_without_any_mechanism_the_status_says_what_to_bind(monkeypatch: pytest.MonkeyPatch) -> None:
    for var in ("DISPLAY", "WAYLAND_DISPLAY", "XDG_SESSION_TYPE"):
        monkeypatch.delenv(var, raising=False)
    if detect_backend() != "none":
        pytest.skip("this platform always has a hotkey backend")
    status = await Hotkey().bind("Ctrl+Alt+Space")
    assert not status.active and status.backend == "none"
    assert status.hint is not None and BIND_COMMAND in status.hint


async def test_a_bad_hotkey_in_the_config_is_reported_not_raised() -> None:
    status = await Hotkey().bind("Ctrl+Banana+Space")
    assert not status.active and "'banana'" in status.message
