"""Kernels of the live tracer's compiled profile function (`tracevis3d.live.native_hook`
explains the design, the record format and the keys).

No paper formula: a ring of call records written by a ``Py_tracefunc`` and converted to the
live protocol's records with an explicit stack (`kernels.live.stack_events`).  Memory is read
and written through addresses (numba intrinsics over llvmlite ``inttoptr``): the header of a
thread's buffer, the function table, and CPython objects whose fields never change while a
reference is held (a type pointer, ``PyCFunctionObject.m_ml`` and ``m_self``).  Module-level
functions so that numba's on-disk cache serves them (closures are compiled anew per process).
"""
from __future__ import annotations

import numpy as np
from llvmlite import ir
from numba import cfunc, njit, types
from numba.extending import intrinsic

from .native_layout import (ACTIVE, CAP, CF_TYPE, CLOCK_ID, CM_TYPE, DROPPED, FID_SHIFT, FN_CLOCK,
                            FN_DECREF, FN_GETCODE, FN_INCREF, MASK, NF, OBJECT_FLAG, RECS, TAB,
                            TABLE_FIELDS, TS_NSEC, TS_SEC, W, WHAT_BITS)
from .live import stack_events

i64 = ir.IntType(64)
i32 = ir.IntType(32)


@intrinsic
def load(typingctx, addr):
    def codegen(context, builder, sig, args):
        return builder.load(builder.inttoptr(args[0], i64.as_pointer()))
    return types.int64(types.int64), codegen


@intrinsic
def store(typingctx, addr, value):
    def codegen(context, builder, sig, args):
        builder.store(args[1], builder.inttoptr(args[0], i64.as_pointer()))
        return context.get_dummy_value()
    return types.none(types.int64, types.int64), codegen


@intrinsic
def call_ptr_ptr(typingctx, fn, a):  # PyObject *fn(PyObject *)
    def codegen(context, builder, sig, args):
        f = builder.inttoptr(args[0], ir.FunctionType(i64, [i64]).as_pointer())
        return builder.call(f, [args[1]])
    return types.int64(types.int64, types.int64), codegen


@intrinsic
def call_void_ptr(typingctx, fn, a):  # void fn(PyObject *)
    def codegen(context, builder, sig, args):
        f = builder.inttoptr(args[0], ir.FunctionType(ir.VoidType(), [i64]).as_pointer())
        builder.call(f, [args[1]])
        return context.get_dummy_value()
    return types.none(types.int64, types.int64), codegen


@intrinsic
def call_clock(typingctx, fn, clock_id, out):  # int clock_gettime(clockid_t, struct timespec *)
    def codegen(context, builder, sig, args):
        f = builder.inttoptr(args[0], ir.FunctionType(i32, [i32, i64]).as_pointer())
        builder.call(f, [builder.trunc(args[1], i32), args[2]])
        return context.get_dummy_value()
    return types.none(types.int64, types.int64, types.int64), codegen


@njit(inline="always")
def key_of(o, is_code, cfunction_type, cmethod_type):
    """The function key of a live code object or C callable (see the module doc)."""
    if is_code:
        return o, 0
    tp = load(o + 8)
    if tp == cfunction_type or tp == cmethod_type:
        owner = load(o + 24)                # PyCFunctionObject.m_self
        return load(o + 16), (load(owner + 8) if owner != 0 else 0)   # .m_ml, type(self)
    return o, 1


@njit(inline="always")
def hash_slot(a, b, mask):
    return ((a >> 4) * 0x9E3779B1 + b * 0x85EBCA77) & mask


@cfunc(types.int32(types.int64, types.int64, types.int32, types.int64), cache=True)
def profile(obj, frame, what, arg):
    """``Py_tracefunc``: append ``(head, t)`` to the buffer of ``obj`` (a numpy int64
    header; its data pointer is at offset 16 of the array object)."""
    h = load(obj + 16)
    if load(h + 8 * ACTIVE) == 0:
        return 0
    is_code = what == 0 or what == 3
    if not is_code and not (what == 4 or what == 5 or what == 6):
        return 0  # exception, line, opcode: not calls
    w = load(h + 8 * W)
    if w >= load(h + 8 * CAP):
        store(h + 8 * DROPPED, load(h + 8 * DROPPED) + 1)
        return 0
    if is_code:
        o = call_ptr_ptr(load(h + 8 * FN_GETCODE), frame)  # a new reference
    else:
        o = arg
    k1, k2 = key_of(o, is_code, load(h + 8 * CF_TYPE), load(h + 8 * CM_TYPE))
    fid = -1
    if k2 != 1:
        tab = load(h + 8 * TAB)
        mask = load(h + 8 * MASK)
        j = hash_slot(k1, k2, mask)
        while True:
            e = tab + j * (8 * TABLE_FIELDS)
            v = load(e + 16)
            if v < 0:
                break
            if load(e) == k1 and load(e + 8) == k2:
                fid = v
                break
            j = (j + 1) & mask
    if fid >= 0:
        head = (fid << FID_SHIFT) | what
        if is_code:
            call_void_ptr(load(h + 8 * FN_DECREF), o)
    else:  # the record keeps the object (and a reference) until the sender names it
        head = o | OBJECT_FLAG | what
        if not is_code:
            call_void_ptr(load(h + 8 * FN_INCREF), o)
    call_clock(load(h + 8 * FN_CLOCK), load(h + 8 * CLOCK_ID), h + 8 * TS_SEC)
    rec = load(h + 8 * RECS) + w * (8 * NF)
    store(rec, head)
    store(rec + 8, load(h + 8 * TS_SEC) * 1000000000 + load(h + 8 * TS_NSEC))
    store(h + 8 * W, w + 1)
    return 0


@njit(cache=True)
def swap(hdr, spare):
    """The number of records in the thread's current buffer; the writer continues in
    ``spare`` from its start.  Holds the GIL (no ``nogil``): no profile function runs
    meanwhile."""
    n = hdr[W]
    hdr[RECS] = spare.ctypes.data
    hdr[CAP] = spare.shape[0]
    hdr[W] = 0
    return n


@njit(cache=True)
def release(recs, fn_decref):
    """``Py_DecRef`` of the objects the records of unknown functions own."""
    for k in range(recs.shape[0]):
        if recs[k, 0] & OBJECT_FLAG:
            call_void_ptr(fn_decref, recs[k, 0] & ~(OBJECT_FLAG | WHAT_BITS))


@njit(cache=True, nogil=True)
def unknown_keys(recs, cfunction_type, cmethod_type, table):
    """The records that carry an object (functions unknown to the table when they ran):
    their indices, keys, function ids from the table as it is now (-1: still unknown), and
    the positions (among them) of the first record of each distinct unknown key other than
    ``(obj, 1)``.  The objects are alive and the fields read never change, so this runs
    without the GIL."""
    idx = np.flatnonzero(recs[:, 0] & OBJECT_FLAG)
    k1 = np.empty(idx.shape[0], np.int64)
    k2 = np.empty(idx.shape[0], np.int64)
    for m in range(idx.shape[0]):
        head = recs[idx[m], 0]
        what = head & WHAT_BITS
        k1[m], k2[m] = key_of(head & ~(OBJECT_FLAG | WHAT_BITS), what == 0 or what == 3,
                              cfunction_type, cmethod_type)
    fids = lookup(k1, k2, table)
    missing = np.flatnonzero((fids < 0) & (k2 != 1))
    first = missing[first_of_each(k1[missing], k2[missing])]
    return idx, k1, k2, fids, first


@njit(cache=True, nogil=True)
def fill_from_table(k1, k2, fids, table):
    """``fids[m] = table's id of (k1[m], k2[m])`` where ``fids[m] < 0`` and the key is in it."""
    for m in range(fids.shape[0]):
        if fids[m] < 0 and k2[m] != 1:
            fids[m] = lookup(k1[m:m + 1], k2[m:m + 1], table)[0]
    return fids


@njit(cache=True, nogil=True)
def lookup(k1, k2, table):
    """Function ids of the keys in the table (rows key1, key2, fid; linear probe; size a
    power of two, at most half full); -1 where absent."""
    mask = table.shape[0] - 1
    out = np.empty(k1.shape[0], np.int64)
    for i in range(k1.shape[0]):
        j = hash_slot(k1[i], k2[i], mask)
        while True:
            if table[j, 2] < 0 or (table[j, 0] == k1[i] and table[j, 1] == k2[i]):
                out[i] = table[j, 2]
                break
            j = (j + 1) & mask
    return out


@njit(cache=True)
def insert(table, a, b, v):
    mask = table.shape[0] - 1
    j = hash_slot(a, b, mask)
    while table[j, 2] >= 0 and not (table[j, 0] == a and table[j, 1] == b):
        j = (j + 1) & mask
    table[j, 0] = a
    table[j, 1] = b
    table[j, 2] = v


@njit(cache=True, nogil=True)
def first_of_each(k1, k2):
    """Indices of the first occurrence of each distinct key ``(k1, k2)``, in order (a
    scratch table of twice the size, linear probe)."""
    n = k1.shape[0]
    size = 16
    while size < 2 * n:
        size *= 2
    mask = size - 1
    t1 = np.empty(size, np.int64)
    t2 = np.empty(size, np.int64)
    used = np.zeros(size, np.bool_)
    out = np.empty(n, np.int64)
    m = 0
    for i in range(n):
        j = hash_slot(k1[i], k2[i], mask)
        while used[j] and not (t1[j] == k1[i] and t2[j] == k2[i]):
            j = (j + 1) & mask
        if not used[j]:
            used[j] = True
            t1[j] = k1[i]
            t2[j] = k2[i]
            out[m] = i
            m += 1
    return out[:m]


@njit(cache=True, nogil=True)
def convert_batch(recs, unknown_idx, unknown_fid, stack, stack_t, depth, is_c, thread, origin, enter_type,
                  exit_type):
    """Function ids (``head >> 4``, or ``unknown_fid`` at the records ``unknown_idx``),
    then `kernels.live.stack_events`; without the GIL."""
    n = recs.shape[0]
    fids = recs[:, 0] >> FID_SHIFT
    for m in range(unknown_idx.shape[0]):
        fids[unknown_idx[m]] = unknown_fid[m]
    enter = np.empty(n, np.bool_)
    for i in range(n):
        what = recs[i, 0] & WHAT_BITS
        enter[i] = what == 0 or what == 4
    return stack_events(enter, fids, recs[:, 1].copy(), stack, stack_t, depth, is_c, thread, origin,
                        enter_type, exit_type)
