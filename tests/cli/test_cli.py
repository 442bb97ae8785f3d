"""The headless command line against the scripted model server: each command as a real subprocess once
(`run_cli`), the rest in-process (`run_main`, see in_process.py)."""

from __future__ import annotations

import argparse
import contextlib
import json
import os
import pty
import select
import shutil
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from desktop.cli import build_parser
from tests.cli.in_process import run_main
from tests.cli.interrupted import ctrl_c_during_a_model_call
from tests.conftest import write_config
from tests.fakeserver import FakeOpenAI, last_user_text
from tests.memkeyring import MemoryKeyring


def run_cli(home: Path, *args: str, stdin: str = "", path: str | None = None,
            shell: bool = False) -> subprocess.CompletedProcess[str]:
    """`nanobot-tray ARGS` as a process of its own, as a user runs it; with `shell`, ARGS go to sh instead, for
    what a shell does around the command (closing its stdin, a pipe to `head`)."""
    env = {k: v for k, v in os.environ.items() if not k.endswith("_API_KEY")}
    env.update(NANOBOT_TRAY_HOME=str(home), PYTHON_KEYRING_BACKEND="keyring.backends.null.Keyring")
    if path is not None:
        env["PATH"] = path
    command = ["sh", *args] if shell else [sys.executable, "-m", "desktop", *args]
    return subprocess.run(command, input=stdin, capture_output=True, text=True, env=env, timeout=60)


def test_agent_one_turn_prints_answer_and_progress(tmp_path: Path, fake: FakeOpenAI) -> None:
    write_config(tmp_path, model="openai/test", api_base=fake.base_url)
    fake.add({"tool_calls": [{"name": "write_file", "arguments": {"path": "hi.txt", "content": "x"}}]},
             {"content": "Saved hi.txt"})
    result = run_cli(tmp_path, "agent", "-m", "save a file", "-s", "work")
    assert result.returncode == 0, result.stderr
    assert result.stdout == "Saved hi.txt\n"
    assert "write_file" in result.stderr
    assert (tmp_path / "workspace" / "hi.txt").read_text() == "x"
    assert list((tmp_path / "data" / "sessions").glob("cli%3Awork.jsonl"))


def test_headless_asks_need_a_terminal_or_yes(tmp_path: Path, fake: FakeOpenAI) -> None:
    """Without bwrap exec asks; with no terminal that fails naming --yes, and --yes never lifts refusals."""
    bin_dir = tmp_path / "bin"  # a PATH without bwrap
    bin_dir.mkdir()
    (bin_dir / "git").symlink_to(shutil.which("git") or "/usr/bin/git")
    write_config(tmp_path, model="openai/test", api_base=fake.base_url)

    def exec_turn(command: str, *flags: str) -> str:
        fake.add({"tool_calls": [{"name": "exec", "arguments": {"command": command}}]}, {"content": "tried"})
        result = run_main(tmp_path, "agent", "-m", "go", *flags, path=str(bin_dir))
        assert result.returncode == 0 and result.stdout == "tried\n", result.stderr
        return [m["content"] for m in fake.requests[-1]["messages"] if m["role"] == "tool"][-1]

    asked = exec_turn("echo ran > out.txt")
    assert "exec needs the user's approval" in asked and "bubblewrap (bwrap) is not installed" in asked
    assert "with --yes" in asked and not (tmp_path / "workspace" / "out.txt").exists()
    assert "Exit code: 0" in exec_turn("echo ran > out.txt", "--yes")
    assert (tmp_path / "workspace" / "out.txt").read_text() == "ran\n"
    assert "command refused" in exec_turn("rm -rf ~", "--yes")


def test_agent_without_model_says_so(tmp_path: Path) -> None:
    result = run_main(tmp_path, "agent", "-m", "hello")
    assert result.returncode == 2
    assert "no model is configured" in result.stderr and str(tmp_path / "config.yaml") in result.stderr
    assert (tmp_path / "config.yaml").exists()


def test_agent_reports_provider_failure_in_one_line(tmp_path: Path) -> None:
    write_config(tmp_path, model="openai/test", api_base="http://127.0.0.1:9/v1",
                 provider={"retry_delays": [0.01]})
    result = run_main(tmp_path, "agent", "-m", "hello")
    assert result.returncode == 1
    assert result.stderr.splitlines() == ["  model call failed, retrying in 0.01 s (try 2 of 2)…",
                                          "error: Can't reach the model server at http://127.0.0.1:9 — is it running?"]


def test_agent_reports_missing_key(tmp_path: Path) -> None:
    write_config(tmp_path, model="openai/gpt-4o-mini")
    result = run_main(tmp_path, "agent", "-m", "hello")
    assert result.returncode == 1
    assert "No API key for provider 'openai'" in result.stderr
    assert "nanobot-tray keys set openai" in result.stderr


def test_broken_config_still_runs_on_defaults(tmp_path: Path, fake: FakeOpenAI) -> None:
    write_config(tmp_path)
    (tmp_path / "config.yaml").write_text(f"model: openai/test\napi_base: {fake.base_url}\nmax_tokens: lots\n")
    result = run_main(tmp_path, "agent", "-m", "ping")
    assert result.returncode == 0
    assert result.stdout.strip() == "echo: ping"
    assert "line 3: key 'max_tokens'" in result.stderr
    assert "lots" in (tmp_path / "config.yaml").read_text()


def test_a_config_yaml_that_cannot_be_read_is_named_with_why_not_a_traceback(tmp_path: Path) -> None:
    """A folder where config.yaml should be (or one this user may not read); left as it is."""
    (tmp_path / "config.yaml").mkdir()
    result = run_main(tmp_path, "agent", "-m", "hi")
    assert result.returncode == 2
    assert result.stderr.splitlines()[0] == f"config: {tmp_path / 'config.yaml'} could not be read (Is a directory); " \
                                            "using defaults"
    result = run_main(tmp_path, "doctor", "--offline")
    assert result.returncode == 1 and f"  - {tmp_path / 'config.yaml'} could not be read (Is a directory)\n" in result.stdout
    assert (tmp_path / "config.yaml").is_dir()


def test_agent_attaches_files_with_a(tmp_path: Path, fake: FakeOpenAI) -> None:
    write_config(tmp_path, model="openai/test", api_base=fake.base_url)
    notes, data = tmp_path / "notes.txt", tmp_path / "data.bin"
    notes.write_text("remember the milk\n")
    data.write_bytes(b"\x00\x01\x02")
    fake.add({"content": "You should buy milk."})
    result = run_main(tmp_path, "agent", "-m", "what should I do?", "-a", str(notes), "--attach", str(data))
    assert (result.returncode, result.stdout) == (0, "You should buy milk.\n"), result.stderr
    said = last_user_text(fake.requests[-1])
    assert said.startswith("what should I do?") and "remember the milk" in said and "“data.bin”" in said
    assert (tmp_path / "workspace" / "attachments" / "cli_direct" / "data.bin").read_bytes() == b"\x00\x01\x02"

    asked = len(fake.requests)
    missing = run_main(tmp_path, "agent", "-m", "and this?", "-a", str(notes), "-a", str(tmp_path / "gone.csv"))
    assert missing.returncode == 2 and "error: gone.csv was not found" in missing.stderr
    assert "nothing was sent" in missing.stderr
    folder = run_main(tmp_path, "agent", "-m", "and this?", "-a", str(tmp_path))
    assert folder.returncode == 2 and "is a folder" in folder.stderr
    alone = run_main(tmp_path, "agent", "-a", str(notes))
    assert alone.returncode == 2 and "-a attaches files to the message given with -m" in alone.stderr
    assert len(fake.requests) == asked  # nothing reached the model


def test_an_empty_message_is_refused_before_the_model_is_asked(tmp_path: Path, fake: FakeOpenAI) -> None:
    """`-m "$NOTE"` with the variable unset sent an empty message, a model call (and an error from providers that
    refuse one); a file attached with nothing to say still goes."""
    write_config(tmp_path, model="openai/test", api_base=fake.base_url)
    for empty in ("", " \n\t"):
        result = run_main(tmp_path, "agent", "-m", empty)
        assert (result.returncode, result.stdout) == (2, "")
        assert result.stderr == "error: the message given with -m is empty; nothing was sent\n"
    assert fake.requests == [] and not (tmp_path / "data" / "sessions").exists()
    (tmp_path / "notes.txt").write_text("remember the milk\n")
    result = run_main(tmp_path, "agent", "-m", "", "-a", str(tmp_path / "notes.txt"))
    assert result.returncode == 0 and "remember the milk" in last_user_text(fake.requests[-1])


def test_bytes_that_are_not_utf8_in_a_message_a_chat_name_or_a_file_name_are_mended_or_refused(
        tmp_path: Path, fake: FakeOpenAI) -> None:
    """A terminal in another encoding hands Python such bytes as lone surrogates, which once ended the turn with an
    internal error and left the chat unsaveable; a file's name is refused with why (a path mended is another)."""
    write_config(tmp_path, model="openai/test", api_base=fake.base_url)
    typed = os.fsdecode(b"caf\xe9, stray \xff\xfe, half \xf0\x9f")  # Latin-1, two stray bytes, a cut sequence
    mended = "caf\ufffd, stray \ufffd\ufffd, half \ufffd\ufffd"
    for _ in range(2):  # and the chat goes on
        result = run_main(tmp_path, "agent", "-m", typed, "-s", os.fsdecode(b"caf\xe9"))
        assert (result.returncode, result.stdout) == (0, f"echo: {mended}\n"), result.stderr
    saved = (tmp_path / "data" / "sessions" / "cli%3Acaf%EF%BF%BD.jsonl").read_text(encoding="utf-8")
    assert [json.loads(line).get("content") for line in saved.splitlines()[1:]] == [mended, f"echo: {mended}"] * 2

    result = run_main(tmp_path, "agent", stdin=os.fsdecode(b"hi \xe9 there\n"))  # a surrogateescape terminal
    assert result.returncode == 0 and "echo: hi \ufffd there" in result.stdout, result.stderr

    note = os.path.join(os.fsencode(tmp_path), b"note-\xe9.txt")
    with open(note, "wb") as handle:
        handle.write(b"hello")
    asked = len(fake.requests)
    result = run_main(tmp_path, "agent", "-m", "read it", "-a", os.fsdecode(note))
    assert result.returncode == 2 and "error: note-\ufffd.txt cannot be attached: its path is not UTF-8 text; " \
        "rename it; nothing was sent" in result.stderr
    assert len(fake.requests) == asked


def test_interactive_chat(tmp_path: Path, fake: FakeOpenAI) -> None:
    write_config(tmp_path, model="openai/test", api_base=fake.base_url)
    result = run_main(tmp_path, "agent", stdin="first line\n/help\n")
    assert result.returncode == 0
    assert "echo: first line" in result.stdout and "/status" in result.stdout


def test_keys_without_keyring_explain_the_fix(tmp_path: Path) -> None:
    env = {**os.environ, "NANOBOT_TRAY_HOME": str(tmp_path), "PYTHON_KEYRING_BACKEND": "keyring.backends.fail.Keyring"}
    result = subprocess.run([sys.executable, "-m", "desktop", "keys", "set", "openai"], input="sk-abc\n",
                            capture_output=True, text=True, env=env, timeout=60)
    assert result.returncode == 2
    assert "keyring is not usable" in result.stderr and "OPENAI_API_KEY" in result.stderr
    assert not any(b"sk-abc" in p.read_bytes() for p in tmp_path.rglob("*") if p.is_file())


def test_ctrl_d_at_the_hidden_key_prompt_stores_nothing_and_says_so(tmp_path: Path) -> None:
    """Ctrl+D at `keys set`'s hidden prompt (the person changed their mind) ended in an EOFError traceback."""
    env = {k: v for k, v in os.environ.items() if not k.endswith("_API_KEY")}
    env.update(NANOBOT_TRAY_HOME=str(tmp_path), PYTHON_KEYRING_BACKEND="keyring.backends.null.Keyring")
    pid, terminal = pty.fork()
    if pid == 0:  # the child: the command at a terminal of its own
        os.execve(sys.executable, [sys.executable, "-m", "desktop", "keys", "set", "openai"], env)
    shown = b""
    try:
        end = time.monotonic() + 30
        while time.monotonic() < end:
            if select.select([terminal], [], [], 0.2)[0]:
                try:
                    chunk = os.read(terminal, 4096)
                except OSError:  # the command ended and closed its terminal
                    break
                if not chunk:
                    break
                shown += chunk
                if shown.endswith(b"(input hidden): "):
                    os.write(terminal, b"\x04")  # Ctrl+D
        _, status = os.waitpid(pid, 0)
    finally:
        os.close(terminal)
        with contextlib.suppress(ProcessLookupError, ChildProcessError):
            os.kill(pid, signal.SIGKILL)
            os.waitpid(pid, 0)
    said = shown.decode()
    assert os.waitstatus_to_exitcode(status) == 2 and "Traceback" not in said, said
    assert "error: no key was given; nothing was stored" in said


def test_doctor_reports_paths_and_config(tmp_path: Path, fake: FakeOpenAI) -> None:
    write_config(tmp_path, model="openai/test", api_base=fake.base_url)
    result = run_main(tmp_path, "doctor")
    assert result.returncode == 0, result.stderr
    assert str(tmp_path / "config.yaml") in result.stdout and "config ok" in result.stdout
    assert "reachable:  yes" in result.stdout
    assert "commands:   sandboxed with bubblewrap" in result.stdout
    assert ("; 2048 MB of memory per process, files up to 1024 MB, processor time up to the timeout on each core\n"
            in result.stdout)
    assert "network:    internet (tools.exec.network: internet): public internet addresses only" in result.stdout


def test_doctor_in_a_fresh_home_exits_0_and_says_what_to_set_up(tmp_path: Path) -> None:
    """A new install (no config.yaml, no key, no keyring here, as CI runs it) is not broken, only not set up."""
    result = run_cli(tmp_path / "fresh", "doctor")
    assert result.returncode == 0, result.stdout + result.stderr
    assert "model:      not configured (set `model` in config.yaml or open Settings)" in result.stdout
    assert result.stderr == ""


def test_doctor_exits_non_zero_on_a_config_yaml_that_does_not_parse(tmp_path: Path) -> None:
    """It said what was wrong and exited 0, so a script or a support checklist running it saw nothing wrong: the
    app then runs on defaults, with no model."""
    (tmp_path / "config.yaml").write_text("model: openai/test\nmax_tokens: [1000\n")
    result = run_main(tmp_path, "doctor", "--offline")
    assert result.returncode == 1
    assert "not valid YAML" in result.stdout
    assert result.stderr.startswith("doctor: config.yaml cannot be read, so the app runs on defaults")


def test_doctor_exits_non_zero_when_the_model_does_not_answer(tmp_path: Path, closed_port: int) -> None:
    write_config(tmp_path, model="openai/test", api_base=f"http://127.0.0.1:{closed_port}/v1")
    result = run_main(tmp_path, "doctor")
    assert result.returncode == 1
    assert "reachable:  no — " in result.stdout
    assert "doctor: the model openai/test does not answer" in result.stderr


def test_doctor_warns_when_commands_share_this_computers_network(tmp_path: Path) -> None:
    write_config(tmp_path, tools={"exec": {"network": "host"}})
    result = run_cli(tmp_path, "doctor", "--offline")
    assert result.returncode == 0, result.stderr
    assert "network:    WARNING: shared with this computer (tools.exec.network: host)" in result.stdout
    write_config(tmp_path, tools={"exec": {"network": False}})  # as earlier versions wrote it
    result = run_cli(tmp_path, "doctor", "--offline")
    assert "network:    off (tools.exec.network: off): commands have no network" in result.stdout
    assert "config ok" in result.stdout


def test_doctor_says_when_commands_are_not_sandboxed(tmp_path: Path) -> None:
    """Without bwrap on PATH the mode in force is named, with what to install."""
    env = {**os.environ, "NANOBOT_TRAY_HOME": str(tmp_path), "PATH": str(tmp_path),
           "PYTHON_KEYRING_BACKEND": "keyring.backends.null.Keyring"}
    result = subprocess.run([sys.executable, "-m", "desktop", "doctor", "--offline"], capture_output=True,
                            text=True, env=env, timeout=60)
    assert result.returncode == 0, result.stderr
    assert ("commands:   not sandboxed: bubblewrap (bwrap) is not installed — install the `bubblewrap` package; "
            "dangerous commands are still refused") in result.stdout
    assert "; 2048 MB of memory per process, files up to 1024 MB" in result.stdout  # the same limits without it
    assert "network:    WARNING: not enforced: commands are not sandboxed, so they share this computer's network" \
        in result.stdout


def test_agent_started_with_stdin_closed_answers_m_and_says_a_chat_needs_input(tmp_path: Path,
                                                                                fake: FakeOpenAI) -> None:
    """As from a service or `cmd <&-`: once a traceback for both (it asked whether stdin was a terminal)."""
    write_config(tmp_path, model="openai/test", api_base=fake.base_url)

    def closed(*args: str) -> subprocess.CompletedProcess[str]:
        return run_cli(tmp_path, "-c", 'exec "$0" -m desktop "$@" <&-', sys.executable, *args, shell=True)

    result = closed("agent", "-m", "hi")
    assert (result.returncode, result.stdout) == (0, "echo: hi\n"), result.stderr
    result = closed("agent")
    assert result.returncode == 2 and result.stdout == ""
    assert result.stderr == "error: there is no input to chat on (stdin is closed); give the message with -m\n"


def test_output_whose_reader_left_ends_quietly_not_in_a_traceback(tmp_path: Path) -> None:
    """`nanobot-tray ... | head -1`: head leaves after its line. Here the reader is gone before the first
    write, so every write fails, as the ones after head's line do."""
    env = {k: v for k, v in os.environ.items() if not k.endswith("_API_KEY")}
    env.update(NANOBOT_TRAY_HOME=str(tmp_path), PYTHON_KEYRING_BACKEND="keyring.backends.null.Keyring")
    for command in (["chats", "list"], ["doctor", "--offline"]):  # one short output, one printed line by line
        reader, writer = os.pipe()
        os.close(reader)
        try:
            result = subprocess.run([sys.executable, "-m", "desktop", *command], stdout=writer,
                                    stderr=subprocess.PIPE, stdin=subprocess.DEVNULL, text=True, env=env,
                                    timeout=60)
        finally:
            os.close(writer)
        assert (result.returncode, result.stderr) == (141, ""), command


def test_a_session_name_too_long_for_a_file_name_is_refused_before_the_turn(tmp_path: Path, fake: FakeOpenAI) -> None:
    """The turn could neither load nor save such a chat: it died in the agent loop, and the command waited forever."""
    write_config(tmp_path, model="openai/test", api_base=fake.base_url)
    for name in ("x" * 250, "é" * 42):  # each "é" is six characters in the file name (%C3%A9)
        result = run_cli(tmp_path, "agent", "-m", "hi", "-s", name)
        assert (result.returncode, result.stdout) == (2, "")
        assert result.stderr == "error: the session name given with -s is too long to be a chat's file name; " \
                                "give a shorter one\n"
    assert fake.requests == []
    result = run_main(tmp_path, "agent", "-m", "hi", "-s", "x" * 243)  # the longest that fits
    assert (result.returncode, result.stdout) == (0, "echo: hi\n"), result.stderr


@pytest.mark.parametrize(("name", "said"), [
    ("", "the session name given with -s is empty; leave -s out for the default chat (direct), or name one"),
    ("  ", "the session name given with -s is empty; leave -s out for the default chat (direct), or name one"),
    ("cli:", "the session name given with -s is empty; leave -s out for the default chat (direct), or name one"),
    ("work\nnotes", "the session name given with -s has a line break, tab or other control character; give one "
                    "of visible characters and spaces"),
    ("a\tb", "the session name given with -s has a line break, tab or other control character; give one "
              "of visible characters and spaces"),
])
def test_a_session_name_that_is_empty_or_has_a_line_break_is_refused_before_the_turn(
        tmp_path: Path, fake: FakeOpenAI, name: str, said: str) -> None:
    """-s "" made a chat keyed "cli:" beside the default one, and a line break in the name split the chat's line
    in `chats list` in two, so a person could neither read nor copy its key to export it."""
    write_config(tmp_path, model="openai/test", api_base=fake.base_url)
    result = run_main(tmp_path, "agent", "-m", "hi", "-s", name)
    assert (result.returncode, result.stdout, result.stderr) == (2, "", f"error: {said}\n")
    assert fake.requests == [] and not (tmp_path / "data" / "sessions").exists()


def test_a_chats_key_as_chats_list_shows_it_continues_that_chat(tmp_path: Path, fake: FakeOpenAI) -> None:
    """`chats list` shows a terminal chat as cli:work; given back to -s, that key began another chat, cli:cli:work,
    without a word. A key of the app's window is not this command's: it says so, and sends nothing."""
    write_config(tmp_path, model="openai/test", api_base=fake.base_url)
    assert run_main(tmp_path, "agent", "-m", "first", "-s", "work").returncode == 0
    (listed,) = run_main(tmp_path, "chats", "list").stdout.splitlines()
    key = listed.split("\t")[0]
    assert key == "cli:work"
    again = run_main(tmp_path, "agent", "-m", "second", "-s", key)
    assert again.returncode == 0, again.stderr
    assert [line.split("\t")[0] for line in run_main(tmp_path, "chats", "list").stdout.splitlines()] == [key]
    assert "first" in str(fake.requests[-1]["messages"])  # the same chat: its history went with the message
    window = run_main(tmp_path, "agent", "-m", "third", "-s", "desktop:ab12cd")
    assert (window.returncode, window.stdout) == (2, "") and len(fake.requests) == 2
    assert window.stderr == ("error: desktop:ab12cd is the key of a chat of the tray app; -s names a chat of this "
                             "command (cli:NAME, given as NAME): open that chat in the app, or give a name of "
                             "your own\n")


def test_every_argument_a_command_takes_says_in_its_help_what_to_give() -> None:
    """`cron allow --help` listed "id" and "tool" and `skills enable --help` "name", each with nothing beside it:
    which id, which name, and where to find them, the person had to guess."""
    def unexplained(parser: argparse.ArgumentParser, path: str) -> list[str]:
        found = []
        for action in parser._actions:
            if isinstance(action, argparse._SubParsersAction):
                for name, sub in action.choices.items():
                    found += unexplained(sub, f"{path} {name}")
            elif not action.option_strings and not action.help:
                found.append(f"{path} {action.dest}")
        return found

    assert unexplained(build_parser(), "nanobot-tray") == []


def test_no_wait_without_a_message_says_it_needs_one(tmp_path: Path, fake: FakeOpenAI) -> None:
    """`agent --no-wait` was taken without a word and began a chat at the terminal as if it were not there."""
    write_config(tmp_path, model="openai/test", api_base=fake.base_url)
    result = run_main(tmp_path, "agent", "--no-wait", stdin="hello\n")
    assert (result.returncode, result.stdout) == (2, "") and fake.requests == []
    assert result.stderr == ("error: --no-wait leaves once the answer to the message given with -m is printed; "
                             "give -m too\n")


def test_ctrl_c_in_any_command_ends_it_with_130_and_no_traceback(tmp_path: Path, fake: FakeOpenAI) -> None:
    """Here `doctor` waiting for the model: every command without a handler of its own printed a
    KeyboardInterrupt traceback (doctor, keys set at its hidden prompt, mcp login while it waits, ...)."""
    write_config(tmp_path, model="openai/test", api_base=fake.base_url)
    doctor = ctrl_c_during_a_model_call(tmp_path, fake, "pong", "doctor")
    assert (doctor.returncode, doctor.stderr) == (130, ""), doctor.stderr
    assert doctor.stdout.startswith("nanobot-tray ") and "reachable:" not in doctor.stdout


def test_a_key_stored_under_a_capitalised_provider_name_says_which_name_model_calls_use(tmp_path: Path) -> None:
    """`keys set OpenAI` stored a key no model call ever found (they look for `openai`), and said it was stored."""
    keys = MemoryKeyring()
    result = run_main(tmp_path, "keys", "set", "OpenAI", stdin="sk-abc\n", keys=keys)
    assert result.returncode == 0 and "Stored the OpenAI key" in result.stdout
    assert "`nanobot-tray keys set openai`" in result.stderr
    assert "`nanobot-tray keys set" not in run_main(tmp_path, "keys", "set", "openai", stdin="sk-abc\n", keys=keys).stderr
