"""Where bubblewrap cannot run, the commands the sandbox would contain are not contained: they must ask
first, and answered no, nothing runs. Plain destructive spellings stay refused even when the person says yes."""

from __future__ import annotations

from collections.abc import Iterator

import pytest

from desktop.approvals import Answer, ApprovalRequest, Approvals
from desktop.tools.sandbox import Sandbox
from desktop.tools.shell import ExecTool
from tests.security.harness import ASKED, REFUSED, Lab, fill
from tests.security.test_exec import CASES

pytestmark = pytest.mark.asyncio(loop_scope="module")


class Person:
    def __init__(self) -> None:
        self.answer = False
        self.asked: list[str] = []

    async def __call__(self, request: ApprovalRequest) -> Answer:
        self.asked.append(request.shown)
        return "once" if self.answer else "deny"


@pytest.fixture(scope="module")
def person(lab: Lab) -> Iterator[Person]:
    """exec without a sandbox (its program missing), behind approvals that a test person answers."""
    answering = Person()
    previous, gate = lab.core.tools.get("exec"), lab.core.tools.gate
    lab.core.tools.register(ExecTool(lab.workspace, 30, restrict=True,
                                     sandbox=Sandbox(lab.workspace, program="/nonexistent/bwrap")))
    lab.core.tools.gate = Approvals(lab.core.config, answering).check
    yield answering
    lab.core.tools.gate = gate
    lab.core.tools.register(previous)  # type: ignore[arg-type]


@pytest.mark.parametrize("command, sandboxed", [c[1:] for c in CASES], ids=[c[0] for c in CASES])
async def test_without_the_sandbox_commands_ask_and_refusals_hold_even_on_yes(lab: Lab, person: Person,
                                                                              command: str, sandboxed: str) -> None:
    person.answer = sandboxed == REFUSED  # say yes to what the refusal list must still stop
    command = fill(command, lab)
    outcome = await lab.attempt("exec", {"command": command})
    assert outcome == (REFUSED if sandboxed == REFUSED else ASKED)
    assert person.asked[-1] == command
