"""scipy's doors: raw function pointers and BLAS/LAPACK calls, index arrays its compiled
routines trust (sparse matrices, k-d trees, triangulations, SuperLU), code it generates
from a distribution's shape names, and the private methods its documented subclasses define."""

from __future__ import annotations

from sandbox.restricted.libraries.table import TEST_RUNNER_ADVICE, Table

# scipy.sparse's compiled routines trust a matrix's index arrays: an index past the shape
# (given to the constructor, written into m.indices later, or served by a subclass's
# property) writes out of bounds. While a restricted snippet runs, the constructors
# check the indices in full (forced_keywords), the snippet gets the index arrays as
# read-only copies, and it cannot subclass the matrix classes.
_SPARSE_INDEXED = ("scipy.sparse._compressed._cs_matrix", "scipy.sparse._coo._coo_base")
# The same for the index arrays that other objects hand out as writable views of their
# own, and that their compiled code reads positions from later: a k-d tree's queries read
# its points at `indices`, a SuperLU factorisation's solve() its rows at `perm_r` and
# `perm_c`; a Delaunay triangulation's find_simplex (and the interpolators built on one)
# walk its `simplices` and `neighbors`. A far position written into one read the heap.
_KDTREE_INDEXED = ("scipy.spatial._ckdtree.cKDTree", "scipy.spatial._ckdtree.cKDTreeNode")
_DELAUNAY = ("scipy.spatial._qhull.Delaunay",)

# Library classes whose documented way to be extended is a subclass that defines some of
# their private methods (scipy.stats: "subclass rv_continuous and define _pdf or _cdf"):
# those names, as methods of the snippet's (never values, properties or slots), may be
# defined in a class of the snippet's. The library calls them and uses what they return
# as numbers, as it does a public method's.
_DISTRIBUTION_HOOKS = ("_cdf", "_logcdf", "_sf", "_logsf", "_ppf", "_isf", "_rvs", "_stats", "_munp",
                       "_entropy", "_argcheck", "_get_support", "_shape_info")


def table(policy) -> Table:
    return Table(
        refused_objects={
            "scipy.LowLevelCallable": "a LowLevelCallable calls raw function pointers; pass a Python function",
            "scipy.linalg.get_lapack_funcs": "raw LAPACK calls trust index arrays; use scipy.linalg's functions "
                                             "(solve, lu_factor, lu_solve, inv, eig...)",
            "scipy.linalg.get_blas_funcs": "raw BLAS calls; use scipy.linalg's functions or numpy (a @ b)",
        },
        # compiled classes whose state is in the instance's __dict__: their code names no
        # attribute the state rule (state_names) can see, and reads simplices it is given
        final_classes=dict.fromkeys(
            ("scipy.spatial._qhull._QhullUser", "scipy.interpolate._interpnd.NDInterpolatorBase"),
            "its compiled code reads positions from the state it keeps (a triangulation's simplices), "
            "which a subclass could set: use it as it is, and keep your own logic in functions or a class "
            "that holds one"),
        # scipy.sparse's constructors check a matrix's index arrays only in part (above)
        forced_keywords=dict.fromkeys(("scipy.sparse._compressed._cs_matrix.check_format",
                                       "scipy.sparse._bsr._bsr_base.check_format"), {"full_check": True}),
        not_subclassed={name: "scipy.sparse's routines trust a matrix's index arrays, which a subclass could "
                              "serve: use the matrix classes as they are" for name in _SPARSE_INDEXED},
        copied_attributes={**dict.fromkeys(("indptr", "row", "col", "coords"), _SPARSE_INDEXED),
                           "indices": _SPARSE_INDEXED + _KDTREE_INDEXED,
                           **dict.fromkeys(("simplices", "vertex_to_simplex", "vertex_neighbor_vertices",
                                            "convex_hull", "coplanar", "neighbors"), _DELAUNAY),
                           # (a SuperLU factorisation's row and column permutations, which solve() applies)
                           **dict.fromkeys(("perm_r", "perm_c"), ("scipy.sparse.linalg._dsolve._superlu.SuperLU",))},
        override_hooks={
            "scipy.stats.rv_continuous": frozenset({"_pdf", "_logpdf", "_fitstart", *_DISTRIBUTION_HOOKS}),
            "scipy.stats.rv_discrete": frozenset({"_pmf", "_logpmf", *_DISTRIBUTION_HOOKS}),
            # ("implement _matvec, and _adjoint or _rmatvec": what a matrix-free operator defines)
            "scipy.sparse.linalg.LinearOperator": frozenset({"_matvec", "_rmatvec", "_matmat", "_rmatmat",
                                                             "_adjoint", "_transpose"}),
        },
        refused_attributes={
            "construct_fast": (("scipy.interpolate.BSpline", "scipy.interpolate.PPoly", "scipy.interpolate.BPoly",
                                "scipy.interpolate.NdPPoly"),
                               "construct_fast skips the checks that the compiled evaluation relies on (a c shorter "
                               "than t says is read past its end): call the class itself, e.g. BSpline(t, c, k)"),
        },
        checked_calls={
            # scipy pastes a distribution's shape names into the source of the argument parsers it
            # exec()s with the real builtins, after checking them with the value's own replace() and
            # split(): a str subclass answered the check with a name and the paste with code
            "scipy.stats._distn_infrastructure.rv_generic._construct_argparser": lambda self, *args, **kwargs: (
                None if getattr(self, "shapes", None) is None or type(self.shapes) is str else
                "a distribution's shapes are a plain str of parameter names, e.g. shapes='a, b' (scipy pastes "
                "them into code it runs)"),
            # (scipy.test, scipy.stats.test...)
            "scipy._lib._testutils.PytestTester.__call__": lambda *args, **kwargs: TEST_RUNNER_ADVICE,
        },
    )
