"""Skills: folders with a SKILL.md that teach the agent a task (Agent Skills format).

The built-in skill folders ship inside the wheel as `desktop/resources/skills` (top-level `skills/` in a
checkout); this package is the code that finds, checks, installs and edits them."""
