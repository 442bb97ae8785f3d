"""mcp.servers in config.yaml: typed entries, mistakes reported with their line, only the bad server left out."""

from __future__ import annotations

from pathlib import Path

from desktop.config import load_config
from desktop.mcp.settings import McpConfig


def test_servers_are_read_and_bad_ones_reported_by_line(tmp_path: Path) -> None:
    path = tmp_path / "config.yaml"
    path.write_text(
        "mcp:\n"
        "  servers:\n"
        "    files:\n"
        "      command: npx\n"
        "      args: [-y, server-files]\n"
        "      env: {TOKEN: 'keyring:files'}\n"
        "    both:\n"
        "      command: x\n"
        "      url: http://127.0.0.1:1/mcp\n"
        "    remote:\n"
        "      url: https://example.invalid/sse\n"
        "      enabled: false\n"
        "      timeout: nope\n"
        "    list: [1, 2]\n", encoding="utf-8")
    loaded = load_config(path)
    servers = loaded.config.section(McpConfig).servers
    assert set(servers) == {"files", "remote"}
    assert servers["files"].args == ["-y", "server-files"] and servers["files"].timeout == 30.0
    assert servers["remote"].enabled is False and servers["remote"].timeout == 30.0
    assert loaded.problems == [
        f"{path} line 7: 'mcp.servers.both' needs either 'command' (a program run over stdio) or 'url' (a remote server); ignored",
        f"{path} line 13: key 'mcp.servers.remote.timeout' should be a number, got 'nope'; using the default",
        f"{path} line 14: 'mcp.servers.list' should be a section of settings; ignored",
    ]
