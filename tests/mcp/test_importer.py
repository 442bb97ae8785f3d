"""Reading other apps' server lists as they write them: VS Code's mcp.json (comments, trailing commas, its
settings.json), Goose's config.yaml; what cannot be taken over is skipped with the reason, what needs more is
added with a note, and nothing is written by reading."""

from __future__ import annotations

from pathlib import Path

import pytest

from desktop.mcp.importer import NotAServerList, described, read_servers
from desktop.mcp.settings import McpServerConfig

VSCODE = """{
  // written by VS Code's "MCP: Add Server"
  "inputs": [{"type": "promptString", "id": "gh", "description": "GitHub token", "password": true}],
  "servers": {
    "fetch": {"type": "stdio", "command": "uvx", "args": ["mcp-server-fetch"], "env": {"DEBUG": "1"}},
    "tracker": {"type": "http", "url": "https://mcp.example.invalid/mcp",
                "headers": {"Authorization": "Bearer abc"}},
    "old": {"type": "sse", "url": "https://old.example.invalid/events"},
    "github": {"command": "docker", "args": ["run", "ghcr.io/github/github-mcp-server"],
               "env": {"GITHUB_TOKEN": "${input:gh}"}},
    "files": {"command": "npx", "args": ["-y", "server-files", "${workspaceFolder}"]},
    "dotenv": {"command": "srv", "envFile": "${userHome}/.env.mcp"},
    "time": {"command": "uvx", "args": ["mcp-server-time"]},
  },
}
"""

GOOSE = """\
GOOSE_PROVIDER: openai
extensions:
  developer:
    bundled: true
    enabled: true
    name: developer
    timeout: 300
    type: builtin
  github:
    name: GitHub
    type: stdio
    cmd: npx
    args: [-y, "@modelcontextprotocol/server-github"]
    envs: {LOG_LEVEL: info}
    env_keys: [GITHUB_PERSONAL_ACCESS_TOKEN, LOG_LEVEL]
    enabled: true
    timeout: 120
    available_tools: [search_issues]
  remote:
    type: streamable_http
    uri: https://remote.example.invalid/mcp
    headers: {X-Team: blue}
    envs: {IGNORED: "1"}
    enabled: false
  legacy:
    type: sse
    uri: http://127.0.0.1:9/sse
  odd:
    type: carrier_pigeon
"""


def written(tmp_path: Path, name: str, text: str) -> Path:
    path = tmp_path / name
    path.write_text(text, encoding="utf-8")
    return path


def test_vscode_mcp_json(tmp_path: Path) -> None:
    found = read_servers(written(tmp_path, "mcp.json", VSCODE), existing={"time"})
    assert found.source == "VS Code"
    assert found.added["fetch"] == McpServerConfig(command="uvx", args=["mcp-server-fetch"], env={"DEBUG": "1"},
                                                   transport="stdio")
    assert found.added["tracker"].url == "https://mcp.example.invalid/mcp"
    assert found.added["tracker"].transport == "streamable-http"
    assert found.added["tracker"].headers == {"Authorization": "Bearer abc"}  # the keyring takes it when added
    assert found.added["old"].transport == "sse"  # said by the file, not guessed from the URL
    assert described(found, done=False) == [
        "will add fetch: uvx mcp-server-fetch",
        "will add tracker: https://mcp.example.invalid/mcp",
        "will add old: https://old.example.invalid/events",
        "will add dotenv: srv; its variables from ${userHome}/.env.mcp are not read: add them with Edit…",
        "will skip github: uses ${input:gh}, which VS Code fills in itself; add it with Add server… and type the "
        "value there",
        "will skip files: uses ${workspaceFolder}, which VS Code fills in itself; add it with Add server… and type "
        "the value there",
        "will skip time: a server of that name is already configured"]


def test_vscode_settings_json_and_a_note_for_what_is_not_read(tmp_path: Path) -> None:
    settings = written(tmp_path, "settings.json", '{"editor.fontSize": 13, "mcp": {"servers": {'
                                                  '"local": {"command": "srv", "envFile": "/home/me/.env"}}}}')
    found = read_servers(settings, existing=set())
    assert list(found.added) == ["local"]
    assert described(found, done=True) == [
        "added local: srv; its variables from /home/me/.env are not read: add them with Edit…"]


def test_goose_extensions(tmp_path: Path) -> None:
    found = read_servers(written(tmp_path, "config.yaml", GOOSE), existing=set())
    assert found.source == "Goose"
    github = found.added["github"]
    assert (github.command, github.args, github.env) == ("npx", ["-y", "@modelcontextprotocol/server-github"],
                                                         {"LOG_LEVEL": "info"})
    assert (github.timeout, github.tools, github.enabled) == (120.0, ["search_issues"], True)
    remote = found.added["remote"]
    assert (remote.url, remote.transport, remote.headers, remote.env, remote.enabled) == (
        "https://remote.example.invalid/mcp", "streamable-http", {"X-Team": "blue"}, {}, False)
    assert found.added["legacy"].transport == "sse" and found.added["legacy"].timeout == 30.0
    assert described(found, done=False) == [
        "will add github: npx -y @modelcontextprotocol/server-github; needs GITHUB_PERSONAL_ACCESS_TOKEN, which "
        "Goose keeps in its own secret store: add the value with Edit…",
        "will add remote: https://remote.example.invalid/mcp (disabled, as in the file)",
        "will add legacy: http://127.0.0.1:9/sse",
        "will skip developer: built into Goose, not a server of its own",
        "will skip odd: unknown extension type 'carrier_pigeon'"]


@pytest.mark.parametrize(("name", "text", "says"), [
    ("mcp.json", '{"servers": [1, 2}', "is not JSON"),
    ("config.yaml", "extensions: [unclosed", "is not YAML"),
    ("config.yaml", "GOOSE_PROVIDER: openai\n", 'has no "mcpServers" (Claude Desktop, Cursor), "servers" (VS Code'),
    ("notes.json", '"just text"', "lists no MCP servers"),
])
def test_files_that_list_no_servers_are_refused_with_the_reason(tmp_path: Path, name: str, text: str,
                                                                says: str) -> None:
    with pytest.raises(NotAServerList) as refused:
        read_servers(written(tmp_path, name, text), existing=set())
    assert says in str(refused.value)
    with pytest.raises(NotAServerList, match="cannot read"):
        read_servers(tmp_path / "missing.json", existing=set())


def test_a_server_without_a_name_is_skipped_with_the_reason(tmp_path: Path) -> None:
    """An entry under "" (or only spaces) would be a row nobody can name, edit or tell apart: left out, said why."""
    path = written(tmp_path, "claude.json", '{"mcpServers": {"": {"command": "uvx"}, "  ": {"command": "npx"}, '
                   '"time": {"command": "uvx", "args": ["mcp-server-time"]}}}')
    found = read_servers(path, set())
    assert list(found.added) == ["time"]
    assert any("needs a name" in line for line in described(found, done=False))
