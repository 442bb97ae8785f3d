"""Where MCP servers write their logs and where stdio servers run."""

from __future__ import annotations

import errno
import os
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

from desktop.kernel.paths import Home
from desktop.mcp.names import clean
from desktop.workspace.programs import (
    arguments_outside,
    folder_outside,
    path_outside,
    program_outside,
    variables_outside,
)


@dataclass(frozen=True)
class ServerPlaces:
    """Where servers write their logs and where stdio servers run: never in the workspace, whose files sandboxed
    commands write (desktop/workspace/programs.py says what they could do there to a program the app starts)."""

    logs: Path
    runs: Path  # a stdio server that names no working folder runs in a folder of its own here, the app's
    workspace: Callable[[], Path]  # the workspace in force at each start (a settings change may move it)

    @classmethod
    def of(cls, home: Home, workspace: Callable[[], Path]) -> ServerPlaces:
        return cls(home.logs_dir, home.data_dir / "mcp-servers", workspace)

    def log_file(self, name: str) -> Path:
        return self.logs / f"mcp-{clean(name)}.log"

    def start_in(self, name: str, command: str, cwd: str | None, args: list[str],
                 env: dict[str, str]) -> tuple[str, Path, dict[str, str]]:
        """The program to start, by its absolute name, its working folder (the configured one, else the server's
        own) and its environment (`env` with a PATH that holds no folder of the workspace). Raises InWorkspace when
        the program, the folder, an argument or a variable is in the workspace; FileNotFoundError when there is no
        such program. Reads the disk: not on the event loop."""
        workspace = self.workspace()
        if cwd:
            folder = folder_outside(Path(cwd), workspace)
        else:
            folder = self.runs / clean(name)
            folder.mkdir(parents=True, exist_ok=True)
        search_path = env.get("PATH") or os.environ.get("PATH", os.defpath)
        program = program_outside(command, workspace, cwd=folder, search_path=search_path)
        if program is None:
            raise FileNotFoundError(errno.ENOENT, "command not found", command)
        arguments_outside(args, workspace, cwd=folder)
        variables_outside(env, workspace, cwd=folder)
        return program, folder, {**env, "PATH": path_outside(search_path, workspace)}
