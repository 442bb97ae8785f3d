"""Model providers. One implementation: litellm, which reaches any provider."""
