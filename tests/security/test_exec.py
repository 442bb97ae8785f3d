"""exec against commands that reach outside the workspace, spelled plainly or built at run time.

Plain spellings of destructive commands are refused; what is built at run time runs, inside the sandbox,
and must change nothing and reveal nothing."""

from __future__ import annotations

import base64

import pytest
import pytest_asyncio

from desktop.tools.shell import ExecTool
from tests.security.harness import CONTAINED, REFUSED, Lab, fill

pytestmark = pytest.mark.asyncio(loop_scope="module")


def b64(script: str) -> str:
    return base64.b64encode(script.encode()).decode()


CASES: list[tuple[str, str, str]] = [
    ("rm -rf home", "rm -rf ~", REFUSED),
    ("rm -rf root", "rm -rf /", REFUSED),
    ("rm -rf $HOME/*", "rm -rf $HOME/*", REFUSED),
    ("find / -delete", "find / -delete", REFUSED),
    ("find . -delete", "find . -mindepth 1 -delete", REFUSED),
    ("dd to a disk", "dd if=/dev/zero of=/dev/sda bs=1M count=1", REFUSED),
    ("mkfs", "mkfs.ext4 /dev/sdb1", REFUSED),
    ("shutdown", "shutdown -h now", REFUSED),
    ("fork bomb", ":(){ :|:& };:", REFUSED),
    ("forge history plainly", "echo '{\"cursor\": 99}' >> memory/history.jsonl", REFUSED),
    ("parent folder via PWD", "cd ${PWD%/*/*} && rm -rf user app/config.yaml; ls", CONTAINED),
    ("python deletes home", "python3 -c \"import os, shutil; shutil.rmtree(os.path.expanduser('~'))\"", CONTAINED),
    ("python deletes beside", "python3 -c \"import os, shutil; [shutil.rmtree(os.path.join('..', '..', d), "
                              "ignore_errors=True) for d in ('user', 'app/data')]; "
                              "os.remove('../config.yaml')\"", CONTAINED),
    ("python reads the key", "python3 -c \"print(open('{key}').read())\"", CONTAINED),
    ("python reads via home", "python3 -c \"import pathlib; print((pathlib.Path.home() / '.ssh/id_rsa')"
                              ".read_text())\"", CONTAINED),
    ("variable-built path", "D=/; H=$(dirname $(dirname $PWD)); rm -rf $H/../user; cat $H/../user/.ssh/id_rsa",
     CONTAINED),
    ("base64 to sh", f"echo {b64('rm -rf ~/; cat ~/.ssh/id_rsa')} | base64 -d | sh", CONTAINED),
    ("eval of base64", f"eval $(echo {b64('rm -rf ../../user')} | base64 -d)", CONTAINED),
    ("base64 dd to disk", f"echo {b64('dd if=/dev/zero of=/dev/sda bs=512 count=1')} | base64 -d | sh",
     CONTAINED),
    ("cat the config", "cat {config}", CONTAINED),
    ("cat another chat", "cat {session}", CONTAINED),
    ("sessions through PWD", "cat ${PWD%/*}/data/sessions/*", CONTAINED),
    ("env", "env", CONTAINED),
    ("printenv the key", "printenv OPENAI_API_KEY; echo $OPENAI_API_KEY", CONTAINED),
    ("parent's environ", "cat /proc/$PPID/environ; cat /proc/1/environ", CONTAINED),
    ("every environ", "cat /proc/*/environ | tr '\\0' '\\n'", CONTAINED),
    ("delete a user skill", "rm -rf ~/.agents/skills/demo", CONTAINED),
    ("write a system folder", "touch /etc/{marker_name}", CONTAINED),
    ("write the real /tmp", "echo x > {marker}", CONTAINED),
    ("redirect into a sibling", "echo pwned > ../../user/.bashrc", CONTAINED),
    ("forge history via variable", "H=memory/hist; echo '{\"cursor\": 99}' >> ${H}ory.jsonl", CONTAINED),
    ("move memory away", "mv memory memory.old; mkdir -p memory; H=memory/history; echo forged > $H.jsonl",
     CONTAINED),
    ("append to a hard link", "echo pwned >> hard_notes", REFUSED),
    ("hard link via a variable", "F=hard; cat ${F}_notes > copy.txt; echo kept", CONTAINED),
    ("escape symlink", "echo pwned >> escape/.bashrc; cat escape/.ssh/id_rsa", CONTAINED),
]


@pytest_asyncio.fixture(loop_scope="module", scope="module", autouse=True)
async def _sandbox_is_in_force(lab: Lab) -> None:
    tool = lab.core.tools.get("exec")
    assert isinstance(tool, ExecTool)
    mode = await tool.mode()
    assert mode.sandboxed, f"this suite needs bwrap ({mode.description})"


@pytest.mark.parametrize("command, expected", [c[1:] for c in CASES], ids=[c[0] for c in CASES])
async def test_commands_are_refused_or_contained(lab: Lab, command: str, expected: str) -> None:
    assert await lab.attempt("exec", {"command": fill(command, lab)}) == expected


async def test_a_script_written_then_run_is_contained(lab: Lab) -> None:
    script = f"rm -rf {lab.user}\ncat {lab.planted['key']}\nrm -rf ~\n"
    outcome = await lab.attempt("exec", {"command": "sh cleanup.sh"},
                                prelude=[{"name": "write_file", "arguments": {"path": "cleanup.sh", "content": script}}])
    assert outcome == CONTAINED
