"""First-run discovery: local OpenAI-compatible servers answer /v1/models; a nanobot CLI workspace is found."""

from __future__ import annotations

import asyncio
import json
import time
from collections.abc import Iterator
from contextlib import contextmanager
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from threading import Thread

from desktop.providers.discovery import KnownServer, existing_nanobot_workspace, probe_local_servers
from tests.fakeserver import FakeOpenAI


async def test_a_server_posing_as_lm_studio_is_found_with_its_models(fake: FakeOpenAI, closed_port: int) -> None:
    servers = (KnownServer("LM Studio", fake.port, "openai"), KnownServer("llama.cpp", closed_port, "openai"))
    found = await asyncio.wait_for(probe_local_servers(servers, timeout=0.5), 30)
    assert [(s.kind.name, s.models) for s in found] == [("LM Studio", ("test",))]
    assert found[0].api_base == fake.base_url and found[0].model_for("test") == "openai/test"


async def test_ollama_gets_its_native_prefix_and_server_root(fake: FakeOpenAI) -> None:
    (found,) = await probe_local_servers((KnownServer("Ollama", fake.port, "ollama_chat", native_base=True),))
    assert found.model_for("llama3.2:latest") == "ollama_chat/llama3.2:latest"
    assert found.api_base == f"http://127.0.0.1:{fake.port}"


@contextmanager
def serving(answer: bytes, after: float = 0.0) -> Iterator[int]:
    """A server on its own port answering every GET with `answer` (JSON when it starts with "{"), `after` seconds
    late; yields its port."""

    class Handler(BaseHTTPRequestHandler):
        def do_GET(self) -> None:
            time.sleep(after)
            self.send_response(200)
            self.send_header("content-type", "application/json" if answer.startswith(b"{") else "text/html")
            self.send_header("content-length", str(len(answer)))
            self.end_headers()
            self.wfile.write(answer)

        def log_message(self, *args: object) -> None:
            pass

    server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    Thread(target=server.serve_forever, kwargs={"poll_interval": 0.02}, daemon=True).start()
    try:
        yield server.server_address[1]
    finally:
        server.shutdown()
        server.server_close()


async def test_something_else_on_the_port_is_not_taken_for_a_model_server() -> None:
    with serving(b"<html>a web app</html>") as port:
        assert await probe_local_servers((KnownServer("llama.cpp", port, "openai"),)) == []


async def test_a_server_slow_to_answer_is_still_found() -> None:
    """LM Studio busy loading a model, or first start on a machine busy starting everything else, answers its model
    list a second or more late: first start lists it all the same, instead of saying no model server was found."""
    models = json.dumps({"object": "list", "data": [{"id": "qwen3-8b"}]}).encode()
    with serving(models, after=1.5) as port:
        found = await asyncio.wait_for(probe_local_servers((KnownServer("LM Studio", port, "openai"),)), 30)
    assert [(s.kind.name, s.models) for s in found] == [("LM Studio", ("qwen3-8b",))]


def test_existing_nanobot_workspace_is_detected(tmp_path: Path) -> None:
    assert existing_nanobot_workspace(tmp_path) is None
    (tmp_path / ".nanobot" / "workspace").mkdir(parents=True)
    assert existing_nanobot_workspace(tmp_path) == tmp_path / ".nanobot" / "workspace"
