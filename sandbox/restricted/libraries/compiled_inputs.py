"""The numbers that the data-science libraries' compiled code trusts, checked on the way in
while a restricted snippet runs. Two kinds:

* WRAPPED_WHILE_RUNNING (the policy engine applies it while a snippet runs): each check reads its argument once
  into a private float64 array (or plain floats), checks those numbers, and hands them, not
  the snippet's object, to the library: nothing of the snippet's can change between the
  check and the use. A value that cannot be read as numbers is refused too, rather than
  passed on to be read a second time.
* CHECKED_BEFORE_THE_CALL (checked calls, as every table's): arguments of exact
  types (numpy's own int64 arrays for a rolling window's bounds, plain numbers for a
  spline), refused when out of range and otherwise passed on as they are.
"""

from __future__ import annotations

import functools
import inspect
import sys

from sandbox.restricted.libraries.table import Table

# ndimage turns coordinates into C integers: from 2**63 on they wrap (shift(a, 1e20) wrote
# the heap, map_coordinates read it). Far below, and far beyond any array.
MAX_COORDINATE = 2.0 ** 52
MAX_TRANSFORM_ENTRY = 2.0 ** 24     # x an output of at most 2**31 per axis, 32 axes: < 2**61
# Agg sizes a canvas region's buffer as width * height * 4 bytes in a C int
MAX_REGION_PIXELS = 1 << 28

# A library function's signature, worked out once: the wrappers are made again for every
# restricted run, and inspect.signature was most of that run's set-up in the data-science
# profile (bench/README.md). Keyed by the function itself, which the snippet cannot change.
signature_of = functools.cache(inspect.signature)


def _numbers(value, refuse, what: str):
    numpy = sys.modules["numpy"]
    try:
        return numpy.array(value, dtype=numpy.float64)
    except (TypeError, ValueError, OverflowError):
        raise refuse(f"{what} must be numbers (a numpy array or a list of numbers)") from None


def _with_checked_arguments(checks: dict):
    """A WRAPPED_WHILE_RUNNING factory: the arguments named in `checks` (parameter name ->
    check(value, refuse, arguments) returning what the function gets instead) are checked
    when the function is called, by whoever calls it."""
    def make(original, refuse):
        signature = signature_of(original)

        @functools.wraps(original)
        def checked(*args, **kwargs):
            try:
                bound = signature.bind(*args, **kwargs)
            except TypeError:
                return original(*args, **kwargs)  # (its own error about the arguments)
            arguments = bound.arguments
            for name, check in checks.items():
                if arguments.get(name) is not None:
                    arguments[name] = check(arguments[name], refuse, arguments)
            return original(*bound.args, **bound.kwargs)
        return checked
    return make


# -- scipy.ndimage: coordinates and the transforms that make them
def _coordinates(value, refuse, arguments):
    numpy = sys.modules["numpy"]
    coordinates = _numbers(value, refuse, "coordinates")
    if not (numpy.isfinite(coordinates).all() and (numpy.abs(coordinates) <= MAX_COORDINATE).all()):
        raise refuse(f"coordinates must be finite and within +-2**52 (scipy.ndimage turns them into C integers): "
                     "mask or clip the points outside the image, e.g. np.clip(coords, 0, size - 1)")
    return coordinates


def _transform_entries(value, refuse, arguments):
    numpy = sys.modules["numpy"]
    entries = _numbers(value, refuse, "the transform")
    if not (numpy.isfinite(entries).all() and (numpy.abs(entries) <= MAX_TRANSFORM_ENTRY).all()):
        raise refuse("a transform's matrix must be finite, with entries within +-2**24 (they scale the output's "
                     "coordinates, which scipy.ndimage turns into C integers): pass the affine map you mean")
    return entries


def _checked_mapping(mapping, refuse, arguments):
    """geometric_transform calls the mapping for each output point and reads the
    coordinates it returns: as plain floats, checked."""
    @functools.wraps(mapping)
    def checked(*args, **kwargs):
        return tuple(float(c) for c in _coordinates(mapping(*args, **kwargs), refuse, arguments).ravel())
    return checked


# -- scipy.cluster.hierarchy: a linkage matrix's row i joins two of the clusters numbered
# below n + 1 + i (the n + 1 observations, then the clusters the rows before it made). Its
# compiled code indexes with those numbers unchecked, and scipy's own check skips a
# matrix of one row (a far number read and wrote the heap).
def _linkage_rows(z, refuse, first: int):
    numpy = sys.modules["numpy"]
    rows = z.shape[0]
    numbers = z[:, :2] - first
    below = numpy.arange(rows + 1, 2 * rows + 1, dtype=numpy.float64)[:, None]
    if not (numpy.isfinite(z).all() and (numbers >= 0).all() and (numbers < below).all()):
        raise refuse(f"a linkage matrix's row i joins two clusters numbered {first} to n + i{' + 1' if first else ''} "
                     "(n observations, then the clusters of the rows before it): pass what linkage() returned")


def _linkage(value, refuse, arguments):
    z = _numbers(value, refuse, "the linkage matrix")
    if z.ndim == 2 and z.shape[1] == 4 and z.shape[0]:
        _linkage_rows(z, refuse, 0)
        if not ((z[:, 3] >= 0).all() and (z[:, 3] <= z.shape[0] + 1).all()):
            raise refuse("a linkage matrix's fourth column counts the observations in each cluster (1 to n): "
                         "pass what linkage() returned")
    return z  # (of another shape: scipy's own error)


def _mlab_linkage(value, refuse, arguments):
    z = _numbers(value, refuse, "the MATLAB linkage matrix")
    if z.ndim == 2 and z.shape[1] == 3 and z.shape[0]:
        _linkage_rows(z, refuse, 1)
    return z


def _linkage_sized(what: str, columns: int | None):
    """R (4 columns) and monocrit (one value) have a row for each row of Z."""
    def check(value, refuse, arguments):
        numbers = _numbers(value, refuse, what)
        z = arguments.get("Z")
        rows = z.shape[0] if getattr(z, "ndim", 0) == 2 else None
        expected = (rows, columns) if columns else (rows,)
        if rows is not None and numbers.shape != expected:
            raise refuse(f"{what} has a row for each row of the linkage matrix: its shape must be {expected}, "
                         f"not {numbers.shape}")
        return numbers
    return check


def _code_book(value, refuse, arguments):
    book = _numbers(value, refuse, "the code book")
    if book.size == 0:
        raise refuse("vq() needs a code book of at least one code (it returned uninitialised memory for an empty "
                     "one): pass the centroids kmeans() returned")
    return book


def _linkage_functions() -> dict:
    names = ("cophenet", "correspond", "cut_tree", "dendrogram", "fcluster", "inconsistent", "is_monotonic",
             "leaders", "leaves_list", "maxRstat", "maxdists", "maxinconsts", "num_obs_linkage",
             "optimal_leaf_ordering", "to_mlab_linkage", "to_tree")
    checks = {"Z": _linkage, "R": _linkage_sized("the inconsistency matrix R", 4),
              "monocrit": _linkage_sized("monocrit", None)}
    return {f"scipy.cluster.hierarchy.{name}": _with_checked_arguments(checks) for name in names}


# -- scipy.linalg.lu_solve((lu, piv), b) hands piv to LAPACK's getrs, which swaps the rows
# it names. Read from private copies: a check on the snippet's own arrays asked their min()
# and max(), which an ndarray subclass of the snippet's answers as it likes (a far pivot
# then wrote past b).
def _lu_and_pivots(value, refuse, arguments):
    numpy = sys.modules["numpy"]
    try:
        lu, piv = value
        lu, piv = numpy.array(lu), numpy.array(piv, dtype=numpy.int32)
    except (TypeError, ValueError, OverflowError):
        raise refuse("lu_and_piv must be the pair (lu, piv) that scipy.linalg.lu_factor returns") from None
    rows = lu.shape[0] if lu.ndim == 2 else 0
    if piv.ndim != 1 or (piv.size and not (0 <= piv.min() and piv.max() < rows)):
        raise refuse(f"pivot indices must be rows of the matrix (0 to {rows - 1}): pass lu_factor's pivots "
                     "as they are")
    return lu, piv


# -- matplotlib's Agg renderer: copy_from_bbox, bound to each renderer by _update_methods
def _checked_region_copy(copy, refuse):
    """The compiled renderer's copy_from_bbox sized the region's buffer as width * height * 4
    in an int: a bbox of 128 x 8388609 pixels got a 512-byte buffer that the copy wrote
    51 KB past."""
    def copy_from_bbox(bbox):
        numpy = sys.modules["numpy"]
        points = _numbers(bbox, refuse, "the bbox")  # (a Bbox, its points, or x0, y0, x1, y1)
        if points.size != 4:
            raise refuse("copy_from_bbox takes a bbox: fig.bbox, ax.bbox or (x0, y0, x1, y1)")
        (x0, y0), (x1, y1) = points.reshape(2, 2)
        if not (numpy.isfinite(points).all() and x0 <= x1 and y0 <= y1
                and (x1 - x0 + 2) * (y1 - y0 + 2) <= MAX_REGION_PIXELS):
            raise refuse("copy_from_bbox takes a finite bbox with x0 <= x1 and y0 <= y1, of at most "
                         f"{MAX_REGION_PIXELS} pixels: pass the figure's or an axes' own, fig.bbox or ax.bbox")
        return copy(points.reshape(2, 2))
    return copy_from_bbox


def _region_copies_checked(update_methods, refuse):
    @functools.wraps(update_methods)
    def checked(self, *args, **kwargs):
        update_methods(self, *args, **kwargs)
        self.copy_from_bbox = _checked_region_copy(self.copy_from_bbox, refuse)
    return checked


# qualified name of a function or method -> what replaces it while a restricted snippet
# runs, made from the original and the run's refusal
WRAPPED_WHILE_RUNNING = {
    "matplotlib.backends.backend_agg.RendererAgg._update_methods": _region_copies_checked,
    "scipy.ndimage.map_coordinates": _with_checked_arguments({"coordinates": _coordinates}),
    "scipy.ndimage.shift": _with_checked_arguments({"shift": _coordinates}),
    "scipy.ndimage.affine_transform": _with_checked_arguments({"matrix": _transform_entries,
                                                               "offset": _coordinates}),
    "scipy.ndimage.geometric_transform": _with_checked_arguments({"mapping": _checked_mapping}),
    **_linkage_functions(),
    "scipy.cluster.hierarchy.from_mlab_linkage": _with_checked_arguments({"Z": _mlab_linkage}),
    "scipy.cluster.vq.vq": _with_checked_arguments({"code_book": _code_book}),
    "scipy.linalg._decomp_lu.lu_solve": _with_checked_arguments({"lu_and_piv": _lu_and_pivots}),
}



# -- checked before the call: exact types only (no method of the snippet's answers the
# check), refused when out of range, then passed on as they are
def _plain_numbers(value):
    """`value` as fitpack's C code sees it (an exact ndarray, or a list or tuple of plain
    numbers: nothing of the snippet's runs while it is read), or None."""
    numpy = sys.modules.get("numpy")
    if numpy is not None and type(value) is numpy.ndarray and value.dtype.kind in "iuf":
        return value
    if type(value) in (list, tuple) and all(isinstance(item, (int, float)) and type(item).__module__ in
                                            ("builtins", "numpy") for item in value):
        return value  # (numbers, Python's or numpy's scalars: no subclass of the snippet's)
    return None


def _coefficients_for_knots(per=None, t=None, c=None, k=None, *args, **kwargs):
    """scipy.interpolate.insert(x, (t, c, k)) reaches fitpack's insert, which reads as many
    coefficients as the knots say (len(t) - k - 1): past a shorter c, the heap."""
    t, c = _plain_numbers(t), _plain_numbers(c)
    if t is None or c is None or type(k).__module__ not in ("builtins", "numpy") or not hasattr(k, "__index__"):
        return "give the spline as (t, c, k): numpy float arrays (or lists of numbers) and an int k"
    k = k.__index__()
    if len(c) < len(t) - k - 1:
        return f"the spline has {len(t)} knots and degree {k}, so it needs {len(t) - k - 1} coefficients, not {len(c)}"
    return None


def _window_bounds_in_range(window=None, start=None, end=None, num_vals=None, *args, **kwargs):
    """A rolling window's bounds, from get_window_bounds() of a BaseIndexer (one of the
    snippet's, pandas' custom windows): pandas checks their lengths only, and its compiled
    aggregations read values[start[i]:end[i]] unchecked, so a bound past the data read the
    heap (rolling(...).max() returned it)."""
    numpy = sys.modules.get("numpy")
    for bounds in (start, end):
        if numpy is None or type(bounds) is not numpy.ndarray or bounds.dtype != numpy.int64 or bounds.ndim != 1:
            return ("get_window_bounds() must return two 1-D numpy int64 arrays (start, end), e.g. "
                    "np.arange(num_values, dtype=np.int64)")
        if bounds.size and not (0 <= bounds.min() and bounds.max() <= num_vals):
            return (f"get_window_bounds() returned a bound outside the data: each start and end must be a position "
                    f"from 0 to num_values ({num_vals}); clip them, e.g. np.clip(end, 0, num_values)")
    return None


# qualified name -> a check of the call's arguments returning why it is refused, or None
# (the policy engine applies them while a restricted snippet runs)
CHECKED_BEFORE_THE_CALL = {
    "scipy.interpolate._fitpack._insert": _coefficients_for_knots,
    "pandas.core.window.rolling.BaseWindow._check_window_bounds": _window_bounds_in_range,
    # (None reaches the compiled method as a null glyph, which it reads: the child crashed)
    "matplotlib.ft2font.FT2Font.draw_glyph_to_bitmap":
        lambda self=None, image=None, x=None, y=None, glyph=None, *args, **kwargs:
            None if glyph is not None else "it draws a glyph: pass font.load_char(code) or font.load_glyph(index)",
}


def table(policy) -> Table:
    """This module's entries, as a table of the policy engine (policy.py)."""
    return Table(checked_calls=CHECKED_BEFORE_THE_CALL, wrapped_while_running=WRAPPED_WHILE_RUNNING)
