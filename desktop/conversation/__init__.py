"""What each chat is doing, as everyone who shows it reads it (desktop/conversation/state.py)."""
