"""Tool input schemas from MCP servers reshaped so OpenAI-style function calling accepts them.

Servers generate schemas with pydantic or zod: `$ref`s into `$defs` (or anywhere else in the schema),
`anyOf: [X, null]` for optional values, arrays without `items`, enums without a `type`. Providers reject
some of these; the model only needs the shape."""

from __future__ import annotations

from typing import Any
from urllib.parse import unquote

_RECURSION = 2  # a `$ref` met again this often on one path stops there as a plain object
_MAX_DEPTH = 40  # a guard against absurdly deep schemas, recursive or not


def normalise(schema: dict[str, Any] | None) -> dict[str, Any]:
    root = schema if isinstance(schema, dict) else {}
    result = _node(root, root, (), 0)
    result["type"] = "object"
    result.setdefault("properties", {})
    return result


def _node(node: Any, root: dict[str, Any], refs: tuple[str, ...], depth: int) -> dict[str, Any]:
    if not isinstance(node, dict):
        return {}
    ref = node.get("$ref")
    if isinstance(ref, str):
        rest = {k: v for k, v in node.items() if k != "$ref"}
        target = _resolve(root, ref)
        if target is None or refs.count(ref) >= _RECURSION or depth > _MAX_DEPTH:
            return {"type": "object", **{k: v for k, v in rest.items() if k == "description"}}
        return _node({**target, **rest}, root, (*refs, ref), depth + 1)
    if depth > _MAX_DEPTH:
        return _cut(node)
    out: dict[str, Any] = {k: v for k, v in node.items() if k not in ("$defs", "definitions", "$schema", "$id")}
    for key in ("anyOf", "oneOf"):
        if isinstance(out.get(key), list):
            options = [_node(option, root, refs, depth + 1) for option in out.pop(key)]
            out.update(_union(options, key))
    if isinstance(out.get("allOf"), list):
        parts = [_node(part, root, refs, depth + 1) for part in out.pop("allOf")]
        for part in parts:
            for k, v in part.items():
                if k == "properties":
                    out.setdefault("properties", {}).update(v)
                elif k == "required":
                    out["required"] = sorted(set(out.get("required", [])) | set(v))
                else:
                    out.setdefault(k, v)
    if isinstance(out.get("properties"), dict):
        out["properties"] = {k: _node(v, root, refs, depth + 1) for k, v in out["properties"].items()}
    if "items" in out:
        out["items"] = _node(out["items"], root, refs, depth + 1)
    if isinstance(out.get("additionalProperties"), dict):
        out["additionalProperties"] = _node(out["additionalProperties"], root, refs, depth + 1)
    if "const" in out:  # our own validator and several providers know `enum`, not `const`
        out["enum"] = [out.pop("const")]
    if "type" not in out and not any(k in out for k in ("anyOf", "oneOf")):
        out["type"] = _guess_type(out)
    if _has_type(out, "array"):
        out.setdefault("items", {})  # OpenAI refuses an array schema without `items`
    return out


def _resolve(root: dict[str, Any], ref: str) -> dict[str, Any] | None:
    """The node a local JSON pointer (`#/$defs/X`, `#/properties/a/items`, `#`) names; None for any other."""
    if not ref.startswith("#"):
        return None
    node: Any = root
    for part in [p for p in ref[1:].split("/") if p] if ref != "#" else []:
        key = unquote(part).replace("~1", "/").replace("~0", "~")
        if isinstance(node, dict) and key in node:
            node = node[key]
        elif isinstance(node, list) and key.isdigit() and int(key) < len(node):
            node = node[int(key)]
        else:
            return None
    return node if isinstance(node, dict) else None


def _cut(node: dict[str, Any]) -> dict[str, Any]:
    """A node past the depth guard keeps only its type (a `null` stays null, so `X or null` stays nullable)."""
    out = {"type": node.get("type", "object")}
    if _has_type(out, "array"):
        out["items"] = {}
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


def _has_type(node: dict[str, Any], kind: str) -> bool:
    declared = node.get("type")
    return declared == kind or (isinstance(declared, list) and kind in declared)


def _guess_type(node: dict[str, Any]) -> str | list[str]:
    """Untyped nodes: the shape they describe, the type of their enum values, else text (what an untyped
    description-only field holds)."""
    if "properties" in node or "additionalProperties" in node:
        return "object"
    if "items" in node:
        return "array"
    values = node.get("enum")
    if isinstance(values, list) and values:
        kinds = sorted({_json_type(v) for v in values})
        if kinds == ["integer", "number"]:
            return "number"
        return kinds[0] if len(kinds) == 1 else kinds
    return "string"


def _json_type(value: Any) -> str:
    if isinstance(value, bool):
        return "boolean"
    if isinstance(value, int):
        return "integer"
    if isinstance(value, float):
        return "number"
    if value is None:
        return "null"
    if isinstance(value, list):
        return "array"
    if isinstance(value, dict):
        return "object"
    return "string"
