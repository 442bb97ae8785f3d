"""The tabs of the memory window (desktop/ui/memory_window.py)."""
