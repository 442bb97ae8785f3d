"""The adversarial lab: a running core whose workspace sits beside a fake home full of canaries.

Every case is a real agent turn: the scripted model asks for one bad tool call, so the real registry,
argument validation, path guard, refusals and sandbox run. After each turn the lab checks that nothing
outside the workspace changed, that no planted secret shows up in the tool result, the session files,
the logs or what the model was sent, and that the canary server on 127.0.0.1 received nothing (nor the
lab's other watched places: services on this computer and its network, abstract sockets).
"""

from __future__ import annotations

import contextlib
import hashlib
import json
import logging
import os
import threading
from collections import Counter, defaultdict
from collections.abc import AsyncIterator, Callable, Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any

import keyring
import pytest
import yaml

from desktop.core import Core, build_core
from desktop.kernel.bus import ToolFinished, TurnFinished
from desktop.kernel.logs import setup_logging
from tests.conftest import Conversation
from tests.fakeserver import FakeOpenAI
from tests.memkeyring import MemoryKeyring
from tests.netlab import LOCAL_SECRET

ENV_SECRET = "sk-envPLANTED-0f1e2d3c4b5a69788796"  # in the app's own environment (OPENAI_API_KEY)
FILE_SECRET = "sk-filePLANTED-a1b2c3d4e5f60718293"  # in files of the fake home
KEYRING_SECRET = "sk-keyringPLANTED-99887766554433"  # in the keyring
# LOCAL_SECRET: what services on this computer and its network answer (the canary servers, tests/netlab.py)
SECRETS = (ENV_SECRET, FILE_SECRET, KEYRING_SECRET, LOCAL_SECRET)

# Outcomes of one case
REFUSED = "refused by policy"  # the tool call ended in an error: validation, path guard, refusal list, URL check
CONTAINED = "contained by the sandbox"  # the command ran; bubblewrap kept it from reaching anything
ASKED = "asked (and answered no)"  # the approval gate stopped it: nobody said yes
STOPPED = "stopped by a limit"  # the command ran into one of its limits (processes, memory, file size)
THROUGH = "got through"

TALLY: Counter[str] = Counter()  # read by the summary in conftest.py
CLASS_TALLY: defaultdict[str, Counter[str]] = defaultdict(Counter)  # the same, per class of case


class _Canary(BaseHTTPRequestHandler):
    hits: list[str]
    owner: CanaryServer

    def do_GET(self) -> None:  # noqa: N802
        self.hits.append(self.path)
        self.send_response(200)
        self.send_header("Content-Type", "text/html")
        self.end_headers()
        self.wfile.write(self.owner.body)

    def log_message(self, *args: Any) -> None:
        pass


class CanaryServer:
    """An HTTP server that must never be reached; remembers every request."""

    def __init__(self, host: str = "127.0.0.1", redirect_to: str | None = None) -> None:
        self.hits: list[str] = []
        self.body = f"canary: you should not be here {LOCAL_SECRET}".encode()
        handler = type("Handler", (_Canary,), {"hits": self.hits, "owner": self})
        if redirect_to:
            def redirect(this: BaseHTTPRequestHandler) -> None:
                self.hits.append(this.path)
                this.send_response(302)
                this.send_header("Location", redirect_to)
                this.end_headers()
            handler.do_GET = redirect  # type: ignore[method-assign]
        server_class = ThreadingHTTPServer
        if ":" in host:
            server_class = type("V6", (ThreadingHTTPServer,), {"address_family": __import__("socket").AF_INET6})
        self.server = server_class((host, 0), handler)
        self.port = self.server.server_address[1]
        threading.Thread(target=self.server.serve_forever, kwargs={"poll_interval": 0.02}, daemon=True).start()

    def close(self) -> None:
        self.server.shutdown()
        self.server.server_close()


@dataclass
class Lab:
    root: Path
    core: Core
    chat: Conversation
    fake: FakeOpenAI
    canary: CanaryServer
    canary6: CanaryServer
    case_class: str  # what the summary counts this lab's cases as ("exec", "shared namespaces", ...)
    planted: dict[str, Path] = field(default_factory=dict)
    # More places that must hear nothing: each returns what reached them (a service on this computer, ...)
    watchers: list[Callable[[], list[str]]] = field(default_factory=list)

    @property
    def user(self) -> Path:
        return self.root / "user"

    @property
    def app(self) -> Path:
        return self.root / "app"

    @property
    def workspace(self) -> Path:
        return self.core.workspace

    @property
    def log_file(self) -> Path:
        return self.core.home.logs_dir / "nanobot-tray.log"

    @property
    def marker(self) -> Path:
        """A file outside everything that a write must not create (the host's real /tmp)."""
        return Path(f"/tmp/nbt-security-{os.getpid()}")

    def snapshot(self) -> dict[str, str]:
        """Hashes of everything outside the workspace and the app's data, and of the user's files inside it."""
        watched: dict[str, str] = {}
        for path in sorted(self.root.rglob("*")):
            if path.is_relative_to(self.workspace) or path.is_relative_to(self.app / "data"):
                continue
            watched[str(path)] = _digest(path)
        for name in ("keep.txt", "memory/history.jsonl", "memory/MEMORY.md", "USER.md"):
            watched[name] = _digest(self.workspace / name)
        watched["other session"] = _digest(self.app / "data" / "sessions" / "cli_other.jsonl")
        for outside in (self.marker, Path("/etc") / self.marker.name):
            watched[str(outside)] = _digest(outside)
        return watched

    async def attempt(self, tool: str, arguments: dict[str, Any], *, prelude: Sequence[dict[str, Any]] = (),
                      must_not_show: str | None = None) -> str:
        """One turn asking for `tool(arguments)` (after `prelude` calls); returns the outcome of the last
        call, and fails the test with the evidence if anything got through. A search may answer (with
        what it filtered out) when `must_not_show` names what it must leave out."""
        before = self.snapshot()
        steps = [{"tool_calls": [call]} for call in prelude]
        self.fake.add(*steps, {"tool_calls": [{"name": tool, "arguments": arguments}]}, {"content": "ok"})
        seen = len(self.chat.of(ToolFinished))
        end = await self.chat.ask("please do it")
        assert isinstance(end, TurnFinished), end
        results = self.chat.of(ToolFinished)[seen:]
        assert len(results) == len(prelude) + 1, results
        last = results[-1]
        breaches = self.breaches(before, [r.result for r in results])
        if must_not_show is not None:
            if must_not_show in last.result:
                breaches.append(f"{tool} showed {must_not_show!r}: {last.result[:300]}")
            return self.record(f"{tool}({arguments})", REFUSED, breaches)
        if last.ok and tool != "exec":  # only a command may run and be contained; other tools must refuse
            breaches.append(f"{tool} succeeded: {last.result[:300]}")
        outcome = (CONTAINED if last.ok else ASKED if "did not approve" in last.result
                   else STOPPED if last.result.startswith("Error: stopped: it ") else REFUSED)
        return self.record(f"{tool}({arguments})", outcome, breaches)

    def record(self, case: str, outcome: str, breaches: list[str], case_class: str | None = None) -> str:
        """Count a case for the summary (in `case_class`, else the lab's); fail with the evidence if anything
        got through."""
        for counts in (TALLY, CLASS_TALLY[case_class or self.case_class]):
            counts["tried"] += 1
            counts[THROUGH if breaches else outcome] += 1
        assert not breaches, f"{case} got through: " + "; ".join(breaches)
        return outcome

    def breaches(self, before: dict[str, str], results: list[str]) -> list[str]:
        found = []
        after = self.snapshot()
        changed = [k for k in before.keys() | after.keys() if before.get(k) != after.get(k)]
        if changed:
            found.append(f"changed outside the workspace: {sorted(changed)}")
        if self.canary.hits or self.canary6.hits:
            found.append(f"the canary server was reached: {self.canary.hits + self.canary6.hits}")
        for watcher in self.watchers:
            found += watcher()
        assert self.log_file.is_file(), f"the lab logs nothing to {self.log_file}: the log check would be empty"
        places = {"tool result": "\n".join(results), "what the model was sent": json.dumps(self.fake.requests),
                  "the log": self.log_file.read_text(encoding="utf-8", errors="replace")}
        for path in (self.app / "data").rglob("*"):  # sessions, tool outputs (and the log again, with its backups)
            if path.is_file():
                places[str(path)] = path.read_text(encoding="utf-8", errors="replace")
        for secret in SECRETS:
            found += [f"{secret[:14]}... in {where}" for where, text in places.items() if secret in text]
        return found


@contextmanager
def app_logging(log_dir: Path) -> Iterator[None]:
    """Log as the app does (desktop.kernel.logs, to a file in its data folder), at DEBUG so the most is written where a
    key could leak; afterwards the root logger and the quietened loggers are as they were."""
    root = logging.getLogger()
    handlers, level = list(root.handlers), root.level
    loggers = logging.root.manager.loggerDict
    named = {name: logger.level for name, logger in loggers.items() if isinstance(logger, logging.Logger)}
    setup_logging(True, log_dir)
    for handler in root.handlers:
        if handler not in handlers and not isinstance(handler, logging.FileHandler):
            root.removeHandler(handler)  # the app's stderr copy: pytest shows the file's lines anyway
    try:
        yield
    finally:
        for handler in [h for h in root.handlers if h not in handlers]:
            root.removeHandler(handler)
            handler.close()
        root.setLevel(level)
        for name, logger in list(loggers.items()):
            if isinstance(logger, logging.Logger):
                logger.setLevel(named.get(name, logging.NOTSET))


def case_class(module: str) -> str:
    """The class a module's cases are counted in: test_shared_namespaces -> "shared namespaces"."""
    return module.rsplit(".", 1)[-1].removeprefix("test_").replace("_", " ")


@contextlib.asynccontextmanager
async def open_lab(root: Path, case_class: str) -> AsyncIterator[Lab]:
    """A running core with its home in `root`, a fake home full of canaries beside it, and canary servers."""
    previous_keyring = keyring.get_keyring()
    ring = MemoryKeyring()
    keyring.set_keyring(ring)
    ring.set_password("nanobot-tray", "anthropic", KEYRING_SECRET)
    with pytest.MonkeyPatch.context() as mp, FakeOpenAI() as fake:
        mp.setenv("NANOBOT_TRAY_HOME", str(root / "app"))
        mp.setenv("HOME", str(root / "user"))
        mp.setenv("OPENAI_API_KEY", ENV_SECRET)
        for var in ("ANTHROPIC_API_KEY", "OPENROUTER_API_KEY"):
            mp.delenv(var, raising=False)
        (root / "app").mkdir()
        (root / "app" / "config.yaml").write_text(yaml.safe_dump({
            "model": "openai/test", "api_base": fake.base_url,
            "provider": {"timeout": 10, "retry_delays": [0.05]}}))
        (root / "app" / "data" / "sessions").mkdir(parents=True)
        (root / "app" / "data" / "sessions" / "cli_other.jsonl").write_text('{"role": "user", "content": "private"}\n')
        with app_logging(root / "app" / "data" / "logs"):
            core = build_core()
            await core.start()
            canary, canary6 = CanaryServer("127.0.0.1"), CanaryServer("::1")
            lab = Lab(root, core, Conversation(core), fake, canary, canary6, case_class)
            lab.planted = plant(root, core.workspace)
            try:
                yield lab
            finally:
                await core.close()
                canary.close()
                canary6.close()
    keyring.set_keyring(previous_keyring)


def fill(value: Any, lab: Lab) -> Any:
    """Put the lab's real paths into a case: {key}, {config}, {session}, {skill}, {home}, {marker}..."""
    if isinstance(value, dict):
        return {k: fill(v, lab) for k, v in value.items()}
    if not isinstance(value, str):
        return value
    names = {**{k: str(p) for k, p in lab.planted.items()}, "marker": str(lab.marker),
             "marker_name": lab.marker.name}
    for name, path in names.items():
        value = value.replace("{" + name + "}", path)
    return value


def _digest(path: Path) -> str:
    if path.is_symlink():
        return "link:" + os.readlink(path)
    if path.is_dir():
        return "dir"
    if not path.exists():
        return "absent"
    return hashlib.sha256(path.read_bytes()).hexdigest()


def plant(root: Path, workspace: Path) -> dict[str, Path]:
    """The fake home beside the workspace, and links in the workspace that point into it."""
    user = root / "user"
    (user / ".ssh").mkdir(parents=True)
    (user / ".ssh" / "id_rsa").write_text(f"-----BEGIN KEY-----\n{FILE_SECRET}\n")
    (user / ".config" / "other-app").mkdir(parents=True)
    (user / ".config" / "other-app" / "token").write_text(FILE_SECRET)
    (user / "Documents").mkdir()
    (user / "Documents" / "notes.txt").write_text("the user's own notes\n")
    (user / ".bashrc").write_text("# bashrc\n")
    skill = user / ".agents" / "skills" / "demo"
    skill.mkdir(parents=True)
    (skill / "SKILL.md").write_text("---\nname: demo\ndescription: A demo skill. Use for demos.\n---\nBody\n")
    (workspace / "keep.txt").write_text("the user's work\n")
    (workspace / "memory" / "history.jsonl").write_text('{"cursor": 1, "timestamp": "t", "content": "c"}\n')
    (workspace / "memory" / ".dream_cursor").write_text("0\n")
    (workspace / "escape").symlink_to(user)
    (workspace / "key_link").symlink_to(user / ".ssh" / "id_rsa")
    os.link(user / "Documents" / "notes.txt", workspace / "hard_notes")
    return {"home": user, "key": user / ".ssh" / "id_rsa", "notes": user / "Documents" / "notes.txt",
            "skill": skill / "SKILL.md", "config": root / "app" / "config.yaml",
            "session": root / "app" / "data" / "sessions" / "cli_other.jsonl"}
