"""What each chat is doing, as everyone who shows it reads it (desktop/conversation/state.py), and its transcript
as rows, built the same from a saved session and from live events (desktop/conversation/transcript.py)."""
