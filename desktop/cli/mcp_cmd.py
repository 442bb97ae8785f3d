"""`nanobot-tray mcp`: the MCP servers in config.yaml — their states, a test of one, import from other apps.

With the app running, `list` shows the app's own connections (nothing is started twice) and `import` goes
through the app's settings writer, so the app connects the new servers at once; `test` runs here."""

from __future__ import annotations

import argparse
import asyncio
import dataclasses
import sys
import threading
import webbrowser
from collections.abc import Awaitable
from pathlib import Path
from typing import TYPE_CHECKING

from desktop.cli.remote import Output, Terminal, add_standalone
from desktop.kernel.bus import Event, TurnProgress
from desktop.kernel.paths import home
from desktop.kernel.secrets import KeyringUnavailable
from desktop.mcp import McpServers
from desktop.mcp.importer import NotAServerList, described
from desktop.mcp.manage import add_imported, preview_import, sign_in, sign_out
from desktop.mcp.oauth import SIGN_IN_WITHIN, SignInFailed
from desktop.mcp.places import ServerPlaces
from desktop.mcp.probe import probed
from desktop.mcp.settings import McpConfig, McpServerConfig
from desktop.settings import Settings, SettingsError

if TYPE_CHECKING:
    from desktop.core import Core

SERVER_NAME = "the server's name, as `nanobot-tray mcp list` shows it (quoted if it has a space)"


def add_parser(sub: argparse._SubParsersAction) -> None:  # type: ignore[type-arg]
    parser = sub.add_parser("mcp", help="list, test and import MCP servers")
    mcp = parser.add_subparsers(dest="mcp_command", metavar="ACTION", required=True)
    mcp.add_parser("list", help="connect to each configured server and show its state")
    p = mcp.add_parser("test", help="connect to one server and list its tools (exit 1 when it fails)")
    p.add_argument("name", help=SERVER_NAME)
    p = mcp.add_parser("login", help="sign in to a remote server that wants it (OAuth): prints the address to open "
                       "in a browser on this computer and waits until you have signed in")
    p.add_argument("name", help=SERVER_NAME)
    p = mcp.add_parser("logout", help="forget the sign-in to a remote server (its tokens, in the keyring)")
    p.add_argument("name", help=SERVER_NAME)
    p = mcp.add_parser("import", help="add the servers of a Claude Desktop, Cursor or VS Code JSON file or of Goose's "
                       "config.yaml (it says what it adds and skips)")
    p.add_argument("file", type=Path, help="the file that lists the servers, e.g. "
                   "~/.config/Claude/claude_desktop_config.json")
    p.add_argument("--dry-run", action="store_true", help="only say what would be added and skipped")
    add_standalone(parser)
    parser.set_defaults(func=run, serve=serve)


def serve(args: argparse.Namespace, core: Core, out: Output) -> Awaitable[int] | None:
    """In the running app: `list` its live connections, `import` through its settings; `test` runs here, and so
    does an import of a relative path (the app's working folder is not this terminal's)."""
    if args.mcp_command == "list":
        return _served_list(core, out)
    if args.mcp_command == "import" and args.file.expanduser().is_absolute():
        return _import(core.settings, args.file, args.dry_run, out)
    if args.mcp_command in ("login", "logout"):  # the app's connection takes the sign-in at once
        configured = core.config.section(McpConfig).servers
        return _sign(args.mcp_command, args.name, configured, core.get(McpServers), core.home.config_file, out)
    return None


async def _served_list(core: Core, out: Output) -> int:
    return _listed(core.get(McpServers).states(), out)


def _listed(states: dict[str, str], out: Output) -> int:
    if not states:
        out.out("No MCP servers configured (add them under mcp.servers in config.yaml, "
                "or `nanobot-tray mcp import FILE`).")
    for name, state in states.items():
        out.out(f"{name}: {state}")
    return 0


def print_startup_waits(core: Core) -> None:
    """For one-shot commands that show no other progress (`cron run-due`, `heartbeat`): a turn's wait for MCP
    servers still connecting, and which it went on without, on stderr."""
    def shown(event: Event) -> None:
        if isinstance(event, TurnProgress):
            print(event.text, file=sys.stderr, flush=True)

    core.bus.subscribe(shown)


def run(args: argparse.Namespace) -> int:
    h = home()
    settings = Settings.open(h.config_file)
    for problem in settings.problems:
        print(f"warning: {problem}", file=sys.stderr)
    if args.mcp_command == "import":
        return asyncio.run(_import(settings, args.file, args.dry_run, Terminal()))
    configured = settings.config.section(McpConfig).servers
    if args.mcp_command in ("login", "logout"):
        return asyncio.run(_sign(args.mcp_command, args.name, configured, None, h.config_file, Terminal()))
    places = ServerPlaces.of(h, lambda: h.workspace(settings.config.workspace))
    if args.mcp_command == "list":
        return _listed(asyncio.run(states(configured, places)) if configured else {}, Terminal())
    if args.name not in configured:
        print(f"error: no MCP server named '{args.name}' in {h.config_file}", file=sys.stderr)
        return 1
    return asyncio.run(_test(args.name, configured[args.name], places))


async def states(configured: dict[str, McpServerConfig], places: ServerPlaces) -> dict[str, str]:
    async with probed(configured, places) as servers:
        return servers.states()


async def _test(name: str, config: McpServerConfig, places: ServerPlaces) -> int:
    config = dataclasses.replace(config, enabled=True)  # a disabled server can be tested too
    async with probed({name: config}, places) as servers:
        server = servers.servers[name]
        print(f"{name}: {server.describe()}")
        for tool in server.tools:
            print(f"  {tool.name}{_summary(tool.description)}")
        for prompt in server.prompts:  # as typed in the chat: /SERVER:PROMPT and its arguments
            arguments = [a.name if a.required else f"[{a.name}]" for a in prompt.arguments or []]
            print(f"  prompt {' '.join([f'/{name}:{prompt.name}', *arguments])}{_summary(prompt.description)}")
        for resource in server.resources:
            print(f"  resource {resource.uri}{_summary(resource.description)}")
        for template in server.resource_templates:
            print(f"  resource {template.uri_template}{_summary(template.description)}")
        if server.state != "connected":
            print(f"  (its output is in {places.log_file(name)})")
            return 1
        return 0


def _summary(description: str | None) -> str:
    """The first line of a description, after a dash; nothing when there is none."""
    first = (description or "").strip().splitlines()[0:1]
    return f" — {first[0][:100]}" if first else ""


async def _import(settings: Settings, path: Path, dry_run: bool, out: Output) -> int:
    """As the MCP page imports: tokens and keys go to the keyring, never to config.yaml."""
    try:
        found = await preview_import(settings, path.expanduser())
        if not dry_run:
            await add_imported(settings, found)
    except NotAServerList as exc:
        out.err(f"error: {exc}")
        return 1
    except (SettingsError, OSError, KeyringUnavailable) as exc:
        out.err(f"error: nothing imported: {exc}")
        return 1
    for line in described(found, done=not dry_run):
        out.out(line)
    if not found.added and not found.skipped:
        out.out(f"{path} lists no servers.")
    return 0


async def _sign(action: str, name: str, configured: dict[str, McpServerConfig], servers: McpServers | None,
                config_file: Path, out: Output) -> int:
    """`login`: sign in through the browser (the address is printed too, for a terminal with no browser of its
    own); `logout`: forget the sign-in. `servers`: the running app's connections, which reconnect."""
    server = configured.get(name)
    if server is None:
        out.err(f"error: no MCP server named '{name}' in {config_file}")
        return 1
    if not server.url:
        out.err(f"error: {name} runs on this computer (a command, not an address): it has no sign-in")
        return 1
    try:
        if action == "logout":
            await sign_out(servers, name, server)
            out.out(f"Signed out of {name}.")
            return 0

        def show(url: str) -> None:
            out.out(f"Sign in to {name} in your browser. If none opened, open this address on this computer:\n"
                    f"  {url}\nWaiting (up to {SIGN_IN_WITHIN / 60:g} minutes)…")
            # a browser command may wait until its window closes: never what the sign-in or the exit waits on
            threading.Thread(target=webbrowser.open, args=(url,), daemon=True).start()

        await sign_in(servers, name, server, show)
    except (SignInFailed, KeyringUnavailable) as exc:
        out.err(f"error: {exc}")
        return 1
    out.out(f"Signed in to {name}.")
    return 0
