"""The workspace: the assistant's folder, which sandboxed commands write, so the app treats what is in it as
adversarial. `access.py` is the one way the app's own process reads or writes there; `layout.py` says what
lives where and creates the first-run templates through it."""
