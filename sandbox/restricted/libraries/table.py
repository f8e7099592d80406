"""The shape of one library's table: what the policy engine (policy.py) refuses, replaces,
checks and switches off for that library. Each table module (numpy_table, pandas_table,
...) returns one; the engine merges them. Keys are qualified names unless a field says
otherwise; an entry whose module is not imported is skipped, so a table never imports its
library."""

from __future__ import annotations

import dataclasses

# advice several tables give: every library ships a test runner
TEST_RUNNER_ADVICE = ("tests do not run in the sandbox: a test runner imports the test files it is given, and the "
                      "conftest.py it finds, as unrestricted Python; check results with plain assert statements")


@dataclasses.dataclass(frozen=True)
class Table:
    # objects the snippet may not have -> what to do instead (checked by object: re-exports too)
    refused_objects: dict = dataclasses.field(default_factory=dict)
    # objects -> a factory of what the snippet gets instead, given the guards' refusal
    replaced_objects: dict = dataclasses.field(default_factory=dict)
    # objects -> a factory of the stand-in the snippet gets, given the real object and the refusal
    stand_ins: dict = dataclasses.field(default_factory=dict)
    # method name -> (type names or None for any, argument check[, check around the call])
    guarded_methods: dict = dataclasses.field(default_factory=dict)
    # classes a class of the snippet's may not derive from -> why
    final_classes: dict = dataclasses.field(default_factory=dict)
    # functions -> keyword values they get while a snippet runs, whoever calls them
    forced_keywords: dict = dataclasses.field(default_factory=dict)
    # classes whose Python subclasses are refused (__init_subclass__) -> why
    not_subclassed: dict = dataclasses.field(default_factory=dict)
    # attribute name -> type names on which the snippet reads it as a read-only copy
    # (merged by name: several libraries' types can share a name)
    copied_attributes: dict = dataclasses.field(default_factory=dict)
    # bases whose package's private names stay the library's -> that package
    open_bases: dict = dataclasses.field(default_factory=dict)
    # functions -> {keyword: position} whose truthy value is refused
    refused_keywords: dict = dataclasses.field(default_factory=dict)
    # classes -> private method names a subclass of the snippet's may define
    override_hooks: dict = dataclasses.field(default_factory=dict)
    # types whose attributes the snippet may set -> why that opens nothing
    writable_types: dict = dataclasses.field(default_factory=dict)
    # types whose every subclass's public attributes the snippet may set -> why
    writable_families: dict = dataclasses.field(default_factory=dict)
    # types -> ({attribute names the snippet may set}, why)
    writable_attributes: dict = dataclasses.field(default_factory=dict)
    # attribute name -> (type names, advice[, only when this holds of the object])
    refused_attributes: dict = dataclasses.field(default_factory=dict)
    # functions (of modules or classes) -> the refusal they become while a snippet runs
    switched_off: dict = dataclasses.field(default_factory=dict)
    # functions that start programs: PermissionError while a snippet runs
    no_programs: tuple = ()
    # functions -> what stands in for them while a snippet runs
    neutral_while_running: dict = dataclasses.field(default_factory=dict)
    # library (top-level name) -> modules it imports lazily, imported with it
    imported_with: dict = dataclasses.field(default_factory=dict)
    # methods that return Python source the library runs -> check(source, args, kwargs): why, or None
    checked_source: dict = dataclasses.field(default_factory=dict)
    # functions or methods -> a check of their arguments: why the call is refused, or None
    checked_calls: dict = dataclasses.field(default_factory=dict)
    # functions -> a factory of their wrapper, given the original and refuse=
    wrapped_while_running: dict = dataclasses.field(default_factory=dict)
    # functions -> (position, keyword) of the file name they write with the real open()
    writes_named_file: dict = dataclasses.field(default_factory=dict)
    # open()-like functions that take a path only while a snippet runs
    by_path_only: tuple = ()


def merged(tables) -> Table:
    """One table of all `tables`: a name two tables claim is a mistake (which one would
    hold?), but for copied_attributes, whose type names add up."""
    fields = {}
    for field in dataclasses.fields(Table):
        if field.type == "tuple":
            fields[field.name] = tuple(item for table in tables for item in getattr(table, field.name))
            continue
        together: dict = {}
        for table in tables:
            for key, value in getattr(table, field.name).items():
                if field.name == "copied_attributes":
                    together[key] = together.get(key, ()) + tuple(value)
                elif key in together:
                    raise ValueError(f"two library tables name {key!r} in {field.name}")
                else:
                    together[key] = value
        fields[field.name] = together
    return Table(**fields)
