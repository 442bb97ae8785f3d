"""Tool input schemas from MCP servers reshaped so OpenAI-style function calling accepts them.

Servers generate schemas with pydantic or zod: `$ref`s into `$defs`, `anyOf: [X, null]` for optional
values, and nodes without a `type`. Providers reject some of these; the model only needs the shape."""

from __future__ import annotations

from typing import Any

_MAX_DEPTH = 12  # a recursive $ref stops here as a plain object


def normalise(schema: dict[str, Any] | None) -> dict[str, Any]:
    root = schema if isinstance(schema, dict) else {}
    defs = {**root.get("definitions", {}), **root.get("$defs", {})}
    result = _node(root, defs, 0)
    result["type"] = "object"
    result.setdefault("properties", {})
    return result


def _node(node: Any, defs: dict[str, Any], depth: int) -> dict[str, Any]:
    if not isinstance(node, dict):
        return {}
    if depth > _MAX_DEPTH:
        return {"type": "object"}
    ref = node.get("$ref")
    if isinstance(ref, str):
        target = defs.get(ref.rsplit("/", 1)[-1]) if ref.startswith("#/") else None
        merged = {**(target or {"type": "object"}), **{k: v for k, v in node.items() if k != "$ref"}}
        return _node(merged, defs, depth + 1)
    out: dict[str, Any] = {k: v for k, v in node.items() if k not in ("$defs", "definitions", "$schema", "$id")}
    for key in ("anyOf", "oneOf"):
        if key in out:
            options = [_node(option, defs, depth + 1) for option in out.pop(key)]
            out.update(_union(options, key))
    if "allOf" in out:
        parts = [_node(part, defs, depth + 1) for part in out.pop("allOf")]
        for part in parts:
            for k, v in part.items():
                if k == "properties":
                    out.setdefault("properties", {}).update(v)
                elif k == "required":
                    out["required"] = sorted(set(out.get("required", [])) | set(v))
                else:
                    out.setdefault(k, v)
    if "properties" in out and isinstance(out["properties"], dict):
        out["properties"] = {k: _node(v, defs, depth + 1) for k, v in out["properties"].items()}
    if "items" in out:
        out["items"] = _node(out["items"], defs, depth + 1)
    if isinstance(out.get("additionalProperties"), dict):
        out["additionalProperties"] = _node(out["additionalProperties"], defs, depth + 1)
    if "type" not in out and not any(k in out for k in ("anyOf", "oneOf")):
        out["type"] = _guess_type(out)
    return out


def _union(options: list[dict[str, Any]], key: str) -> dict[str, Any]:
    """`X or null` becomes X with a nullable type; other unions stay unions of normalised options."""
    real = [o for o in options if o.get("type") != "null"]
    nullable = len(real) < len(options)
    if len(real) == 1:
        merged = dict(real[0])
        kind = merged.get("type")
        if nullable and isinstance(kind, str):
            merged["type"] = [kind, "null"]
        return merged
    return {key: options}


def _guess_type(node: dict[str, Any]) -> str:
    """Untyped nodes: the shape they describe, else text (what an untyped description-only field holds)."""
    if "properties" in node or "additionalProperties" in node:
        return "object"
    if "items" in node:
        return "array"
    return "string"
