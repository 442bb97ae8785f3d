"""The settings writer: config.yaml read as it is on disk, written atomically, applied to the running core.

Qt-free so the same steps serve the Settings window, the onboarding panel and tests."""

from __future__ import annotations

import asyncio
import shutil
import time
from pathlib import Path

from desktop.config import Config, LoadedConfig, load_config, save_config
from desktop.core import Core, workspace_of
from desktop.workspace import ensure_workspace


async def read_current(core: Core) -> LoadedConfig:
    """config.yaml as it is on disk now (it may have been edited since start), with its problems."""
    return await asyncio.to_thread(load_config, core.loaded.path)


async def save_and_apply(core: Core, new: Config, *, keep_broken_copy: bool = False) -> Path | None:
    """Write config.yaml atomically and switch the running core to it. With `keep_broken_copy`, the file
    being replaced had problems: it is first copied aside so nothing the user wrote is lost; returns the copy."""
    path = core.loaded.path
    workspace = workspace_of(core.home, new)

    def write() -> Path | None:
        copy = None
        if keep_broken_copy and path.exists():
            copy = path.with_name(f"{path.name}.broken-{time.strftime('%Y%m%d-%H%M%S')}")
            shutil.copy2(path, copy)
        ensure_workspace(workspace)
        save_config(path, new)
        return copy

    copy = await asyncio.to_thread(write)
    core.apply_config(new)
    core.loaded.problems.clear()
    return copy
