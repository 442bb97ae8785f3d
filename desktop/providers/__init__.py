"""Model providers. One implementation: litellm, which reaches any provider."""

HELPER_FLAG = "--model-helper"  # how the program is told to serve as the model helper (desktop/providers/helper.py)
