"""ExecutionContext: what one execution's guards share (the allow-list, the classes the
snippet created, the security events, the module policy it holds) and the guards
themselves, each a function of the context in the module that says what it guards."""

from __future__ import annotations

import dataclasses
import functools
import operator
import string

from sandbox.restricted import safe_format
from sandbox.restricted import snippet_files
from sandbox.restricted.base import SandboxAttributeError, SandboxRefused
from sandbox.restricted.guards import classes
from sandbox.restricted.guards import methods
from sandbox.restricted.guards import ownership
from sandbox.restricted.guards import reads
from sandbox.restricted.guards import snippet_builtins
from sandbox.restricted.guards import stdlib_replacements
from sandbox.restricted.guards import vetting
from sandbox.restricted.guards import writes
from sandbox.restricted.imports import Events
from sandbox.restricted.libraries.policy import POLICY as library_policy
from sandbox.restricted.libraries.switched_off import SwitchedOff
from sandbox.restricted.module_policy import ModulePolicy
from sandbox.restricted.subsets import registry


class ExecutionContext:
    """Everything one execution's guards share: the allow-list, the proxies, the classes the
    snippet created, and the security events."""

    def __init__(self, allowed: frozenset[str], events: Events, files: str | None = None):
        self.allowed = allowed
        self.events = events
        self.files = files  # where open() reaches: snippet_files.WORKSPACE_FILES, SCRATCH_FILES or None
        self.subsets: dict[str, registry.ModuleSubset] = {}
        self.classes: set[type] = set()
        self.building: list = []   # the bodies of the snippet's class statements being run, innermost last
        self.open_names: dict = {}   # a snippet class -> its open library bases' private names (or False)
        self.defined: dict[type, set] = {}  # a snippet class -> the names the snippet gave it (check_class)
        self.match_classes: dict[tuple, type] = {}  # (class, keywords, positional) -> match_class's class
        self.globals: dict = {}
        self.replacements = {
            id(operator.attrgetter): self.attrgetter,
            id(operator.methodcaller): self.methodcaller,
            id(operator.setitem): self.setitem,
            id(operator.delitem): self.delitem,
            id(functools.update_wrapper): self.update_wrapper,
            id(functools.wraps): self.wraps,
            id(dataclasses.make_dataclass): self.make_dataclass,
            id(dataclasses.dataclass): self.dataclass,
            id(functools.total_ordering): self.total_ordering,
        }
        # string.Formatter, str.format and format_map look fields up through our guards
        self.Formatter = safe_format.bind(self.getattr, self.getitem)
        self.replacements[id(string.Formatter)] = self.Formatter
        self.type = classes.make_type(self)
        self.switched_off: SwitchedOff | None = None  # set while the snippet runs
        self.policy_pending = False   # an import's policy did not finish applying (import_)
        self.library_methods: dict[int, tuple] = {}  # id(function or property) -> (it, its checked form)
        self.state_names: dict[type, frozenset] = {}  # a snippet class -> library_policy.state_names of its bases
        self.overridden_around: dict[type, frozenset] = {}  # a class -> stand_ins.overridden_around(it)
        # what modules hand out: the import hook, module attributes, the vetting of values
        self.modules = ModulePolicy(self)
        self.permits = self.modules.permits
        self.import_ = self.modules.import_
        self.import_star = self.modules.import_star
        self.complete_policy = self.modules.complete_policy
        self.module_attribute = self.modules.module_attribute
        self.vet = self.modules.vet
        self.checked = self.modules.checked
        self.check_container = self.modules.check_container
        self.abc_meta_name = self.modules.abc_meta_name

    # -- events and refusals
    def refuse(self, kind: str, detail: str, exc_type=SandboxAttributeError, **kwargs):
        """Record a security event and return the exception to raise."""
        self.events.add(kind, detail)
        exc = exc_type(detail, **kwargs)
        exc._sandbox_refused = True  # a snippet cannot write "_" attributes: unforgeable
        return exc

    def refuse_call(self, detail: str) -> SandboxRefused:
        return self.refuse("call_blocked", detail, SandboxRefused)

    def open(self, *args, **kwargs):
        """The open builtin, by profile (snippet_files)."""
        if self.files == snippet_files.WORKSPACE_FILES:
            return snippet_files.path_open(self.refuse_call, *args, **kwargs)
        if self.files == snippet_files.SCRATCH_FILES:
            return snippet_files.scratch_open(self.refuse_call, *args, **kwargs)
        return snippet_files.no_open()

    # -- whose object it is (ownership.py)
    owns = ownership.owns
    being_built = ownership.being_built
    snippet_class = ownership.snippet_class
    snippet_side = ownership.snippet_side
    only_snippet_classes = ownership.only_snippet_classes
    open_base_names = ownership.open_base_names
    library_state = ownership.library_state

    # -- attribute reads (reads.py: the table of hooks) and what a class hands out (methods.py)
    getattr = reads.guarded_getattr
    hasattr = reads.guarded_hasattr
    super_attr = methods.super_attr
    mro_method = methods.mro_method
    named_by_allowed_module = methods.named_by_allowed_module
    checked_new = methods.checked_new
    library_method = methods.library_method
    object_method = methods.object_method

    # -- values that arrive without an attribute read (vetting.py)
    getitem = vetting.getitem
    call = vetting.call
    apply = vetting.apply
    getiter = vetting.getiter
    aiter = vetting.aiter
    vet_params = vetting.vet_params
    vet_kwargs = vetting.vet_kwargs
    vet_one = vetting.vet_one
    vet_entered = vetting.vet_entered
    vet_matched = vetting.vet_matched

    # -- attribute and item writes (writes.py)
    write_guard = writes.write_guard
    write_private = writes.write_private
    write_special = writes.write_special
    set_special_method = writes.set_special_method
    setattr = writes.guarded_setattr
    delattr = writes.guarded_delattr
    setitem = writes.setitem
    delitem = writes.delitem

    # -- the snippet's classes (classes.py)
    build_class = classes.build_class
    metaclass = classes.metaclass
    match_class = classes.match_class
    check_class = classes.check_class
    check_state_shadows = classes.check_state_shadows
    check_class_write = classes.check_class_write
    check_override = classes.check_override
    check_namespace = classes.check_namespace

    # -- the standard library's class factories and gadgets (stdlib_replacements.py)
    make_dataclass = stdlib_replacements.make_dataclass
    dataclass = stdlib_replacements.dataclass
    snippet_module_registered = stdlib_replacements.snippet_module_registered
    total_ordering = stdlib_replacements.total_ordering
    check_field_names = stdlib_replacements.check_field_names
    check_enum_names = stdlib_replacements.check_enum_names
    update_wrapper = stdlib_replacements.update_wrapper
    wraps = stdlib_replacements.wraps
    attrgetter = stdlib_replacements.attrgetter
    methodcaller = stdlib_replacements.methodcaller

    # -- builtins that look at objects (snippet_builtins.py)
    vars = snippet_builtins.guarded_vars
    dir = snippet_builtins.guarded_dir
    help = snippet_builtins.guarded_help
