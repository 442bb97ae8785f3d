"""Chats on disk: one JSONL file per session (`session.py`) and the search over all of them (`search.py`)."""
