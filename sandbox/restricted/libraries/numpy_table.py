"""numpy's doors: raw memory (as_strided, ndarray.ctypes, arrays laid over buffers),
unpickling (load(allow_pickle=True)), imports by name (add_newdoc, np.info), the caller's
frame (bmat), and the Mersenne Twister's state."""

from __future__ import annotations

import functools
import sys

from sandbox.restricted import stand_ins
from sandbox.restricted.libraries.table import TEST_RUNNER_ADVICE, Table

# Classes and functions that lay an array over memory (a buffer, a file) with a dtype the
# caller names. Object pointers read from bytes the snippet wrote are a forged object, and
# through a forged bytearray all of the interpreter's memory; numbers laid over an object
# array's pointers forge them the other way round. The snippet gets stand-ins that refuse
# both (the classes: a subclass that isinstance and class statements treat as the real
# one; the functions: a wrapper).
_RAW_OBJECTS_ADVICE = ("Python objects and raw bytes never share memory in the sandbox (object pointers read from "
                       "bytes, or bytes laid over an object array, forge references): build object arrays from "
                       "values, e.g. numpy.array([...], dtype=object), and read buffers with numeric dtypes")


def mixes_objects_and_bytes(value) -> bool:
    """An array whose items and the memory under them disagree about Python objects:
    object pointers over memory numpy did not fill with objects (bytes, a file, a numeric
    array), or numbers over an object array's pointers."""
    numpy = sys.modules.get("numpy")
    if numpy is None or not isinstance(value, numpy.ndarray):
        return False
    # (read through ndarray's own descriptors: never a subclass's idea of its dtype or base)
    dtype_of, base_of = vars(numpy.ndarray)["dtype"].__get__, vars(numpy.ndarray)["base"].__get__
    objects = dtype_of(value).hasobject
    memory = value
    while True:
        if isinstance(memory, memoryview):
            memory = memory.obj
        elif isinstance(memory, numpy.ndarray):
            if dtype_of(memory).hasobject != objects:
                return True
            if base_of(memory) is None:
                return False  # it owns its memory: numpy put there what its dtype says
            memory = base_of(memory)
        else:
            return objects  # bytes, a bytearray, a memory map: numbers only


def holds_objects(value) -> bool:
    """An object array, or a memoryview of one: its buffer is its object pointers."""
    numpy = sys.modules.get("numpy")
    if isinstance(value, memoryview):
        value = value.obj
    return numpy is not None and isinstance(value, numpy.ndarray) and value.dtype.hasobject


def _checked_array_type(real, refuse):
    """The snippet's `real` (numpy.ndarray, ...): a stand-in that refuses such arrays."""
    def check_made(made):
        if mixes_objects_and_bytes(made):
            raise refuse(f"{real.__module__}.{real.__name__}(): {_RAW_OBJECTS_ADVICE}")
    return stand_ins.stand_in(real, check_made=check_made)


def _checked_array_function(function, refuse):
    @functools.wraps(function)
    def checked(*args, **kwargs):
        made = function(*args, **kwargs)
        if mixes_objects_and_bytes(made):
            raise refuse(f"{function.__module__}.{function.__name__}(): {_RAW_OBJECTS_ADVICE}")
        return made
    return checked


def _no_object_buffer(args, kwargs):
    if any(holds_objects(value) for value in (*args, *kwargs.values())):
        return ("an object array's buffer is its object pointers, and writing bytes into it forges references: "
                "use a bytearray, then build arrays from it with a numeric dtype")
    return None


def _no_unchecked_resize(args, kwargs):
    if kwargs.get("refcheck", True) is not True:
        return ("resize(refcheck=False) frees memory that other views of the array still use: use "
                "numpy.resize(a, shape), which copies, or a.reshape(shape)")
    return None


def _state_position_in_range(generator, call):
    """RandomState.set_state takes any position in the Mersenne Twister's key: MT19937 then
    reads the memory past the key's 624 words (and hands it out as random numbers). Read
    back from the generator after the call (so no argument can answer one way to a check
    and another to numpy), and put back as it was when out of range."""
    before = generator.get_state(legacy=False)
    call()
    state = generator.get_state(legacy=False)
    position = state.get("state", {}).get("pos", 0) if state.get("bit_generator") == "MT19937" else 0
    if 0 <= position <= 624:
        return None
    type(generator).set_state(generator, before)
    return (f"the Mersenne Twister's position is 0 to 624, not {position}: pass a state get_state() "
            "gave, or seed the generator (np.random.seed(n), np.random.default_rng(n))")


_FRAME_NAMES = ("looks the names in the string up in the calling frame, which is the sandbox's own: pass the "
                "matrices themselves, np.bmat([[A, B], [C, D]]) or np.block([[A, B], [C, D]])")


def _no_frame_lookup(obj=None, ldict=None, gdict=None, *args, **kwargs):
    """numpy.bmat('A, B; C, D') reads A, B... from its caller's frame: called through the
    guards, that is a guard's frame (its locals, its module's globals)."""
    return f"bmat({obj[:40]!r}) {_FRAME_NAMES}" if isinstance(obj, str) and gdict is None else None


def _no_frame_lookup_key(self=None, key=None, *args, **kwargs):
    """np.r_['A, B'] and np.c_[...] hand their caller's frame to bmat."""
    return f"np.r_[{key[:40]!r}] {_FRAME_NAMES}" if isinstance(key, str) else None


_UNPICKLING_ADVICE = "unpickling runs code: save arrays with numpy.save (the default allow_pickle=False reads them)"


def table(policy) -> Table:
    return Table(
        refused_objects={
            "numpy.lib.stride_tricks.as_strided":
                "as_strided reads and writes memory outside the array; use "
                "numpy.lib.stride_tricks.sliding_window_view, which checks its bounds",
            # functions that import any module by name (past the import allow-list)
            **dict.fromkeys(("numpy.lib.add_newdoc", "numpy.lib.add_docstring"),
                            "it imports a module by name and writes docstrings onto the library's objects: keep "
                            "notes in your own docstrings and comments"),
        },
        stand_ins={
            **dict.fromkeys(("numpy.ndarray", "numpy.recarray", "numpy.memmap", "numpy.char.chararray",
                             "numpy.ma.mrecords.MaskedRecords"), _checked_array_type),
            **dict.fromkeys(("numpy.frombuffer", "numpy.rec.fromstring", "numpy.rec.fromfile", "numpy.rec.array"),
                            _checked_array_function),
        },
        # (`read` too: ssl.SSLSocket.read(len, buffer) and SSLObject's fill a buffer they are given;
        # and struct's pack_into, module function and method, for an operator who allows struct:
        # none may write into an object array's buffer)
        guarded_methods={
            **{name: (None, _no_object_buffer)
               for name in ("readinto", "readinto1", "recv_into", "recvfrom_into", "recvmsg_into", "read",
                            "pack_into")},
            "resize": (("numpy.ndarray",), _no_unchecked_resize),
            "set_state": (("numpy.random.RandomState",), None, _state_position_in_range),
        },
        final_classes={
            "numpy.random.BitGenerator": "a bit generator's compiled code trusts the state its subclass's state "
                                         "setter takes (the Mersenne Twister's position): use numpy's generators "
                                         "as they are",
        },
        refused_keywords={
            "numpy.load": ({"allow_pickle": 2}, _UNPICKLING_ADVICE),
            "numpy.lib.format.read_array": ({"allow_pickle": 1}, _UNPICKLING_ADVICE),
        },
        refused_attributes={
            "data": (("numpy.ndarray",), "an object array's memory is its object pointers, and writing into it "
                                         "forges references: use its items (a[i], a.tolist())",
                     lambda array: array.dtype.hasobject),
            "ctypes": (("numpy.ndarray", "numpy.generic"), "ndarray.ctypes hands out raw memory addresses; "
                                                          "use the array's own methods"),
        },
        checked_calls={
            # np.info('name') looks the name up in the module named by toplevel, imported by name
            "numpy.lib._utils_impl.info":
                lambda object=None, maxwidth=76, output=None, toplevel="numpy", *args, **kwargs: (
                    None if type(toplevel) is str and toplevel == "numpy" else
                    "np.info looks names up in numpy only here (toplevel= would import any module by name)"),
            "numpy.matrixlib.defmatrix.bmat": _no_frame_lookup,
            "numpy.lib._index_tricks_impl.AxisConcatenator.__getitem__": _no_frame_lookup_key,
            "numpy._pytesttester.PytestTester.__call__": lambda *args, **kwargs: TEST_RUNNER_ADVICE,
        },
    )
