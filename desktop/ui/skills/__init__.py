"""Parts of the skills manager window (desktop/ui/skills/window.py)."""
