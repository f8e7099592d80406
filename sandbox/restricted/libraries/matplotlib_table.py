"""matplotlib's doors: backends and figure hooks it imports by name, format strings it
formats with the snippet's values, a font image that wrote past its buffer, and the index
arrays its triangulation hands to compiled code."""

from __future__ import annotations

import sys

from sandbox.restricted import stand_ins
from sandbox.restricted.libraries.format_fields import FORMAT_FIELDS_ADVICE, plain_fields, plain_format_fields
from sandbox.restricted.libraries.table import Table

_AGG_ONLY = ("the sandbox draws with matplotlib's Agg backend, and figures come back as images (plt.show() and "
             "savefig() work as they are)")
# matplotlib's triangulation hands its `triangles`, `neighbors` and `edges` to its C++
# trifinder and contourer: a far position written into one read the heap
_MPL_TRIANGULATION = ("matplotlib.tri._triangulation.Triangulation",)


def _agg_only(refuse):
    """matplotlib.use / pyplot.switch_backend: Agg is already set, so asking for it
    is a no-op (scripts written for headless runs do); any other backend is refused."""
    def use(backend, *args, **kwargs):
        if isinstance(backend, str) and backend.lower() == "agg":
            return None
        raise refuse(f"the matplotlib backend {backend!r} is not available: {_AGG_ONLY}")
    return use


def _checked_format_type(real, refuse):
    """A library class that runs str.format on a format string the snippet gives, with an
    argument it may choose: its stand-in takes format strings whose fields are names or
    positions only."""
    def check(fmt):
        if not plain_format_fields(fmt):
            raise refuse(f"{real.__module__}.{real.__name__}: {FORMAT_FIELDS_ADVICE}")

    def check_arguments(args, kwargs):
        check(args[0] if args else kwargs.get("fmt"))
    stand_in = stand_ins.stand_in(real, check_arguments=check_arguments)

    def __call__(self, *args, **kwargs):
        # (a subclass of the snippet's may set self.fmt later, or answer it anew on each read:
        # read once, checked, and formatted by a plain formatter of the real class)
        fmt = self.fmt
        check(fmt)
        return real.__call__(real(str.__str__(fmt) if isinstance(fmt, str) else fmt), *args, **kwargs)
    stand_in.__call__ = __call__
    return stand_in


def _agg_backend_only(registry, backend, *args, **kwargs):
    """matplotlib imports a backend's module by name (rcParams['backend'] can be
    'module://anything', and a plain dict.update sets it past rcParams' checks)."""
    if type(backend) is str and backend.lower() == "agg":
        return None
    return f"{_AGG_ONLY}; leave rcParams['backend'] alone"


def _no_figure_hooks(*args, **kwargs):
    """rcParams['figure.hooks'] names functions ("module:name") that plt.figure imports and calls."""
    matplotlib = sys.modules["matplotlib"]
    hooks = dict.get(matplotlib.rcParams, "figure.hooks")
    if hooks is None or (type(hooks) in (list, tuple) and not hooks):   # (a falsy list of the snippet's
        return None                                                    # own could still iterate)
    return "rcParams['figure.hooks'] imports and calls functions by name: call your function on the figure yourself"


def table(policy) -> Table:
    return Table(
        refused_objects={
            "matplotlib.ft2font.FT2Image": "FT2Image (deprecated) took a negative size and then wrote past its "
                                           "buffer: draw glyphs into a 2D uint8 array, "
                                           "np.zeros((height, width), np.uint8)",
            "matplotlib.backend_bases.register_backend":
                "it makes savefig import a module by name; savefig writes png, pdf, svg, ps and eps as it is",
        },
        replaced_objects={
            "matplotlib.use": _agg_only,
            "matplotlib.pyplot.switch_backend": _agg_only,
        },
        stand_ins={"matplotlib.ticker.StrMethodFormatter": _checked_format_type},
        copied_attributes={"neighbors": _MPL_TRIANGULATION,
                           **dict.fromkeys(("triangles", "edges", "mask"), _MPL_TRIANGULATION)},
        # (its renderer's methods are wrapped: compiled_inputs; pyplot loads it at the first figure)
        imported_with={"matplotlib": ("matplotlib.backends.backend_agg",)},
        # (the library builds formatters and loads backends from the options the snippet set:
        # set_major_formatter("{x}"), bar_label(fmt=...), colorbar(format=...), rcParams)
        checked_calls={
            "matplotlib.ticker.StrMethodFormatter.__call__": plain_fields(lambda self, *args, **kwargs: self.fmt),
            "matplotlib.cbook._auto_format_str": plain_fields(lambda fmt, *args, **kwargs: fmt),
            "matplotlib.backends.registry.BackendRegistry.load_backend_module": _agg_backend_only,
            "matplotlib.pyplot.figure": _no_figure_hooks,
        },
    )
