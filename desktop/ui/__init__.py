"""The Qt layer: adapts the agent core to windows, the tray and notifications."""

import PySide6.QtCore  # noqa: F401  (brings in PySide6's import hook, made safe next)

from desktop.ui.pyside_imports import import_without_running_modules

import_without_running_modules()
