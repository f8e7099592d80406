"""The RestrictedPython wall at run time: the guards one execution's compiled snippet calls
(context.ExecutionContext), and the builtins and globals it runs with. May import the rest
of restricted/ (imports, module_policy, compiler, libraries/, subsets/), never the layers
above it."""

from sandbox.restricted.guards.context import ExecutionContext
from sandbox.restricted.guards.snippet_builtins import WITHHELD_BUILTINS, restricted_globals

__all__ = ["ExecutionContext", "WITHHELD_BUILTINS", "restricted_globals"]
