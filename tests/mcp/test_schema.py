"""What servers send versus what OpenAI-style function calling accepts: schemas reshaped, names that are
valid, unique and the same whichever server connected first."""

from __future__ import annotations

import json
import re
from typing import Any

from desktop.mcp.names import MAX_LENGTH, tool_name
from desktop.mcp.schema import normalise
from desktop.tools.base import validate


def refs_left(schema: Any) -> list[str]:
    return re.findall(r'"\$ref": "([^"]*)"', json.dumps(schema))


def test_an_array_without_items_gets_items() -> None:
    out = normalise({"type": "object", "properties": {
        "tags": {"type": "array"}, "maybe": {"type": ["array", "null"]},
        "nested": {"type": "array", "items": {"type": "array"}}}})
    props = out["properties"]
    assert props["tags"] == {"type": "array", "items": {}}
    assert props["maybe"]["items"] == {}
    assert props["nested"]["items"] == {"type": "array", "items": {}}


def test_untyped_enums_and_consts_take_the_type_of_their_values() -> None:
    out = normalise({"properties": {
        "level": {"enum": [1, 2, 3]}, "ratio": {"enum": [0.5, 1]}, "flag": {"const": True},
        "answer": {"const": 42}, "colour": {"enum": ["red", "blue"]}, "either": {"enum": ["a", 1]},
        "typed": {"type": "string", "enum": ["x"]}}})
    props = out["properties"]
    assert props["level"] == {"enum": [1, 2, 3], "type": "integer"}
    assert props["ratio"]["type"] == "number"
    assert props["flag"] == {"enum": [True], "type": "boolean"}
    assert props["answer"] == {"enum": [42], "type": "integer"}
    assert props["colour"]["type"] == "string"
    assert props["either"]["type"] == ["integer", "string"]
    assert props["typed"] == {"type": "string", "enum": ["x"]}
    # what the model sends for them passes our own validation ("2" from a sloppy model is cast)
    assert validate(out, {"level": "2", "answer": 42, "flag": True}) == {"level": 2, "answer": 42, "flag": True}


def test_refs_to_any_local_pointer_are_resolved() -> None:
    schema = {
        "type": "object",
        "properties": {
            "home": {"type": "object", "properties": {"city": {"type": "string"}}},
            "work": {"$ref": "#/properties/home", "description": "where they work"},
            "first": {"$ref": "#/$defs/Pair/properties/left"},
            "legacy": {"$ref": "#/definitions/Old"},
            "odd": {"$ref": "#/$defs/a~1b"},
            "listed": {"$ref": "#/$defs/Pair/required/0"},
            "remote": {"$ref": "https://example.invalid/schema.json"},
        },
        "$defs": {"Pair": {"type": "object", "properties": {"left": {"type": "integer"}}, "required": ["left"]},
                  "a/b": {"type": "boolean"}},
        "definitions": {"Old": {"type": "number"}},
    }
    props = normalise(schema)["properties"]
    assert props["work"] == {"type": "object", "properties": {"city": {"type": "string"}},
                             "description": "where they work"}
    assert props["first"] == {"type": "integer"}
    assert props["legacy"] == {"type": "number"}
    assert props["odd"] == {"type": "boolean"}
    assert props["listed"] == {"type": "object"}  # points at a string, not a schema: a plain object
    assert props["remote"] == {"type": "object"}  # never fetched
    assert refs_left(props) == []


def test_recursive_schemas_stop_and_keep_optional_values_nullable() -> None:
    schema = {
        "type": "object",
        "properties": {"root": {"$ref": "#/$defs/Node"}},
        "$defs": {"Node": {"type": "object", "properties": {
            "name": {"type": "string"},
            "parent": {"anyOf": [{"$ref": "#/$defs/Node"}, {"type": "null"}], "default": None},
            "children": {"type": "array", "items": {"$ref": "#/$defs/Node"}}}}},
    }
    out = normalise(schema)
    assert refs_left(out) == [] and "anyOf" not in json.dumps(out)
    node = out["properties"]["root"]
    depth = 0
    while "properties" in node:  # follow parent links until the recursion was cut
        assert node["properties"]["parent"]["type"] == ["object", "null"]
        assert node["properties"]["children"]["type"] == "array"
        node = node["properties"]["parent"]
        depth += 1
    assert node == {"type": ["object", "null"], "default": None} and 1 <= depth <= 3
    assert len(json.dumps(out)) < 20_000


def test_a_root_reference_and_a_deep_plain_schema() -> None:
    tree = {"type": "object", "properties": {"next": {"anyOf": [{"$ref": "#"}, {"type": "null"}]}}}
    assert normalise(tree)["properties"]["next"]["type"] == ["object", "null"]
    deep: dict[str, Any] = {"type": "string"}
    for _ in range(60):
        deep = {"type": "object", "properties": {"x": deep}}
    out = json.dumps(normalise(deep))
    assert out.count('"properties"') > 15  # cut only far past what servers really nest


def test_names_are_valid_unique_and_independent_of_order() -> None:
    pairs = [("files", "read"), ("my_server", "echo"), ("my", "server_echo"), ("my-server", "echo"),
             ("web search", "go"), ("web_search", "go"), ("x" * 40, "y" * 40), ("x" * 40, "y" * 41),
             ("time", "get.current.time"), ("time", "get_current_time")]

    def named(order: list[tuple[str, str]]) -> dict[tuple[str, str], str]:
        taken: set[str] = set()
        names = {}
        for server, tool in order:
            names[(server, tool)] = tool_name(server, tool, taken)
            taken.add(names[(server, tool)])
        return names

    forward, backward = named(pairs), named(pairs[::-1])
    assert forward == backward
    assert len(set(forward.values())) == len(pairs)
    assert all(re.fullmatch(r"[a-zA-Z0-9_-]{1,64}", n) and len(n) <= MAX_LENGTH for n in forward.values())
    assert forward[("files", "read")] == "mcp_files_read"
    assert forward[("time", "get_current_time")] == "mcp_time_get_current_time"
    assert forward[("my-server", "echo")] == "mcp_my-server_echo"
    assert re.fullmatch(r"mcp_my-server_echo_[0-9a-f]{8}", forward[("my_server", "echo")])
