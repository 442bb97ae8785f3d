"""Names vulture (in .ci/run) cannot see being used: read by a library or by Qt, or kept as test seams.

Never imported or run; each line names an attribute so vulture counts it as used. Qt's and the standard
library's overridable methods (paintEvent, headerData, handle_data...) are matched by name instead, in
pyproject.toml's [tool.vulture] ignore_names. Keep this short: dead code is deleted, not listed here."""

# ruff: noqa
# mypy: ignore-errors

# Set for a library that reads them.
_.exc_text  # logging.LogRecord: the formatter reuses it (desktop/kernel/logs.py)
_.committer, _.commit_time, _.commit_timezone, _.encoding  # a dulwich Commit's fields (memory/git_history.py)
_.suppress_debug_info, _.drop_params, _.telemetry  # litellm's module switches (providers/litellm_env.py)
_.whitespace_split  # shlex.shlex reads it (tools/shell.py)
_.selections  # QAbstractTextDocumentLayout.PaintContext, read by Qt when it paints (ui/chat/render.py)
_.set_tokens, _.get_client_info, _.set_client_info  # the MCP SDK's TokenStorage, called by its OAuth client
_.update_token_expiry, _.token_expiry_time  # the MCP SDK's OAuthContext, overridden and read by it (mcp/oauth.py)

# Kept alive by the reference: Qt deletes what Python drops.
_._explanation  # the open message box (ui/app.py)
_.highlighter  # the syntax highlighter of an editor (ui/skills/details.py)

# Built by name through ui/app.py's WINDOWS table (importlib), not by a visible call.
ChatWindow, QuickPrompt, SettingsWindow, MemoryWindow, SkillsWindow, RemindersWindow

# Test seams: the tests wait on or measure these (no other caller).
_.settle  # Scheduler: the runs started by the last firing have finished (scheduler/scheduler.py)
_.cards, _.control_rect, _.at_bottom, _.searching  # ui/approval_card.py, ui/chat/view.py, ui/memory/history_tab.py

# desktop/settings.py belongs to the settings renovation (r-settings), which decides its fate.
_.overrides
