from tests.pulse import microphone, muted_microphone, no_microphone, no_speakers, speakers  # noqa: F401  (fixtures)
from tests.speechd import no_speech_dispatcher, speech_dispatcher  # noqa: F401  (fixtures)
