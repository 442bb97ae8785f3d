"""MCP servers as tools and slash commands: configured under `mcp.servers`, connected in the background, kept
alive."""

from __future__ import annotations

from desktop.kernel.bus import TurnProgress
from desktop.kernel.host import Feature, Host
from desktop.mcp.events import McpServerChanged
from desktop.mcp.manager import McpServers
from desktop.mcp.places import ServerPlaces
from desktop.mcp.prompts import PromptCommands
from desktop.mcp.settings import SECTION, McpConfig
from desktop.session.session import Session


def attach(host: Host) -> McpServers:
    """Servers start connecting once the core runs (start-up does not wait for them), follow settings changes
    and stop when the core closes. A turn that starts while some are still connecting waits for them, up to
    `mcp.startup_wait`, so a first turn (often a one-shot command's only one) is offered their tools."""
    servers = McpServers(host.tools, ServerPlaces.of(host.home, lambda: host.workspace), host.publish)
    prompts = PromptCommands(servers, host.commands)  # each connected server's prompts as /SERVER:PROMPT

    async def follow() -> None:
        """Connect, stop or restart only the servers whose settings changed."""
        if host.running:
            await servers.apply(host.config.section(McpConfig).servers)

    async def wait_for_servers(session: Session) -> None:
        pending = servers.pending()
        if not pending:
            return
        wait = host.config.section(McpConfig).startup_wait
        host.publish(TurnProgress(session.key, f"Waiting for MCP servers to connect: {', '.join(pending)}…"))
        host.provider.prepare()  # the model call comes next: its library loads during the wait
        _, late = await servers.wait_for_pending(wait)
        if late:
            host.publish(TurnProgress(session.key, left_out(late, wait)))

    told: set[str] = set()  # servers whose sign-in ran out, said once until they connect again

    def sign_in_again(event: McpServerChanged) -> None:
        conn = servers.servers.get(event.name)
        if conn is None or event.state == "connected":
            told.discard(event.name)
        elif conn.signed_out and event.name not in told:
            told.add(event.name)
            host.notify(f"Sign in to {event.name} again",
                        "The server did not renew the sign-in. Sign in again in Settings → MCP servers; "
                        "its tools are back once you have.")

    def on_event(event: object) -> None:
        if isinstance(event, McpServerChanged):
            prompts.sync()
            sign_in_again(event)

    host.on_start(follow)
    host.subscribe(on_event)
    host.settings.subscribe("mcp", lambda changed: follow())
    host.hooks.before_turn.append(wait_for_servers)
    host.on_close(servers.close)
    return servers


def left_out(late: list[str], wait: float) -> str:
    """Which servers a turn goes on without, and that they are not lost."""
    several = len(late) > 1
    return (f"Going on without MCP server{'s' if several else ''} {', '.join(late)}: not connected within "
            f"{wait:g} s ({'their' if several else 'its'} tools are offered once connected)")


FEATURE = Feature("mcp", McpServers, attach, settings=SECTION, cli="desktop.cli.mcp_cmd")
