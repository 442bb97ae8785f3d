from tests.pulse import microphone, muted_microphone, no_microphone  # noqa: F401  (fixtures)
