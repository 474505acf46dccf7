"""Atomic operations on array elements for compiled code (numba has none on the CPU): what threads searching one
tree (``mcts:shared_tree=1``) need to take a tree node or a block of edges each, to claim a node's expansion and to
add to the counts that every simulation passes (a plain ``+=`` of a thread stopped between its read and its write
would undo every other thread's additions in between: on a busy machine, hundreds of a root move's visits).

Each is one LLVM instruction (``atomicrmw``, ``cmpxchg``, an atomic load or store, sequentially consistent: a full
barrier on x86 and ARM, so what a thread wrote before it publishes a node is seen by any thread that reads it
after). The public functions check the index (the intrinsics write through a raw pointer: no bounds check, not
even with ``NUMBA_BOUNDSCHECK``)."""

from __future__ import annotations

from numba import njit, types
from numba.core import cgutils
from numba.extending import intrinsic

from blokus.model import numba_cache  # noqa: F401  (before any kernel: where numba caches them)


def _element_pointer(context, builder, array_type, array, index):
    ary = context.make_array(array_type)(context, builder, array)
    return cgutils.get_item_pointer(context, builder, array_type, ary, [index], wraparound=False)


def _integer_vector(array_type) -> bool:
    return isinstance(array_type, types.Array) and array_type.ndim == 1 and isinstance(array_type.dtype, types.Integer)


def _float_vector(array_type) -> bool:
    return isinstance(array_type, types.Array) and array_type.ndim == 1 and isinstance(array_type.dtype, types.Float)


@intrinsic
def _fetch_add(typingctx, array, index, value):
    if not _integer_vector(array):
        return None
    sig = array.dtype(array, types.intp, array.dtype)

    def codegen(context, builder, signature, args):
        ptr = _element_pointer(context, builder, signature.args[0], args[0], args[1])
        return builder.atomic_rmw("add", ptr, args[2], "seq_cst")

    return sig, codegen


@intrinsic
def _float_add(typingctx, array, index, value):
    if not _float_vector(array) or value != array.dtype:
        return None
    sig = types.void(array, types.intp, array.dtype)

    def codegen(context, builder, signature, args):
        ptr = _element_pointer(context, builder, signature.args[0], args[0], args[1])
        builder.atomic_rmw("fadd", ptr, args[2], "monotonic")  # a count: no order with other memory needed
        return context.get_dummy_value()

    return sig, codegen


@intrinsic
def _compare_swap(typingctx, array, index, expected, new):
    if not _integer_vector(array):
        return None
    sig = array.dtype(array, types.intp, array.dtype, array.dtype)

    def codegen(context, builder, signature, args):
        ptr = _element_pointer(context, builder, signature.args[0], args[0], args[1])
        result = builder.cmpxchg(ptr, args[2], args[3], "seq_cst", "seq_cst")
        return builder.extract_value(result, 0)

    return sig, codegen


@intrinsic
def _load(typingctx, array, index):
    if not _integer_vector(array):
        return None
    sig = array.dtype(array, types.intp)

    def codegen(context, builder, signature, args):
        ptr = _element_pointer(context, builder, signature.args[0], args[0], args[1])
        return builder.load_atomic(ptr, "seq_cst", signature.args[0].dtype.bitwidth // 8)

    return sig, codegen


@intrinsic
def _store(typingctx, array, index, value):
    if not _integer_vector(array):
        return None
    sig = types.void(array, types.intp, array.dtype)

    def codegen(context, builder, signature, args):
        ptr = _element_pointer(context, builder, signature.args[0], args[0], args[1])
        builder.store_atomic(args[2], ptr, "seq_cst", signature.args[0].dtype.bitwidth // 8)
        return context.get_dummy_value()

    return sig, codegen


@njit(cache=True)
def _check(array, index):
    if index < 0 or index >= array.shape[0]:
        raise IndexError("atomic access out of bounds")


@njit(cache=True)
def fetch_add(array, index, value):
    """``array[index] += value`` at once; returns the value before."""
    _check(array, index)
    return _fetch_add(array, index, value)


@njit(cache=True)
def add(array, index, value):
    """``array[index] += value`` at once, for an array of floats (``value`` of the array's type)."""
    _check(array, index)
    _float_add(array, index, value)


@njit(cache=True)
def compare_swap(array, index, expected, new):
    """``array[index] = new`` if it holds ``expected``, at once; returns the value before (== ``expected``: done)."""
    _check(array, index)
    return _compare_swap(array, index, expected, new)


@njit(cache=True)
def load(array, index):
    """``array[index]``, read after every write another thread published before."""
    _check(array, index)
    return _load(array, index)


@njit(cache=True)
def store(array, index, value):
    """``array[index] = value``, published with everything this thread wrote before."""
    _check(array, index)
    _store(array, index, value)
