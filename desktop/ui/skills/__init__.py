"""Parts of the skills manager window (desktop/ui/skills_window.py)."""
