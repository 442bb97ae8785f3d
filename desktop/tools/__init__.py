"""Tools the model can call: JSON-Schema-described, validated, registered by name."""
