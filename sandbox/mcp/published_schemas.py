"""The JSON schemas tools/list publishes, written compactly.

Every conversation pays for tools/list, so a schema says what a program needs to read
an answer and nothing a model reads elsewhere: no titles, no prose (the descriptions
say what a field means), `X | None` as a type list. An output schema names every field
of the answer with its type; a field that holds records (files, network connections,
layers) or a list says only that it is an object or a list: the answer itself shows
what they hold. It lists no required fields: an answer always carries every field, and
a list of them all would repeat the properties. The models in server.py stay the one source: the SDK checks answers against them, a client checks
them against these, which accept every answer the models do.
"""

from __future__ import annotations

# Keys that carry prose or restate the Python side, dropped from output schemas.
OUTPUT_PROSE = frozenset({"title", "description", "default"})
# Input schemas keep descriptions and defaults: they are how a model fills the arguments.
INPUT_PROSE = frozenset({"title"})
# Where a dict's keys are names of fields or definitions, not schema keywords.
NAMED = frozenset({"properties", "$defs", "patternProperties"})
DEFS = "#/$defs/"


def output_schema(schema: dict) -> dict:
    """Every top-level field with its type; records below it as objects or lists."""
    flat = _inline_single_use(_compact(schema, OUTPUT_PROSE))
    flat.pop("$defs", None)
    flat.pop("required", None)
    flat["properties"] = {name: _records_as_objects(field) for name, field in flat.get("properties", {}).items()}
    return flat


def input_schema(schema: dict, without=()) -> dict:
    """Arguments keep their descriptions, defaults and bounds: they are how a model fills
    them. A default of null says nothing an optional argument does not. `without`: the
    arguments left out."""
    published = _compact(schema, INPUT_PROSE)
    properties = {name: {key: value for key, value in field.items() if not (key == "default" and value is None)}
                  for name, field in published.get("properties", {}).items() if name not in without}
    return _inline_single_use({**published, "properties": properties})


def _records_as_objects(field: dict) -> dict:
    """An object field: {"type": "object"}; a list: {"type": "array"} (the answer shows
    what it holds); an enum without the types its values already say."""
    if "properties" in field or "additionalProperties" in field or "object" in _types(field):
        return {"type": field.get("type", "object")}
    if "items" in field:
        return {key: value for key, value in field.items() if key != "items"}
    if "enum" in field:
        return {key: value for key, value in field.items() if key != "type"}
    return field


def _types(field: dict) -> list:
    kind = field.get("type")
    return kind if isinstance(kind, list) else [kind]


def _inline_single_use(schema: dict) -> dict:
    """A definition referred to once is written where it is used, and one referred to
    nowhere (an argument left out) goes: `$defs` is for the ones shared (a reference and
    its name cost more than they save for one use)."""
    definitions = schema.get("$defs") or {}
    uses: dict[str, int] = {}
    _count_refs(schema, uses)
    single = {name: body for name, body in definitions.items() if uses.get(name, 0) == 1}
    kept = {name: body for name, body in definitions.items() if uses.get(name, 0) > 1}
    if len(kept) == len(definitions):
        return schema
    rest = {key: value for key, value in schema.items() if key != "$defs"}
    inlined = _replace_refs({**rest, **({"$defs": kept} if kept else {})}, single)
    return _inline_single_use(inlined)


def _count_refs(node, uses: dict[str, int]) -> None:
    if isinstance(node, dict):
        ref = node.get("$ref")
        if isinstance(ref, str) and ref.startswith(DEFS):
            uses[ref[len(DEFS):]] = uses.get(ref[len(DEFS):], 0) + 1
        for value in node.values():
            _count_refs(value, uses)
    elif isinstance(node, list):
        for value in node:
            _count_refs(value, uses)


def _replace_refs(node, single: dict):
    if isinstance(node, list):
        return [_replace_refs(value, single) for value in node]
    if not isinstance(node, dict):
        return node
    ref = node.get("$ref")
    if isinstance(ref, str) and ref.startswith(DEFS) and ref[len(DEFS):] in single:
        siblings = {key: value for key, value in node.items() if key != "$ref"}
        return _replace_refs({**single[ref[len(DEFS):]], **siblings}, single)
    return {key: _replace_refs(value, single) for key, value in node.items()}


def _compact(node, prose: frozenset[str]):
    if isinstance(node, list):
        return [_compact(item, prose) for item in node]
    if not isinstance(node, dict):
        return node
    out = {}
    for key, value in node.items():
        if key in prose:
            continue
        if key in NAMED and isinstance(value, dict):
            out[key] = {name: _compact(item, prose) for name, item in value.items()}
        else:
            out[key] = _compact(value, prose)
    return _nullable(out)


def _nullable(node: dict) -> dict:
    """{"anyOf": [X, {"type": "null"}]} -> X with "null" among its types (and its enum)."""
    options = node.get("anyOf")
    if not isinstance(options, list) or len(options) != 2 or {"type": "null"} not in options:
        return node
    other = options[0] if options[1] == {"type": "null"} else options[1]
    if not isinstance(other.get("type"), str) or any(key in node for key in other):
        return node
    merged = {key: value for key, value in node.items() if key != "anyOf"}
    merged.update(other, type=[other["type"], "null"])
    if "enum" in other:
        merged["enum"] = [*other["enum"], None]
    return merged
