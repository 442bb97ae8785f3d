"""`nanobot-tray doctor`: what a support request needs — paths, config, how commands are contained and
what network they get, keyring, model reachability.

It exits 1 when what it found stops the app from answering (a config.yaml it cannot read, a model that does not
answer), each named on stderr, so a script or a checklist sees it; a fresh install with nothing set up yet is not
broken and exits 0, saying what to set up. What only narrows what the app does (no sandbox, no keyring here,
a setting left at its default) is reported and does not fail it."""

from __future__ import annotations

import argparse
import asyncio
import platform
import sys

from desktop import __version__
from desktop.config import load_config
from desktop.keepawake.inhibitor import Unavailable, inhibit, release
from desktop.kernel import secrets
from desktop.kernel.paths import home
from desktop.mcp.places import ServerPlaces
from desktop.mcp.settings import McpConfig, McpServerConfig
from desktop.providers.helper import HelperFailed, HelperGone
from desktop.providers.llm import LLMProvider, ProviderError
from desktop.scheduler.settings import SchedulesConfig
from desktop.tools.limits import Limits
from desktop.tools.limits import describe as describe_limits
from desktop.tools.sandbox import RESTRICTION_OFF, exec_sandbox


def add_parser(sub: argparse._SubParsersAction) -> None:  # type: ignore[type-arg]
    parser = sub.add_parser("doctor", help="report paths, config, keyring and model reachability")
    parser.add_argument("--offline", action="store_true", help="skip the model and MCP server checks")
    parser.set_defaults(func=run)


def run(args: argparse.Namespace) -> int:
    failures = _report(args)
    for failure in failures:
        print(f"doctor: {failure}", file=sys.stderr)
    return 1 if failures else 0


def _report(args: argparse.Namespace) -> list[str]:
    """Print the report; returns what in it stops the app from answering."""
    failures: list[str] = []
    h = home()
    loaded = load_config(h.config_file)
    config = loaded.config
    print(f"nanobot-tray {__version__} on {platform.system()} {platform.release()}, Python {sys.version.split()[0]}")
    print(f"config:     {h.config_file}")
    print(f"data:       {h.data_dir}")
    print(f"workspace:  {h.workspace(config.workspace)}")
    sandbox = exec_sandbox(config, h, h.workspace(config.workspace))
    mode = sandbox.mode_now() if sandbox else RESTRICTION_OFF
    print(f"commands:   {mode.description}")
    in_sandbox = sandbox.program if sandbox and mode.sandboxed else None
    print(f"limits:     {describe_limits(Limits.of(config.tools.exec), in_sandbox)}")
    print(f"network:    {'WARNING: ' if mode.network.warning else ''}{mode.network.description}")
    print("config ok" if not loaded.problems else "config problems:")
    for problem in loaded.problems:
        print(f"  - {problem}")
    if loaded.unreadable:
        failures.append("config.yaml cannot be read, so the app runs on defaults, with no model: fix it where "
                        "named above, or save in Settings to replace it (a copy of it is kept)")
    try:
        backend = secrets.backend_name()
        stored = secrets.list_providers()
        note = " (WARNING: stores keys in a plain file)" if secrets.is_plaintext_backend() else ""
        print(f"keyring:    {backend}{note}; keys stored for: {', '.join(stored) or 'none'}")
    except secrets.KeyringUnavailable as exc:
        print(f"keyring:    unusable — {exc}")
    from desktop.ui.diagnostics import lines as desktop_lines  # Qt-light; only doctor needs it

    for line in desktop_lines(config.hotkey):
        print(line)
    _mcp_lines(config.section(McpConfig).servers, ServerPlaces.of(h, lambda: h.workspace(config.workspace)),
               args.offline)
    print(f"keep awake: {asyncio.run(_keep_awake(config.section(SchedulesConfig).keep_awake))}")
    if loaded.unreadable:
        print("model:      unknown until config.yaml can be read")
        return failures
    if not config.model:
        print("model:      not configured (set `model` in config.yaml or open Settings)")
        return failures
    where = f" via {config.api_base}" if config.api_base else ""
    if args.offline:  # no model helper either: it would load the model library (seconds) to name the provider
        print(f"model:      {config.model}{where}")
        return failures
    provider, unanswered = asyncio.run(_probe(LLMProvider(config)))
    print(f"model:      {config.model} (provider {provider}){where}")
    print(f"reachable:  {f'no — {unanswered}' if unanswered else 'yes'}")
    if unanswered:
        failures.append(f"the model {config.model} does not answer: {unanswered}")
    return failures


def _mcp_lines(configured: dict[str, McpServerConfig], places: ServerPlaces, offline: bool) -> None:
    if not configured:
        print("mcp:        no servers configured")
        return
    if offline:
        states = {name: "enabled" if c.enabled else "disabled" for name, c in sorted(configured.items())}
    else:
        from desktop.cli.mcp_cmd import states as probe_states

        states = asyncio.run(probe_states(configured, places))
    print("mcp:        " + "; ".join(f"{name}: {state}" for name, state in states.items()))


async def _keep_awake(wanted: bool) -> str:
    """Whether background work can hold off sleep here: an inhibitor taken and given back at once."""
    if not wanted:
        return "off (schedules.keep_awake)"
    try:
        release(await inhibit("nanobot-tray doctor checks that it can keep the computer awake"))
    except Unavailable as exc:
        return f"not available here ({exc}); the computer may sleep during background work"
    return "yes: logind holds off sleep while background work runs"


async def _probe(provider: LLMProvider) -> tuple[str, str | None]:
    """The model's provider as litellm names it, and why one request for one token is not answered (None: it is)."""
    provider.config.provider.retry_delays = []
    try:
        name = (await provider.key_needs(provider.config.model))["provider"]
    except (HelperGone, HelperFailed) as exc:
        return "unknown", str(exc)
    try:
        await provider.chat([{"role": "user", "content": "ping"}], max_tokens=1, allow_empty=True)
    except ProviderError as exc:
        return name, str(exc)
    return name, None
