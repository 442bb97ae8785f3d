"""Skills: folders with a SKILL.md that teach the agent a task (Agent Skills format).

Named `skillset` because the wheel ships the built-in skill folders as `desktop/skills`.
"""
