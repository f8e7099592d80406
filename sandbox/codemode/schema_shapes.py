"""A JSON schema as a compact Python-like type, for code mode's stubs and help():
`list[{name: str, entityType: str, observations: list[str]}]`, `'c' | 'f'`,
`dict[str, int]`, `{id: int, note?: str}` (`?`: a key the object may leave out).

An upstream's schema may be huge, deeply nested or recursive ($ref to itself):
objects open at most `depth` levels deep (`{...}` below), an object shows at
most MAX_KEYS keys, a union or an enum MAX_CHOICES members, one type at most
MAX_NODES schema nodes, and a $ref is followed only inside the same schema and
never into itself. Keys that are not
identifiers and enum values are shown as their repr, so no character a
terminal acts on passes through.
"""

from __future__ import annotations

SCALARS = {"string": "str", "integer": "int", "number": "float", "boolean": "bool", "null": "None",
           "array": "list", "object": "dict"}
MAX_KEYS = 8
MAX_CHOICES = 4
MAX_LEVELS = 8        # any nesting (arrays of arrays included) deeper than this is `...`
MAX_NODES = 120       # schema nodes rendered for one type; the rest is `...`
MAX_NAME = 40
MAX_LITERAL = 30


def shape(schema, depth: int, root=None) -> str:
    """`schema` as a type, opening objects at most `depth` levels deep; `root`
    is the document its local $refs point into (the schema itself by default)."""
    return _Shapes(schema if root is None else root).render(schema, depth, MAX_LEVELS, ())


class _Shapes:
    def __init__(self, root):
        self.root = root
        self.nodes = MAX_NODES

    def render(self, schema, depth: int, levels: int, refs: tuple) -> str:
        self.nodes -= 1
        if levels <= 0 or self.nodes < 0:
            return "..."
        if not isinstance(schema, dict):
            return "Any"
        ref = schema.get("$ref")
        if isinstance(ref, str):
            target = self.resolve(ref)
            if ref in refs:
                return "..."
            return "Any" if target is None else self.render(target, depth, levels - 1, refs + (ref,))
        for combined in ("anyOf", "oneOf"):
            members = schema.get(combined)
            if isinstance(members, list) and members:
                return _union([self.render(m, depth, levels - 1, refs) for m in members[:MAX_CHOICES]],
                              len(members))
        every = schema.get("allOf")
        if isinstance(every, list) and len(every) == 1:
            return self.render(every[0], depth, levels - 1, refs)
        values = schema.get("enum")
        if isinstance(values, list) and values:
            return _union([_literal(v) for v in values[:MAX_CHOICES]], len(values))
        if "const" in schema:
            return _literal(schema["const"])
        kind = schema.get("type")
        if isinstance(kind, list):
            kinds = [k for k in kind if isinstance(k, str)]
            return _union([self.render({**schema, "type": k}, depth, levels - 1, refs) for k in kinds[:MAX_CHOICES]],
                          len(kinds))
        if kind == "array":
            items = schema.get("items")
            return f"list[{self.render(items, depth, levels - 1, refs)}]" if isinstance(items, dict) and items \
                else "list"
        if kind == "object" or (kind is None and isinstance(schema.get("properties"), dict)):
            return self.render_object(schema, depth, levels, refs)
        return SCALARS.get(kind, "Any") if isinstance(kind, str) else "Any"

    def render_object(self, schema: dict, depth: int, levels: int, refs: tuple) -> str:
        properties = schema.get("properties")
        if isinstance(properties, dict) and properties:
            if depth <= 0:
                return "{...}"
            required = schema.get("required")
            required = set(required) if isinstance(required, list) and all(isinstance(r, str) for r in required) \
                else set()
            fields = [f"{_key(name)}{'' if name in required else '?'}: "
                      f"{self.render(value, depth - 1, levels - 1, refs)}"
                      for name, value in list(properties.items())[:MAX_KEYS]]
            if len(properties) > MAX_KEYS:
                fields.append("...")
            return "{" + ", ".join(fields) + "}"
        extra = schema.get("additionalProperties")
        if isinstance(extra, dict) and extra:
            return "dict[str, {...}]" if depth <= 0 else f"dict[str, {self.render(extra, depth - 1, levels - 1, refs)}]"
        return "dict"

    def resolve(self, ref: str):
        """A local reference (`#`, `#/$defs/Entity`), else None."""
        if ref == "#":
            return self.root
        if not ref.startswith("#/"):
            return None
        node = self.root
        for part in ref[2:].split("/"):
            part = part.replace("~1", "/").replace("~0", "~")
            if not isinstance(node, dict) or part not in node:
                return None
            node = node[part]
        return node


def _union(members: list[str], total: int) -> str:
    unique = list(dict.fromkeys(members))
    if total > len(members):
        unique.append("...")
    return " | ".join(unique)


def _key(name) -> str:
    name = str(name)
    return name[:MAX_NAME] if name.isidentifier() and name.isascii() else repr(name[:MAX_NAME])


def _literal(value) -> str:
    if isinstance(value, str):
        return repr(value[:MAX_LITERAL] + ("..." if len(value) > MAX_LITERAL else ""))
    if value is None or isinstance(value, (bool, int, float)):
        return repr(value)[:MAX_LITERAL]
    return "Any"
