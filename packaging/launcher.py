"""The frozen program's entry point (packaging/nanobot-tray.spec). Not desktop/__main__.py: PyInstaller puts a
script's folder on the import path, and desktop/secrets.py would then hide the standard library's secrets."""

from desktop.cli import main

raise SystemExit(main())
