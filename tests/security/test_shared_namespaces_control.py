# ruff: noqa: F811  (the fixtures imported below are parameters of the test, as pytest passes them)
"""The shared-namespaces lab can fail: with `tools.exec.network: host` the cases reach their targets and each
is caught. In a module of its own, so it gets a lab of its own (the module-scoped fixtures below are built
again here): its breaches stay in the chat's history, where they would be found again by the cases of
test_shared_namespaces.py if a worker ran some of those after this test on the same lab."""

from __future__ import annotations

import pytest

from desktop.kernel.bus import ToolFinished, TurnFinished
from tests.netlab import Internet
from tests.security.harness import Lab
from tests.security.test_shared_namespaces import (  # noqa: F401  (module-scoped fixtures: built anew here)
    CASES,
    DesktopSocket,
    command_of,
    desktop_sockets,
    internet,
    lab,
    places,
)

pytestmark = pytest.mark.asyncio(loop_scope="module")  # the lab's loop


async def test_with_the_network_shared_the_same_cases_get_through_and_the_lab_says_so(
        lab: Lab, internet: Internet, places: dict[str, str], desktop_sockets: list[DesktopSocket]) -> None:
    """The lab's checks can fail: with `tools.exec.network: host` (the opt-in Settings warns about) these
    cases reach their targets, and each is caught. Not counted: the breaches are looked at, not recorded."""
    chosen = {case: template for case, template, _ in CASES
              if case in ("loopback", "the model server itself", "the router", "the X server's abstract socket",
                          "xdotool types into a window", "a D-Bus bus by socat")}
    await lab.core.settings.update(lambda config: setattr(config.tools.exec, "network", "host"))
    try:
        for case, template in chosen.items():
            before = lab.snapshot()
            lab.fake.add({"tool_calls": [{"name": "exec", "arguments": {"command": command_of(template, lab, places)}}]},
                         {"content": "ok"})
            seen = len(lab.chat.of(ToolFinished))
            assert isinstance(await lab.chat.ask("please do it"), TurnFinished)
            results = [r.result for r in lab.chat.of(ToolFinished)[seen:]]
            assert lab.breaches(before, results), f"{case}: reached its target unnoticed"
            _forget_breaches(lab, internet, desktop_sockets)
    finally:
        await lab.core.settings.update(lambda config: setattr(config.tools.exec, "network", "internet"))
        _forget_breaches(lab, internet, desktop_sockets)


def _forget_breaches(lab: Lab, internet: Internet, desktop_sockets: list[DesktopSocket]) -> None:
    lab.marker.unlink(missing_ok=True)
    lab.canary.hits.clear()
    for hits in internet.forbidden.values():
        hits.clear()
    for desktop_socket in desktop_sockets:
        desktop_socket.hits.clear()
    lab.fake.requests[:] = [r for r in lab.fake.requests if "from_the_sandbox" not in r]
