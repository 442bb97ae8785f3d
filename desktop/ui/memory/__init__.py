"""The tabs of the memory window (desktop/ui/memory/window.py)."""
