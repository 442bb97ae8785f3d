"""First-run discovery: local OpenAI-compatible servers answer /v1/models; a nanobot CLI workspace is found."""

from __future__ import annotations

import asyncio
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


async def test_something_else_on_the_port_is_not_taken_for_a_model_server() -> None:
    class Page(BaseHTTPRequestHandler):
        def do_GET(self) -> None:
            body = b"<html>a web app</html>"
            self.send_response(200)
            self.send_header("content-length", str(len(body)))
            self.end_headers()
            self.wfile.write(body)

        def log_message(self, *args: object) -> None:
            pass

    server = ThreadingHTTPServer(("127.0.0.1", 0), Page)
    Thread(target=server.serve_forever, kwargs={"poll_interval": 0.02}, daemon=True).start()
    try:
        assert await probe_local_servers((KnownServer("llama.cpp", server.server_address[1], "openai"),)) == []
    finally:
        server.shutdown()
        server.server_close()


def test_existing_nanobot_workspace_is_detected(tmp_path: Path) -> None:
    assert existing_nanobot_workspace(tmp_path) is None
    (tmp_path / ".nanobot" / "workspace").mkdir(parents=True)
    assert existing_nanobot_workspace(tmp_path) == tmp_path / ".nanobot" / "workspace"
