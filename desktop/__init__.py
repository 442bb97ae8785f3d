"""Nanobot Tray: a personal AI assistant that lives in the system tray."""

__version__ = "0.1.0"
