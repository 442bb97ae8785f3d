"""`nanobot-tray cron list | remove | run-due` and `nanobot-tray heartbeat` against the scripted model: each as a
real subprocess once, the rest in-process."""

from __future__ import annotations

import contextlib
import json
import os
import re
import shlex
import subprocess
import sys
import threading
import time
from collections.abc import Iterator
from datetime import UTC, datetime, timedelta
from pathlib import Path

import pytest

from desktop.reminders.book import local, wanted_text
from desktop.reminders.jobs import Job, JobStore, render
from desktop.scheduler.schedules import At, Cron, Every
from tests.cli.in_process import run_main
from tests.cli.interrupted import ctrl_c_during_a_model_call
from tests.cli.test_cli import run_cli
from tests.conftest import write_config
from tests.fakeserver import FakeOpenAI
from tests.usage.test_counting import counts


@pytest.fixture
def jobs(tmp_path: Path, fake: FakeOpenAI, monkeypatch: pytest.MonkeyPatch) -> JobStore:
    """A home with two saved jobs: one due five minutes ago, one on Mondays at 08:30 in Paris."""
    monkeypatch.setenv("TZ", "Europe/Paris")
    write_config(tmp_path, model="openai/test", api_base=fake.base_url)
    now = datetime.now(UTC).replace(microsecond=0)
    due = now - timedelta(minutes=5)
    monday = datetime(2030, 1, 7, 7, 30, tzinfo=UTC)
    store = JobStore(tmp_path / "data" / "state")
    store.write(render([
        Job("a1b2c3", "desktop:plans", "Remind the user to call Sam", "Call Sam", At(due), due, due),
        Job("d4e5f6", "quick:news", "Summarise the news", "News", Cron("30 8 * * 1", "Europe/Paris"), now,
            monday),
    ]))
    return store


def test_list_shows_each_job_with_its_next_run_in_local_time_and_its_chat(tmp_path: Path, jobs: JobStore) -> None:
    sessions = tmp_path / "data" / "sessions"
    sessions.mkdir(parents=True)
    (sessions / "desktop%3Aplans.jsonl").write_text(
        '{"_type": "metadata", "key": "desktop:plans", "title": "Plans for May"}\n', encoding="utf-8")
    result = run_cli(tmp_path, "cron", "list")
    assert result.returncode == 0, result.stderr
    lines = result.stdout.splitlines()
    assert lines[1] == ("d4e5f6 · “News” · Mondays at 08:30 (Europe/Paris) · next Mon 2030-01-07 08:30 CET "
                        "· chat quick:news")  # a chat with no file has no title: its key
    assert lines[0].startswith("a1b2c3 · “Call Sam” · once at ") and lines[0].endswith("· chat “Plans for May”")


def test_run_due_runs_what_is_due_in_its_chat_prints_the_answer_and_exits(
        tmp_path: Path, jobs: JobStore, fake: FakeOpenAI) -> None:
    fake.add({"content": "Time to call Sam!"})
    result = run_cli(tmp_path, "cron", "run-due")
    assert result.returncode == 0, result.stderr
    assert result.stdout == "a1b2c3 “Call Sam” (desktop:plans):\nTime to call Sam!\n"
    assert len(fake.requests) == 1 and "Remind the user to call Sam" in str(fake.requests[0]["messages"][-1])
    assert [job.id for job in jobs.load()] == ["d4e5f6"]  # the one-shot is done; Monday's waits
    assert (tmp_path / "data" / "sessions" / "desktop%3Aplans.jsonl").is_file()
    again = run_cli(tmp_path, "cron", "run-due")
    assert again.stdout == "Nothing is due.\n" and len(fake.requests) == 1


def test_run_due_delivers_a_reminder_as_written_when_the_model_fails(tmp_path: Path, jobs: JobStore,
                                                                      fake: FakeOpenAI) -> None:
    fake.add({"status": 400, "body": {"error": {"message": "model is overloaded"}}})
    result = run_main(tmp_path, "cron", "run-due")
    assert result.returncode == 1
    assert result.stdout.startswith("a1b2c3 “Call Sam” (desktop:plans):\nRemind the user to call Sam\n")
    assert "the assistant could not be reached" in result.stdout and "model is overloaded" in result.stdout


def test_list_says_how_each_jobs_last_run_went_and_what_it_used(tmp_path: Path, jobs: JobStore,
                                                                 fake: FakeOpenAI) -> None:
    due = datetime.now(UTC).replace(microsecond=0) - timedelta(minutes=5)
    jobs.write(render([Job("e7f8a9", "desktop:plans", "Check the oven", "Oven", Every(3600, due), due, due)]))
    fake.add({"content": "The oven is fine.", "usage": counts(1500, 20)})
    before = datetime.now(UTC)
    assert run_main(tmp_path, "cron", "run-due").returncode == 0
    after = datetime.now(UTC)
    listed = run_main(tmp_path, "cron", "list").stdout
    # the run began the chat, so it named it after the reminder
    ran = re.search(r" · chat “Reminder: Oven” · last run (.+): Answered \(1\.5k tokens\)\n$", listed)
    assert ran is not None and ran[1] in (local(before), local(after)), listed  # when it ran, not when due


def test_remove_deletes_one_job_and_names_the_ids_when_it_is_unknown(tmp_path: Path, jobs: JobStore) -> None:
    result = run_cli(tmp_path, "cron", "remove", "d4e5f6")
    assert result.returncode == 0 and result.stdout == "Removed d4e5f6 “News”.\n"
    assert [job.id for job in jobs.load()] == ["a1b2c3"]
    wrong = run_cli(tmp_path, "cron", "remove", "zzz")
    assert wrong.returncode == 1 and "no scheduled job with id 'zzz' (ids: a1b2c3)" in wrong.stderr


def test_heartbeat_makes_no_model_call_without_tasks_and_says_so(tmp_path: Path, fake: FakeOpenAI) -> None:
    write_config(tmp_path, model="openai/test", api_base=fake.base_url)
    result = run_cli(tmp_path, "heartbeat")
    assert result.returncode == 0, result.stderr
    assert result.stdout.startswith("No active tasks in ") and "(no model call)" in result.stdout
    (tmp_path / "workspace" / "HEARTBEAT.md").write_text("## Active Tasks\n- Check the build\n- Check the mail\n")
    fake.add({"content": "NOTHING_TO_REPORT"}, {"content": "The build is red."})
    assert run_main(tmp_path, "heartbeat").stdout == "Nothing needs you (2 tasks looked at).\n"
    assert run_main(tmp_path, "heartbeat").stdout == "The build is red.\n"
    assert len(fake.requests) == 2 and len([m for m in fake.requests[1]["messages"] if m["role"] == "user"]) == 2


def test_run_due_runs_exec_for_a_job_granted_it_and_fails_it_at_once_for_one_without(
        tmp_path: Path, jobs: JobStore, fake: FakeOpenAI) -> None:
    """`cron allow` decides ahead what a job may use where it would ask (here exec, set to ask); a job without
    the grant fails that call at once, finishes its answer, and says what it wanted."""
    write_config(tmp_path, model="openai/test", api_base=fake.base_url, approvals={"tools": {"exec": "ask"}})
    typo = run_main(tmp_path, "cron", "allow", "a1b2c3", "exce")
    assert typo.returncode == 1 and "there is no tool 'exce'" in typo.stderr and "exec" in typo.stderr
    granted = run_main(tmp_path, "cron", "allow", "a1b2c3", "exec")
    assert granted.returncode == 0 and "· may use exec" in granted.stdout, granted.stderr
    assert run_main(tmp_path, "cron", "deny", "d4e5f6", "web_fetch").stdout.endswith(
        "· never uses web_fetch\n")
    assert {job.id: job.grants for job in jobs.load()} == {"a1b2c3": {"exec": "allow"},
                                                          "d4e5f6": {"web_fetch": "deny"}}
    ran_file = tmp_path / "workspace" / "ran.txt"
    fake.add({"tool_calls": [{"name": "exec", "arguments": {"command": "echo ran > ran.txt"}}]},
             {"content": "Ran it."})
    result = run_main(tmp_path, "cron", "run-due")
    assert result.returncode == 0 and "Ran it." in result.stdout, result.stderr
    assert ran_file.read_text() == "ran\n" and "wanted" not in result.stderr

    ran_file.unlink()
    due = datetime.now(UTC) - timedelta(minutes=1)
    jobs.write(render([*jobs.load(), Job("0c0c0c", "desktop:plans", "Run the backup", "Backup", At(due), due, due)]))
    fake.add({"tool_calls": [{"name": "exec", "arguments": {"command": "echo ran > ran.txt"}}]},
             {"content": "Could not run it."})
    result = run_main(tmp_path, "cron", "run-due")
    assert result.returncode == 0 and "Could not run it." in result.stdout, result.stderr
    refused = [m["content"] for m in fake.requests[-1]["messages"] if m["role"] == "tool"][-1]
    assert "exec needs the user's approval" in refused and "no grant for exec" in refused
    assert "nanobot-tray cron allow 0c0c0c" in refused and not ran_file.exists()
    assert "note: 0c0c0c It wanted to use exec without asking" in result.stderr


def test_allow_naming_no_mcp_server_is_refused_naming_the_servers_there_are(tmp_path: Path, jobs: JobStore,
                                                                            fake: FakeOpenAI) -> None:
    """`cron allow a1b2c3 mcp:gihtub` (a typo for the github server) was saved and granted nothing, so the job's
    calls to the server still failed. It is refused now, naming it and the servers set up; a server set up is
    taken though it is not connected (switched off here), and a grant already held for a server since removed
    does not stop the job's other grants from changing."""
    before = jobs.path.read_bytes()
    none_set_up = run_main(tmp_path, "cron", "allow", "a1b2c3", "mcp:gihtub")
    assert none_set_up.returncode == 1 and "there is no MCP server 'gihtub'" in none_set_up.stderr
    assert "no MCP server is set up" in none_set_up.stderr and jobs.path.read_bytes() == before
    write_config(tmp_path, model="openai/test", api_base=fake.base_url,
                 mcp={"servers": {"github": {"command": "github-server", "enabled": False}}})
    for verb in ("allow", "deny"):
        typo = run_main(tmp_path, "cron", verb, "a1b2c3", "mcp:gihtub")
        assert typo.returncode == 1 and "there is no MCP server 'gihtub' (servers: github)" in typo.stderr
        assert jobs.path.read_bytes() == before
    assert run_main(tmp_path, "cron", "allow", "a1b2c3", "mcp:github").returncode == 0
    write_config(tmp_path, model="openai/test", api_base=fake.base_url)  # the server removed since
    granted = run_main(tmp_path, "cron", "allow", "a1b2c3", "exec")
    assert granted.returncode == 0, granted.stderr
    assert jobs.load()[0].grants == {"mcp:github": "allow", "exec": "allow"}


def test_a_server_whose_name_has_a_space_can_be_granted(tmp_path: Path, jobs: JobStore, fake: FakeOpenAI) -> None:
    """A server named "My Notes" (as Claude Desktop's and VS Code's files name them, and `mcp import` keeps) could
    never be granted ahead: 'mcp:My Notes' was refused as "not a tool name ... or mcp:SERVER", which it is."""
    write_config(tmp_path, model="openai/test", api_base=fake.base_url,
                 mcp={"servers": {"My Notes": {"command": "notes-server", "enabled": False}}})
    job = jobs.load()[0]
    job.wanted = ["mcp:My Notes"]  # what a run that called the server's tools lacked: its notice says how to allow it
    said = re.search(r"`(nanobot-tray cron allow .+)`", wanted_text(job))
    assert said is not None
    granted = run_main(tmp_path, *shlex.split(said[1])[1:])  # the command as a person pastes it into a shell
    assert granted.returncode == 0 and "· may use mcp:My Notes" in granted.stdout, granted.stderr
    assert jobs.load()[0].grants == {"mcp:My Notes": "allow"}
    blank = run_main(tmp_path, "cron", "allow", "a1b2c3", "mcp: ")
    assert blank.returncode == 1 and "is not a tool name" in blank.stderr


def test_the_heartbeat_uses_what_settings_allow_it_and_fails_the_rest_at_once(tmp_path: Path,
                                                                              fake: FakeOpenAI) -> None:
    write_config(tmp_path, model="openai/test", api_base=fake.base_url, approvals={"tools": {"exec": "ask"}})
    (tmp_path / "workspace").mkdir()
    (tmp_path / "workspace" / "HEARTBEAT.md").write_text("## Active Tasks\n- Note the time\n")
    fake.add({"tool_calls": [{"name": "exec", "arguments": {"command": "date > time.txt"}}]},
             {"content": "NOTHING_TO_REPORT"})
    result = run_main(tmp_path, "heartbeat")
    assert result.stdout == "Nothing needs you (1 task looked at).\n"
    assert "It wanted to use exec without asking" in result.stderr and "heartbeat_allow" in result.stderr
    assert not (tmp_path / "workspace" / "time.txt").exists()

    write_config(tmp_path, model="openai/test", api_base=fake.base_url, approvals={"tools": {"exec": "ask"}},
                 schedules={"heartbeat_allow": ["exec"]})
    fake.add({"tool_calls": [{"name": "exec", "arguments": {"command": "date > time.txt"}}]},
             {"content": "NOTHING_TO_REPORT"})
    result = run_main(tmp_path, "heartbeat")
    assert result.returncode == 0 and "wanted" not in result.stderr, result.stderr
    assert (tmp_path / "workspace" / "time.txt").is_file()


def test_a_reminders_file_that_is_not_utf8_is_set_aside_and_said_not_a_traceback(tmp_path: Path,
                                                                                   jobs: JobStore) -> None:
    """Edited by hand in a Latin-1 editor: every command (and the app's start) died in a UnicodeDecodeError."""
    jobs.path.write_bytes(jobs.path.read_bytes().replace(b"Call Sam", b"Appeler Andr\xe9"))
    written = jobs.path.read_bytes()
    result = run_main(tmp_path, "cron", "list")
    assert (result.returncode, result.stdout) == (0, "No scheduled jobs.\n")
    assert f"error: the reminders file {jobs.path} could not be read (UnicodeDecodeError: " in result.stderr
    copies = list(jobs.path.parent.glob("cron_jobs.json.corrupt-*"))
    assert [copy.read_bytes() for copy in copies] == [written]  # nothing the person wrote is lost
    assert f"it was copied to {copies[0]} and reminders start empty" in result.stderr


def test_a_broken_reminders_file_is_copied_aside_once_not_by_every_command(tmp_path: Path, jobs: JobStore) -> None:
    """A job broken by hand: each command that read the file (`cron list`, `agent`, a system timer's `cron run-due`
    every minute) made one more copy of it beside it, without end, until a reminder was next saved. A copy of the
    file as it is now is said again instead; a file changed since gets its own."""
    saved = json.loads(jobs.path.read_text(encoding="utf-8"))
    del saved["jobs"][1]["session"]
    jobs.path.write_text(json.dumps(saved), encoding="utf-8")
    earlier = jobs.path.with_name("cron_jobs.json.corrupt-20260101T000000")  # set aside by an earlier command
    earlier.write_bytes(jobs.path.read_bytes())
    result = run_main(tmp_path, "cron", "list")
    assert result.returncode == 0 and result.stdout.startswith("a1b2c3 · “Call Sam”"), result.stderr
    assert "job 2: KeyError: 'session'" in result.stderr and f"it was copied to {earlier} and the 1" in result.stderr
    assert list(jobs.path.parent.glob("cron_jobs.json.corrupt-*")) == [earlier]

    saved["jobs"][0]["label"] = "Call Sam today"
    jobs.path.write_text(json.dumps(saved), encoding="utf-8")
    assert run_main(tmp_path, "cron", "list").returncode == 0
    copies = sorted(jobs.path.parent.glob("cron_jobs.json.corrupt-*"))
    assert len(copies) == 2 and copies[-1].read_bytes() == jobs.path.read_bytes()


def test_ctrl_c_during_run_due_stops_the_turn_and_prints_the_reminder_as_written(tmp_path: Path, jobs: JobStore,
                                                                                   fake: FakeOpenAI) -> None:
    """A one-shot reminder is done once its turn starts: killed mid-turn, the command printed nothing and the
    reminder was gone from the list, said nowhere the person at the terminal would see it."""
    run = ctrl_c_during_a_model_call(tmp_path, fake, "Time to call Sam!", "cron", "run-due")
    assert run.returncode == 130, run.stderr
    assert run.stdout == ("a1b2c3 “Call Sam” (desktop:plans):\nRemind the user to call Sam\n\n"
                   "(Stopped before the assistant answered: the reminder as it was written.)\n")
    assert [job.id for job in jobs.load()] == ["d4e5f6"]
    assert "Remind the user to call Sam" in (tmp_path / "data" / "sessions" / "desktop%3Aplans.jsonl").read_text()


@contextlib.contextmanager
def run_due_waiting(home: Path, fake: FakeOpenAI, answer: threading.Event) -> Iterator[list[str]]:
    """`cron run-due` in a process of its own, as a system timer starts it, held at its first model call (the
    scripted server answers once `answer` is set, at the latest as the block ends); yields a list that then holds
    its standard output and error."""
    env = {k: v for k, v in os.environ.items() if not k.endswith("_API_KEY")}
    env.update(NANOBOT_TRAY_HOME=str(home), PYTHON_KEYRING_BACKEND="keyring.backends.null.Keyring")
    due = subprocess.Popen([sys.executable, "-m", "desktop", "cron", "run-due"], env=env, text=True,
                           stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    printed: list[str] = []
    try:
        deadline = time.monotonic() + 60
        while not fake.requests and due.poll() is None and time.monotonic() < deadline:
            time.sleep(0.05)
        assert len(fake.requests) == 1, "run-due never asked the model"
        yield printed
    finally:
        answer.set()
        printed.extend(due.communicate(timeout=60))
    assert due.returncode == 0, printed


def test_what_another_command_saves_while_run_due_runs_is_kept(tmp_path: Path, jobs: JobStore,
                                                               fake: FakeOpenAI) -> None:
    """Without the app each command has its own copy of the jobs: a system timer's `cron run-due` still waiting for
    the model saved its copy over what `cron allow` and a reminder made by `agent` had saved meanwhile."""
    answer = threading.Event()
    fake.add({"content": "Time to call Sam!", "after": answer},
             {"tool_calls": [{"name": "cron", "arguments": {"action": "add", "message": "Water the plants",
                                                             "every": 3600}}]},
             {"content": "Done."})
    with run_due_waiting(tmp_path, fake, answer) as printed:
        assert run_main(tmp_path, "cron", "allow", "d4e5f6", "exec").returncode == 0
        assert run_main(tmp_path, "agent", "-m", "remind me hourly to water the plants").returncode == 0
    assert "Time to call Sam!" in printed[0]
    saved = {job.label: job for job in jobs.load()}
    assert set(saved) == {"News", "Water the plants"}  # the one-shot that ran is done; the new one is kept
    assert saved["News"].grants == {"exec": "allow"}


def test_a_second_run_due_while_the_first_still_runs_runs_nothing_again(tmp_path: Path, jobs: JobStore,
                                                                         fake: FakeOpenAI) -> None:
    """A job stays due in the file until its run ends (so a quit does not lose it): a system timer's next
    `cron run-due` while the first still waited for the model ran the same job again, a second answer to one
    reminder."""
    answer = threading.Event()
    fake.add({"content": "Time to call Sam!", "after": answer})
    with run_due_waiting(tmp_path, fake, answer) as printed:
        second = run_main(tmp_path, "cron", "run-due")
        assert second.returncode == 0 and "another `nanobot-tray cron run-due` is still running" in second.stdout
    assert "Time to call Sam!" in printed[0]
    assert len(fake.requests) == 1


@pytest.mark.parametrize("text", ["[]", '{"version": 1, "jobs": {"a1": {}}}'], ids=["a list", "jobs not a list"])
def test_a_jobs_file_of_json_that_holds_no_jobs_list_says_so_in_words(tmp_path: Path, text: str) -> None:
    """A reminders file that is JSON but not this file's (`[]`) was reported as "TypeError: list indices must be
    integers or slices, not str"."""
    write_config(tmp_path, model="openai/test")
    state = tmp_path / "data" / "state"
    state.mkdir(parents=True)
    (state / "cron_jobs.json").write_text(text, encoding="utf-8")
    ran = run_main(tmp_path, "cron", "list")
    assert 'holds no list of jobs under "jobs"' in ran.stderr and "Error" not in ran.stderr, ran.stderr
    assert [kept.read_text(encoding="utf-8") for kept in state.glob("cron_jobs.json.corrupt-*")] == [text]
