"""An atomic counter for kernels that share work between threads: `fetch_add`.

numba's CPU target has no atomics; this is LLVM's ``atomicrmw add`` (sequentially
consistent) on one int64 element of an array, the primitive behind a work queue that hands
items to whichever thread is free: ``i = fetch_add(next_item, 0, 1)`` gives each item to
exactly one caller, whatever the threads' timing.
"""
from numba import types
from numba.core import cgutils
from numba.extending import intrinsic


@intrinsic
def fetch_add(typingctx, arr, index, value):
    """``arr[index] += value`` in one atomic step; returns ``arr[index]`` before it.  ``arr``: a
    C-contiguous 1-d int64 array; ``index`` and ``value`` integers."""
    if not (isinstance(arr, types.Array) and arr.ndim == 1 and arr.dtype == types.int64 and arr.layout == "C"
            and isinstance(index, types.Integer) and isinstance(value, types.Integer)):
        return None
    sig = types.int64(arr, index, value)

    def codegen(context, builder, signature, args):
        arr_t, index_t, value_t = signature.args
        ary = context.make_array(arr_t)(context, builder, args[0])
        i = context.cast(builder, args[1], index_t, types.intp)
        v = context.cast(builder, args[2], value_t, types.int64)
        ptr = cgutils.get_item_pointer2(context, builder, ary.data, cgutils.unpack_tuple(builder, ary.shape),
                                        cgutils.unpack_tuple(builder, ary.strides), arr_t.layout, [i],
                                        wraparound=False, boundscheck=False)
        return builder.atomic_rmw("add", ptr, v, "seq_cst")
    return sig, codegen
