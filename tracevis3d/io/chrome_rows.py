"""The scanner's event rows kept column by column, each exactly as long as the rows.

The scanner (`tracevis3d.kernels.jsonscan`) writes rows of 148 bytes (`jsonevent`: int64 ×8,
int32 ×15, float64 ×3).  Kept as they come, 10^7 events are 1.48 GB, twice that while two
halves are joined and more while the rows grow by doubling.  Here the rows are scanned in
chunks of `CHUNK_ROWS` into one reused buffer per scanning thread (`ScanScratch`); after each chunk its columns
are copied out, and a column that holds one value in nearly every row of the file (the blank
``bind_id`` of a file without flows, ``tdur``, the number spans that only slow numbers have,
often the phase, the process, the flags and the args of a file of calls with a few metadata
events) is kept as that value and its exceptions.  A typical call trace
then keeps about 60 of the 148 bytes per event, and nothing is ever joined or doubled.

`EventColumns` is read like the 2-D row arrays it replaces (``ii[rows, jev.I_PID]``,
``ss[:, jev.S_FLAGS]``, ``ii[rows, jev.I_NAME_OFF] = ...``), so the importer's steps are
unchanged; `take` hands a column over (the importer's own copy, no second one) and `drop`
frees one that no step needs any more.

Over 600 lines: one topic, the rows' storage -- the column kinds (sparse, coded in the fewest
bytes), the store the importer indexes like the row arrays, and the chunked scan that fills it
(its parts, the fast path's outputs, interning a block of rows at a time); a split would make
the store's column kinds public to the scan that is their only writer.
"""
from __future__ import annotations

import ctypes
import ctypes.util

import numpy as np

from ..kernels import jsonevent as jev
from ..kernels import jsonrows as jr
from ..kernels import jsonscan as js
from ..kernels import jsonspans as jsp
from ..kernels import sidetables as fs
from ..pages import huge_pages

#: rows per chunk of a parallel scan's part: 2^16 rows are 9.7 MB of scan buffer per thread
CHUNK_ROWS = 1 << 16


def _libc_trim():
    """glibc's ``malloc_trim`` (None elsewhere: macOS, Windows, musl)."""
    try:
        fn = ctypes.CDLL(ctypes.util.find_library("c") or "libc.so.6").malloc_trim
    except (OSError, AttributeError, TypeError):
        return None
    fn.argtypes = [ctypes.c_size_t]
    fn.restype = ctypes.c_int
    return fn


_MALLOC_TRIM = _libc_trim()


#: rows of a load from which what its stages free is given back to the system as they go
#: (`release_free_memory`).  Below it, what malloc holds free (~60-80 MB at 10^6 rows) is taken
#: again by the load's next stages, and pages given back cost a fault each when taken again: a
#: steady load of the 10^6-call sympy trace faulted 32k pages with the trims and 15k without
#: (0.04 s of its 0.57 s, on this VM's expensive faults); at 10^7 rows the trims keep the peak
#: (0.24 GB kept free after the scan)
TRIM_FROM_ROWS = 1 << 22


def release_free_memory(n_rows: int) -> None:
    """Give the memory freed by the joined chunks back to the system, for a load of ``n_rows``
    rows of at least `TRIM_FROM_ROWS`.  The chunks' pieces are small allocations spread over both
    threads' malloc arenas; freed, glibc keeps them (0.24 GB after a 10^7-event scan) unless asked
    (``malloc_trim``); elsewhere this does nothing."""
    if _MALLOC_TRIM is not None and n_rows >= TRIM_FROM_ROWS:
        _MALLOC_TRIM(0)


class _Sparse:
    """A column of ``n`` rows holding ``value`` except at the rows ``at`` (ascending), which
    hold ``vals``: the phases, flags and args of a file whose few metadata events differ from
    its millions of calls, or a column with one value throughout (no exceptions)."""
    __slots__ = ("value", "dtype", "n", "at", "vals")

    def __init__(self, value, dtype, n: int, at=None, vals=None):
        self.value, self.dtype, self.n = value, np.dtype(dtype), int(n)
        self.at = np.zeros(0, np.int64) if at is None else at
        self.vals = np.zeros(0, self.dtype) if vals is None else vals

    @property
    def nbytes(self) -> int:
        return self.at.nbytes + self.vals.nbytes

    def full(self) -> np.ndarray:
        out = np.full(self.n, self.value, self.dtype)
        out[self.at] = self.vals
        return out

    def take(self, rows):
        """Like ``full()[rows]`` for a slice, a boolean mask, an index array or one index,
        without making the whole column."""
        if isinstance(rows, slice):
            if rows == slice(None):
                return self.full()
            lo, hi, step = rows.indices(self.n)
            if step == 1:  # a block of rows: its exceptions found by bisection
                out = np.full(max(hi - lo, 0), self.value, self.dtype)
                a, b = np.searchsorted(self.at, [lo, hi])
                out[self.at[a:b] - lo] = self.vals[a:b]
                return out
            rows = np.arange(lo, hi, step)
        r = np.asarray(rows)
        if r.dtype == bool:
            if r.shape != (self.n,):
                raise IndexError(f"boolean index of shape {r.shape} for {self.n} rows")
            r = np.flatnonzero(r)
        lo, hi = (int(r.min()), int(r.max())) if r.size else (0, 0)
        if r.size and (hi >= self.n or lo < -self.n):
            raise IndexError(f"row index out of range for {self.n} rows")
        if self.at.size and r.size * 8 > self.n * self.dtype.itemsize:  # many rows: cheaper from the whole
            return self.full()[r]
        if lo < 0:
            r = np.where(r < 0, r + self.n, r)
        out = np.full(r.shape, self.value, self.dtype)
        if self.at.size and r.size:
            pos = np.minimum(np.searchsorted(self.at, r), self.at.size - 1)
            hit = self.at[pos] == r
            out[hit] = self.vals[pos[hit]]
        return out[()] if out.ndim == 0 else out

    __getitem__ = take


class _Coded:
    """A column of integers kept as ``base + codes``: ``codes`` in the narrowest dtype that
    holds the range of its values (uint8 or uint16 from the lowest, ``base``; else int32 or the
    column's own dtype with ``base`` 0).  A thread id, a name's or an event's length take 1 or 2
    bytes a row instead of 8 or 4; byte offsets of a file under 2 GiB take 4.  ``lo``, ``hi``:
    the lowest and highest value."""
    __slots__ = ("codes", "base", "lo", "hi")

    def __init__(self, codes: np.ndarray, base: int, lo: int, hi: int):
        self.codes, self.base, self.lo, self.hi = codes, int(base), int(lo), int(hi)

    @property
    def nbytes(self) -> int:
        return self.codes.nbytes

    @property
    def n(self) -> int:
        return self.codes.shape[0]

    def full(self, dtype) -> np.ndarray:
        """The values as ``dtype`` (the codes themselves when they are those already)."""
        if not self.base and self.codes.dtype == dtype:
            return self.codes
        out = self.codes.astype(dtype)
        if self.base:
            out += self.base
        return out

    def take(self, rows, dtype):
        """``full(dtype)[rows]`` without making the whole column."""
        out = self.codes[rows]
        if out.dtype != dtype:
            out = out.astype(dtype)
        return out + self.base if self.base else out


def _code_dtype(lo: int, hi: int, dtype) -> tuple:
    """(dtype of the codes, base) for integers from ``lo`` to ``hi`` of a column of ``dtype``."""
    if hi - lo < 1 << 8:
        return np.dtype(np.uint8), lo
    if hi - lo < 1 << 16:
        return np.dtype(np.uint16), lo
    i32 = np.iinfo(np.int32)
    if i32.min <= lo and hi <= i32.max:
        return np.dtype(np.int32), 0
    return np.dtype(dtype), 0


def _coded(col: np.ndarray) -> _Coded:
    """An integer column's values as a `_Coded` (a copy)."""
    lo, hi = int(col.min()), int(col.max())
    dt, base = _code_dtype(lo, hi, col.dtype)
    codes = np.empty(col.shape[0], dt)
    np.subtract(col, base, out=codes, dtype=np.int64, casting="unsafe")  # exact: in range by construction
    return _Coded(codes, base, lo, hi)


#: rows interned at a time (`interned_spans`, `interned_pairs`): an int64 block is 512 KB, which malloc
#: reuses from block to block (blocks of 2^20 rows, 8 MB each, were fresh pages each time: 3.3k of a
#: first 10^6-event load's faults in the names, 2.1k in the thread keys; now 0.7k and 0.5k)
INTERN_BLOCK = 1 << 16


def interned_pairs(block_of, n: int, seed: int) -> tuple:
    """`jsonspans.intern_pairs` of ``n`` rows given a block at a time: ``block_of(lo, hi)`` gives
    the rows' two int64 columns there (`jsonrows.intern_pairs_block`).  Returns (ids, first row
    of each id)."""
    ids = np.empty(n, np.int32)
    state = jr.new_intern_state(jsp.FIRST_TABLE_SLOTS)
    for lo in range(0, n, INTERN_BLOCK):
        hi = min(n, lo + INTERN_BLOCK)
        a, b = block_of(lo, hi)
        state = jr.intern_pairs_block(a, b, seed, lo, ids[lo:hi], state)
    release_free_memory(n)  # (the blocks' int64 copies: not kept by malloc while the next stage runs)
    return ids, state[4][: int(state[5][jr.CNT_IDS])].copy()


#: rows interned at a time while the file's bytes are given back (`interned_spans`): the bytes of 2^18
#: rows (~34 MB at 10^7 calls) are held at most past what the table still compares
GIVE_BACK_BLOCK = 1 << 18


#: the phases of the v1 flow events, matched by category and id: no name is read (`PartNames`,
#: `chrome._intern_names`)
FLOW_PHASE = np.zeros(256, bool)
FLOW_PHASE[np.frombuffer(b"stf", np.uint8)] = True

#: the cheap hash's budget of work before the first span (`intern_work`)
INTERN_BUDGET0 = 1024


def intern_work(ln, valid) -> int:
    """The work the cheap hash may spend on spans of lengths ``ln`` (those ``valid``) before
    `jsonrows.intern_spans_block` gives up: 2 × (their bytes + their count), as
    `jsonspans.intern_spans` allows."""
    return 2 * (int(ln[valid].sum()) + int(np.count_nonzero(valid)))


def interned_spans(buf, block_of, n: int, seed: int, give_back=None) -> tuple:
    """`jsonspans.intern_spans` of ``n`` rows given a block at a time: ``block_of(lo, hi)`` gives
    the rows' offsets, lengths (int64) and which are valid there (`jsonrows.intern_spans_block`:
    the cheap hash first, the keyed one when it works too hard).  ``give_back``: told of each
    block before (``before(off, valid)``) and after it (``after(hi, state)``: the table so far) and
    asked for the whole buffer again before the keyed pass (``restore()``; `chrome._NameGiveBack`:
    the file's bytes given back while they are interned).  Returns (ids, first row of each id).
    With ``give_back`` and `PARALLEL_INTERN_ROWS` rows or more, the rows' second half is interned
    on a second thread meanwhile (`_interned_in_halves`)."""
    if give_back is not None and n >= PARALLEL_INTERN_ROWS:
        got = _interned_in_halves(buf, block_of, n, seed, give_back)
        if got is not None:
            release_free_memory(n)
            return got
    for full in (False, True):
        ids = np.empty(n, np.int32)
        state = jr.new_intern_state(jsp.FIRST_TABLE_SLOTS)
        budget = INTERN_BUDGET0
        ok = True
        step = INTERN_BLOCK if give_back is None else GIVE_BACK_BLOCK
        for lo in range(0, n, step):
            hi = min(n, lo + step)
            off, ln, valid = block_of(lo, hi)
            if give_back is not None:
                give_back.before(off, valid)
            budget += intern_work(ln, valid)
            ok, state = jr.intern_spans_block(buf, off, ln, valid, seed, full, budget, lo, ids[lo:hi], state)
            if not ok:
                break
            del off, ln, valid
            if give_back is not None:
                give_back.after(hi, state)
        if ok:
            break
        if give_back is not None:
            give_back.restore()
    release_free_memory(n)  # (the blocks' int64 copies: not kept by malloc while the next stage runs)
    return ids, state[4][: int(state[5][jr.CNT_IDS])].copy()


#: rows from which the names interned while the file is given back take two threads (`interned_spans`)
PARALLEL_INTERN_ROWS = 1 << 20


def _intern_rows(buf, block_of, lo: int, hi: int, seed: int, ids, give_back=None):
    """The cheap hash's table of rows [lo, hi) (`jsonrows.intern_spans_block`, a block at a
    time, first rows counted from 0), their ids into ``ids[lo:hi]``; ``give_back`` told of each
    block as `interned_spans` tells it.  Returns the table's state, or None where the hash worked
    too hard."""
    state = jr.new_intern_state(jsp.FIRST_TABLE_SLOTS)
    budget = INTERN_BUDGET0
    step = INTERN_BLOCK if give_back is None else GIVE_BACK_BLOCK
    for a in range(lo, hi, step):
        b = min(hi, a + step)
        off, ln, valid = block_of(a, b)
        if give_back is not None:
            give_back.before(off, valid)
        budget += intern_work(ln, valid)
        ok, state = jr.intern_spans_block(buf, off, ln, valid, seed, False, budget, a, ids[a:b], state)
        if not ok:
            return None
        del off, ln, valid
        if give_back is not None:
            give_back.after(b, state)
    return state


def _interned_in_halves(buf, block_of, n: int, seed: int, give_back):
    """`interned_spans` of ``n`` rows while the file is given back (``give_back``), the rows'
    second half interned on a second thread into a table of its own while this one interns the
    first half and gives its bytes back; then the second table's distinct names are interned into
    the first (numbered in the order the second half first uses them, as one pass over all the rows
    numbers them), the second half's ids renumbered, and the rest of the file given back but the
    new names' first occurrences.  The ids and first rows of one pass, bit for bit.  None when
    either table's cheap hash worked too hard or the second thread failed: the caller interns the
    rows in one pass (its first block finds bytes given back and has them read again)."""
    import threading

    half = n // 2
    ids = np.empty(n, np.int32)
    second: list = [None]

    def work():
        try:
            second[0] = _intern_rows(buf, block_of, half, n, seed, ids)
        except BaseException:  # (MemoryError, ...: the one-pass intern runs instead)
            second[0] = None

    worker = threading.Thread(target=work, name="tracevis3d-names", daemon=True)
    worker.start()
    try:
        first = _intern_rows(buf, block_of, 0, half, seed, ids, give_back)
    finally:
        worker.join()
    other = second[0]
    if first is None or other is None:
        return None
    m = int(other[5][jr.CNT_IDS])
    off, ln = other[2][:m].copy(), other[3][:m].copy()
    every = np.ones(m, bool)
    before = int(first[5][jr.CNT_IDS])
    to_global = np.empty(m + 1, np.int32)
    to_global[m] = -1  # (a row without a name: local id -1, the last entry)
    ok, first = jr.intern_spans_block(buf, off, ln, every, seed, False,
                                      INTERN_BUDGET0 + int(first[5][jr.CNT_WORK]) + intern_work(ln, every), 0,
                                      to_global[:m], first)
    if not ok:
        return None
    nid = int(first[5][jr.CNT_IDS])
    first_rows = first[4][:nid].copy()
    first_rows[before:] = other[4][:m][to_global[:m] >= before]  # (new ids: ascending, in local order)
    for a in range(half, n, INTERN_BLOCK):  # the second half's ids renumbered, a block at a time
        b = min(n, a + INTERN_BLOCK)
        ids[a:b] = to_global[ids[a:b]]
    give_back.after(n, first)  # (the rest given back but the new names' first occurrences)
    return ids, first_rows


def kept_values(values: np.ndarray, rows: np.ndarray) -> _Sparse:
    """``values`` at the ascending ``rows`` only (NaN elsewhere), read like the array."""
    rows = np.asarray(rows, np.int64)
    return _Sparse(np.nan, values.dtype, values.shape[0], rows, values[rows])


class EventColumns:
    """One part of the rows (int64, int32 or float64 columns), column by column.

    ``x[rows, c]`` reads column ``c`` at ``rows`` (a fresh contiguous array, as numpy's fancy
    indexing gives; a slice gives a view of a stored column), ``x[rows, c] = v`` writes it,
    ``x.shape`` is (rows, columns) like the 2-D array's.  A column of ``row_based`` stores each
    row's value minus the row's index (the events' ordinals: one value throughout while every
    event takes a row, a `_Sparse` of no exceptions).  A column of ``rel`` (column -> its base
    column) stores each row's value less the base's where the value is not 0 (`REL_COLUMNS`: a
    name's or category's offset from its event's, a byte instead of 4)."""

    def __init__(self, cols: list, n: int, dtype, row_based=(), rel=None):
        self.cols = cols
        self.n = int(n)
        self.dtype = np.dtype(dtype)
        self.row_based = set(row_based)
        self.rel = dict(rel or {})

    def _derived(self, c: int) -> bool:
        """Whether column ``c`` stores its values less something (`row_based`, ``rel``)."""
        return c in self.row_based or c in self.rel

    @property
    def shape(self):
        return (self.n, len(self.cols))

    def __len__(self):
        return self.n

    def _col(self, c: int):
        col = self.cols[c]
        if col is None:
            raise KeyError(f"event column {c} was dropped")
        return col

    def __getitem__(self, key):
        rows, c = key
        col = self._col(c)
        if c in self.row_based:
            return self._plus_rows(col, rows)
        if c in self.rel:
            return self._plus_base(col, c, rows)
        if isinstance(col, _Sparse):
            return col.take(rows)
        if isinstance(col, _Coded):
            return col.take(rows, self.dtype)
        out = col[rows]
        return out if col.dtype == self.dtype else out.astype(self.dtype)  # a narrowed int64 column

    def _plus_rows(self, col, rows):
        """A `row_based` column's values at ``rows``: what it stores plus the rows' indices."""
        if isinstance(rows, slice):
            idx = np.arange(*rows.indices(self.n))
        else:
            r = np.asarray(rows)
            idx = np.flatnonzero(r) if r.dtype == bool else np.where(r < 0, r + self.n, r)
        stored = col.take(idx) if isinstance(col, _Sparse) else \
            col.take(idx, np.int64) if isinstance(col, _Coded) else col[idx]
        return (np.asarray(stored, np.int64) + idx).astype(self.dtype)[()]

    def _plus_base(self, col, c: int, rows):
        """A ``rel`` column's values at ``rows``: what it stores plus its base column's, where not 0."""
        stored = col.take(rows) if isinstance(col, _Sparse) else \
            col.take(rows, np.int64) if isinstance(col, _Coded) else col[rows]
        stored = np.asarray(stored, np.int64)
        return np.where(stored != 0, stored + np.asarray(self[rows, self.rel[c]], np.int64), 0).astype(self.dtype, copy=False)[()]

    def __setitem__(self, key, value):
        rows, c = key
        col = self._col(c)
        if not isinstance(col, np.ndarray) or col.dtype != self.dtype or self._derived(c):  # (widened first)
            col = self.cols[c] = self._values(c)
            self.row_based.discard(c)
            self.rel.pop(c, None)
        col[rows] = value

    def _whole(self, col) -> np.ndarray:
        """A stored column as a new array of this part's dtype (one already so: itself)."""
        if isinstance(col, _Sparse):
            return col.full()
        if isinstance(col, _Coded):
            return col.full(self.dtype)
        return col if col.dtype == self.dtype else col.astype(self.dtype)

    def _values(self, c: int) -> np.ndarray:
        """Column ``c`` whole (a `row_based` one with its rows' indices added back)."""
        col = self._col(c)
        if c in self.row_based:
            return (self._whole(col).astype(np.int64) + np.arange(self.n)).astype(self.dtype)
        if c in self.rel:
            return self._plus_base(col, c, slice(None))
        return self._whole(col)

    def take(self, c: int) -> np.ndarray:
        """Column ``c`` as its own writable array, no longer kept here."""
        out = self._values(c)
        self.cols[c] = None
        return out

    def any_bits(self, c: int, bits: int) -> bool:
        """Whether any row of column ``c`` has one of ``bits`` (without making it whole)."""
        col = self._col(c)
        if isinstance(col, _Sparse) and not self._derived(c):
            return bool((int(col.value) & bits) and col.n > col.at.size) or bool(np.any(col.vals & bits))
        return bool(np.any(self._values(c) & bits))

    def rows_where_over(self, c: int, limit: int, n: int) -> np.ndarray:
        """A mask of ``n`` rows (rows past these are False): where column ``c`` > ``limit``."""
        col = self._col(c)
        mask = np.zeros(n, bool)
        if isinstance(col, _Sparse) and not col.value > limit and not self._derived(c):
            mask[col.at[col.vals > limit]] = True
        else:
            mask[: self.n] = self._values(c) > limit
        return mask

    def rows_with_bits(self, c: int, bits: int) -> np.ndarray:
        """The rows (ascending, int64) where column ``c`` has one of ``bits`` (without making it
        whole when it is a `_Sparse`)."""
        col = self._col(c)
        if isinstance(col, _Sparse) and not int(col.value) & bits and not self._derived(c):
            return col.at[(col.vals & bits) != 0].astype(np.int64)
        return np.flatnonzero(self._values(c) & bits)

    def rows_over(self, c: int, limit: int) -> np.ndarray:
        """The rows (ascending, int64) where column ``c`` > ``limit`` (without making it whole when
        it is a `_Sparse` whose value is not)."""
        col = self._col(c)
        if isinstance(col, _Sparse) and not col.value > limit and not self._derived(c):
            return col.at[col.vals > limit].astype(np.int64)
        return np.flatnonzero(self._values(c) > limit)

    def as_dtype(self, c: int, dtype) -> np.ndarray:
        """Column ``c`` whole as ``dtype`` (values that fit it: the phases as uint8), made a block
        at a time (no whole copy in this part's dtype)."""
        col = self._col(c)
        if isinstance(col, _Sparse) and not self._derived(c):
            out = np.full(col.n, col.value, dtype)
            out[col.at] = col.vals
            return out
        out = np.empty(self.n, dtype)
        for lo in range(0, self.n, INTERN_BLOCK):
            out[lo: lo + INTERN_BLOCK] = self[lo: lo + INTERN_BLOCK, c]
        return out

    def column(self, c: int) -> "ColumnOf":
        """Column ``c`` read and written in place (``col[rows]``, ``col[rows] = v``): for a
        column that is nearly always blank (``tdur``), without making it whole."""
        return ColumnOf(self, c)

    def drop(self, *cs: int) -> None:
        """Free columns no step reads any more (a ``rel`` column kept whose base goes: made whole first)."""
        for d, base in list(self.rel.items()):
            if base in cs and d not in cs and self.cols[d] is not None:
                self.cols[d] = self._values(d)
                del self.rel[d]
        for c in cs:
            self.cols[c] = None
            self.rel.pop(c, None)

    def nbytes(self) -> int:
        return sum(c.nbytes for c in self.cols if c is not None)

    def concat(self, other: "EventColumns") -> "EventColumns":
        """These rows, then ``other``'s (a sampled profile's samples and frames after the events)."""
        n = self.n + other.n
        out = []
        for c, (a, b) in enumerate(zip(self.cols, other.cols)):
            if a is None or b is None:
                out.append(None)
            elif isinstance(a, _Sparse) and isinstance(b, _Sparse) and _same(a.value, b.value, self.dtype) \
                    and not self._derived(c) and not other._derived(c):
                out.append(_Sparse(a.value, self.dtype, n, np.concatenate([a.at, b.at + self.n]),
                                   np.concatenate([a.vals, b.vals])))
            else:
                out.append(np.concatenate([self._values(c), other._values(c)]))
        return EventColumns(out, n, self.dtype)


class ColumnOf:
    """One column of an `EventColumns`, indexed by rows alone."""
    __slots__ = ("store", "c")

    def __init__(self, store: EventColumns, c: int):
        self.store, self.c = store, c

    def __getitem__(self, rows):
        return self.store[rows, self.c]

    def __setitem__(self, rows, value):
        self.store[rows, self.c] = value


def _same(a, b, dtype) -> bool:
    """Equal bit for bit (NaN equals NaN)."""
    return np.array(a, dtype).tobytes() == np.array(b, dtype).tobytes()


def from_rows(ii, ss, ff, n: int):
    """The 2-D rows of a sequential scan (their first ``n``) as columns (each copied out)."""
    return tuple(_columns([[_piece(a[:n, c])] for c in range(a.shape[1])], n, a.dtype)
                 for a in (ii, ss, ff))


#: a chunk's column is kept sparse when at most one row in this many differs from its last value
SPARSE_EVERY = 64


def _piece(col: np.ndarray):
    """One chunk's part of a column: a `_Sparse` when nearly every row holds its last row's
    value, else a copy (integers as a `_Coded`: in the fewest bytes that hold them)."""
    m = col.shape[0]
    if not m:
        return _Sparse(0, col.dtype, 0)
    bits = col.view(np.int64 if col.dtype.itemsize == 8 else np.int32)
    other = bits != bits[-1]
    k = int(np.count_nonzero(other))
    if k * SPARSE_EVERY > m:
        return np.array(col) if col.dtype.kind == "f" else _coded(col)
    at = np.flatnonzero(other)
    return _Sparse(col[-1].item(), col.dtype, m, at, col[at])


def _span_of(pieces: list) -> tuple:
    """(lowest, highest) value of an integer column's pieces."""
    lo = hi = None
    for p in pieces:
        if isinstance(p, _Coded):
            a, b = p.lo, p.hi
        elif isinstance(p, _Sparse):
            a = b = int(p.value)
            if p.vals.size:
                a, b = min(a, int(p.vals.min())), max(b, int(p.vals.max()))
        else:
            if not p.size:
                continue
            a, b = int(p.min()), int(p.max())
        lo, hi = (a, b) if lo is None else (min(lo, a), max(hi, b))
    return (0, 0) if lo is None else (lo, hi)


#: bytes of a column's pieces freed while it is joined after which they are given back (`_columns`)
TRIM_BYTES = 16 << 20


#: rows from which a scan's columns are joined on two threads (`_columns`)
PARALLEL_JOIN_ROWS = 1 << 22


def _columns(pieces_per_col: list, n: int, dtype, row_based=(), rel=None) -> EventColumns:
    """Join each column's pieces into one column of ``n`` values (`_joined_column`), freeing the
    pieces as it goes (given back every `TRIM_BYTES`: a column is not held twice); from
    `PARALLEL_JOIN_ROWS` rows on, two threads take the columns in turn (the copies write fresh
    pages, and numpy's copies release the GIL).  ``row_based``, ``rel``: as `EventColumns`'.
    From `TRIM_FROM_ROWS` rows on (where the pieces' memory goes back to the system as they are
    joined, so the columns take fresh pages) the columns are allocated without numpy's huge-page
    advice (`hugeblock.huge_pages`): each is written once, in order, and read in order after.  On
    the benches' virtual machines (Firecracker, free page reporting on: the guest hands freed
    blocks of 8 MiB back to the host, which backs them again on their next first touch) a fresh
    huge page comes from such a block, and the two float columns of a 10^7-event scan (80 MB
    each) took 0.15-0.25 s each to join in huge pages, 0.07 s in 4 KiB ones (no compaction:
    ``compact_stall`` stayed 0); the whole 10^7 load, six alternated fresh processes each,
    2.63-4.48 s -> 2.46-2.97 s.  Below it freed pages are taken again, and the advice made no
    difference (the 10^6-call sympy trace)."""
    if n < TRIM_FROM_ROWS:
        return _joined_columns(pieces_per_col, n, dtype, row_based, rel)
    with huge_pages(False):
        return _joined_columns(pieces_per_col, n, dtype, row_based, rel)


def _joined_columns(pieces_per_col: list, n: int, dtype, row_based, rel) -> EventColumns:
    """`_columns`' work."""
    is_int = np.dtype(dtype).kind in "iu"
    cols: list = [None] * len(pieces_per_col)
    if n >= PARALLEL_JOIN_ROWS and len(pieces_per_col) > 1:
        import threading

        todo = iter(range(len(pieces_per_col)))  # (next() holds the GIL)
        failed: list = []

        def work():
            for c in todo:
                try:
                    cols[c] = _joined_column(pieces_per_col[c], n, dtype, is_int)
                except BaseException as e:  # raised below, in the caller's thread
                    failed.append(e)
                    return

        second = threading.Thread(target=work, name="tracevis3d-join", daemon=True)
        second.start()
        try:
            work()
        finally:
            second.join()
        if failed:
            raise failed[0]
    else:
        for c, pieces in enumerate(pieces_per_col):
            cols[c] = _joined_column(pieces, n, dtype, is_int)
    return EventColumns(cols, n, dtype, row_based, rel)


def _joined_column(pieces: list, n: int, dtype, is_int: bool):
    """One column's ``pieces`` (emptied) as one column of ``n`` values: a `_Sparse` when every
    piece is one with the same value; integers as a `_Coded` over the whole column."""
    if not pieces:
        return _Sparse(0, dtype, 0)
    first = pieces[0]
    if all(isinstance(p, _Sparse) and _same(p.value, first.value, dtype) for p in pieces):
        at, vals, base = [], [], 0
        for p in pieces:
            at.append(p.at + base)
            vals.append(p.vals)
            base += p.n
        pieces.clear()
        return _Sparse(first.value, dtype, n, np.concatenate(at), np.concatenate(vals))
    if is_int:
        lo, hi = _span_of(pieces)
        dt, base = _code_dtype(lo, hi, dtype)
    else:
        dt, base = np.dtype(dtype), 0
    col = np.empty(n, dt)
    at = 0
    freed = 0
    while pieces:
        if freed >= TRIM_BYTES:
            release_free_memory(n)
            freed = 0
        p = pieces.pop(0)
        freed += p.nbytes
        m = p.n if isinstance(p, (_Sparse, _Coded)) else p.shape[0]
        if isinstance(p, _Sparse):
            col[at: at + m] = p.value - base if is_int else p.value
            col[at + p.at] = p.vals - base if is_int else p.vals
        elif isinstance(p, _Coded):
            if p.base == base and p.codes.dtype == dt:
                col[at: at + m] = p.codes
            else:
                np.add(p.codes, p.base - base, out=col[at: at + m], dtype=np.int64, casting="unsafe")
        else:
            col[at: at + m] = p - base if is_int else p
        at += m
    assert at == n
    if col.nbytes >= 16 << 20:  # the column's pieces, freed: not held while the next is joined
        release_free_memory(n)
    return _Coded(col, base, lo, hi) if is_int else col


class FastOut:
    """What the scanner's fast path (`kernels.sidescan`) took from one scan or one part of a
    parallel scan: its tables (``fx``: the arrays of `sidetables.new_fast`) and its outputs:
    counter samples (ts, value, series entry, event offset) and flow events (ts, id, offset, key
    entry, category entry, ordinal, code, event length).  A part's outputs stay in ``fx`` while
    it is scanned, doubled when full (`grow`, numpy buffers: huge pages where the system allows),
    and are taken once at its end (`keep`: views, no copy).  `io.chrome_fast` joins the parts."""

    def __init__(self, fx):
        self.fx = fx
        self.samples = [[] for _ in range(4)]  # per column: [its values] (one piece) or []
        self.flows = [[] for _ in range(8)]
        self.n = 0  # events taken

    def keep(self, fx) -> None:
        """The outputs of ``fx`` (views of its buffers: ``fx`` takes no more events after this), and
        ``fx`` itself (its outputs may have been grown since this FastOut was made)."""
        _, _, cnt, _, ov, oi, os_, _ = fx
        assert self.n == 0, "a FastOut keeps the outputs of one fx, once"
        self.fx = fx
        m = int(cnt[fs.C_SAMPLES])
        if m:
            self.samples = [[a[:m]] for a in (ov[0], ov[1], oi[0], oi[1])]
        m = int(cnt[fs.C_FLOWS])
        if m:
            self.flows = [[a[:m]] for a in (ov[2], oi[2], oi[3], os_[0], os_[1], os_[2], os_[3], os_[4])]
        self.n = int(cnt[fs.C_EVENTS])

    @staticmethod
    def grow(fx):
        """``fx`` with its outputs twice as long, in a numpy buffer, holding what they held.  A part's
        scan goes on into it, so its outputs are not copied out chunk by chunk, as they were (one
        thread, `scan_part` of 10^6 flow events 0.108 -> 0.093 s, of 10^6 counter samples 0.063 ->
        0.054 s)."""
        tab, slot, cnt, fl, ov, oi, os_, shp = fx
        ov2, oi2, os2 = _fast_outputs(2 * ov.shape[1])
        fs.copy_fast_outputs(cnt, ov, oi, os_, ov2, oi2, os2)
        return tab, slot, cnt, fl, ov2, oi2, os2, shp

    def drop(self, what: str) -> None:
        """The samples' or flows' outputs, joined elsewhere: their memory given back."""
        setattr(self, what, None)

    def add_to_ordinals(self, seen0: int) -> None:
        """The ordinals of a later part go on from the events before it."""
        tab, cnt = self.fx[0], self.fx[2]
        for t in (fs.T_NAME, fs.T_CAT):
            m = int(cnt[t])
            tab[t, :m, fs.SF_ORD] = np.minimum(tab[t, :m, fs.SF_ORD] + seen0, 2147483647)
        for p in self.flows[5]:  # (in place: a view of the part's outputs)
            p[:] = np.minimum(p.astype(np.int64) + seen0, 2147483647)


def _fast_outputs(cap: int):
    """The fast path's outputs (`sidetables.new_fast`'s ``ov, oi, os_``) for ``cap`` samples and
    ``cap`` flow events, as views of one numpy buffer (numpy asks for huge pages from 4 MiB on,
    numba's allocator does not: the outputs of a part full of counters or flows took 2.5k page
    faults of 4 KiB each)."""
    whole = np.empty(cap * (3 * 8 + 4 * 8 + 5 * 4), np.uint8)
    ov = whole[:24 * cap].view(np.float64).reshape(3, cap)
    oi = whole[24 * cap:56 * cap].view(np.int64).reshape(4, cap)
    os_ = whole[56 * cap:].view(np.int32).reshape(5, cap)
    return ov, oi, os_


def new_fast_out(rows: int, seed: int, max_t: float):
    """(``fx`` for a scan of ``rows`` rows per chunk, its `FastOut`): `sidetables.new_fast`'s
    tables made with numpy (a kernel fewer to load on a process's first load), the outputs by
    `_fast_outputs`."""
    cnt = np.zeros(fs.N_CNT, np.int64)
    cnt[fs.C_SEED] = seed
    cnt[fs.C_ON] = 1
    fl = np.full(fs.TAB_CAP + 2, -np.inf)
    fl[fs.FL_MIN_CTS] = np.inf
    fl[fs.FL_MAX_T] = max_t
    shp = np.zeros((fs.N_SHAPES + 1, fs.SHP_W), np.int64)
    shp[fs.N_SHAPES, fs.RC_LAST] = -1
    fx = (np.zeros((fs.N_TAB, fs.TAB_CAP, fs.TAB_W), np.int64), np.zeros((fs.N_TAB, fs.SLOTS), np.int32), cnt, fl,
          *_fast_outputs(max(2 * rows, fs.MAX_PAIRS)), shp)
    return fx, FastOut(fx)


#: int64 columns of a chunked scan kept less their event's offset where not 0 (`EventColumns.rel`): a
#: name's and a category's offset (0: none), 1 byte a row instead of 4 (57 MB at 10^7 events)
REL_COLUMNS = {jev.I_NAME_OFF: jev.I_EV_OFF, jev.I_CAT_OFF: jev.I_EV_OFF}


#: `REL_COLUMNS` as `jsonrows.relative_offsets` takes them (one base column: the event's offset)
_REL_COLS = np.array(sorted(REL_COLUMNS), np.int64)
_REL_BASE = jev.I_EV_OFF
assert set(REL_COLUMNS.values()) == {_REL_BASE}


def _chunk_pieces(t: np.ndarray, k: int) -> list:
    """`_piece` of each column of a chunk turned into columns (its first ``k`` of ``t``'s rows),
    decided from `jsonrows.column_stats` (one pass over the chunk for the rows differing from the
    last, the lowest and highest value: what `_piece` reads in four numpy passes per column, a
    tenth of a 10^7-call scan), the same pieces."""
    bits = t.view(np.int64) if t.dtype.kind == "f" else t  # (a float column compared by its bits, as `_piece`)
    n_diff, lo, hi = jr.column_stats(bits, k)
    out = []
    for c in range(t.shape[0]):
        col = t[c, :k]
        nd = int(n_diff[c])
        if nd * SPARSE_EVERY > k:
            if col.dtype.kind == "f":
                out.append(np.array(col))
                continue
            a, b = int(lo[c]), int(hi[c])
            dt, base = _code_dtype(a, b, col.dtype)
            codes = np.empty(k, dt)
            np.subtract(col, base, out=codes, dtype=np.int64, casting="unsafe")  # exact: in range by construction
            out.append(_Coded(codes, base, a, b))
            continue
        at = jr.rows_differing(bits[c], k, nd) if nd else np.zeros(0, np.int64)
        out.append(_Sparse(col[-1].item(), col.dtype, k, at, col[at]))
    return out


class ChunkedPart:
    """The rows of one part of a parallel scan, scanned chunk by chunk (`scan_part`): the event
    rows (``pieces``), the side rows of counters and flow events (``side``, `jsonscan.scan_events`)
    and what the fast path took of those (``fast``, a `FastOut`)."""

    def __init__(self):
        self.pieces = [[[] for _ in range(w)] for w in (jev.N_I, jev.N_S, jev.N_F)]
        self.side = [[[] for _ in range(w)] for w in (jev.N_I, jev.N_S, jev.N_F)]
        self.n = 0
        self.nv = 0
        self.fast = None
        self.skipped = np.zeros(256, np.int64)
        self.scratch = [None, None, None]  # per kind of column: the chunk turned into columns
        self.relative = False  # its int64 pieces keep `REL_COLUMNS` less their event's offset (`keep`)
        self.names = None  # its names interned chunk by chunk (`PartNames`), when asked for

    def keep(self, ii, ss, ff, k: int, side: bool = False) -> None:
        """The first ``k`` rows of ``ii, ss, ff`` (``side``: side rows), turned into columns in one
        pass (`jsonrows.rows_to_columns`, into this part's ``scratch``) and kept as pieces
        (`_chunk_pieces`)."""
        if not k:
            return
        row0 = self.nv if side else self.n
        for w, (a, per_col) in enumerate(zip((ii, ss, ff), self.side if side else self.pieces)):
            t = self.scratch[w]
            if t is None or t.shape[1] < k:
                t = self.scratch[w] = np.empty((a.shape[1], max(k, a.shape[0])), a.dtype)
            jr.rows_to_columns(a, k, t)
            if w == 0:
                if not jr.relative_offsets(t, k, _REL_COLS, _REL_BASE):  # (never from the scanner: the
                    raise ValueError("a field's offset at or before its event's")  # sequential scan then)
                self.relative = True
            if w == 1:  # the ordinals less their rows' indices in the part (`EventColumns.row_based`)
                t[jev.S_ORD, :k] = (t[jev.S_ORD, :k] - np.arange(row0, row0 + k, dtype=np.int64)).astype(np.int32)
            for c, p in enumerate(_chunk_pieces(t, k)):
                per_col[c].append(p)
        if side:
            self.nv += k
        else:
            self.n += k

    def add_to_ordinals(self, seen0: int) -> None:
        """The ordinals of a second part go on from the events of the first (saturating at
        2^31 - 1, as the scanner's)."""
        self.fast.add_to_ordinals(seen0)
        for cols, n in ((self.pieces, self.n), (self.side, self.nv)):
            ords = cols[1][jev.S_ORD]
            if _span_of(ords)[1] + n + seen0 < 2147483647:  # (no ordinal saturates: each one's row cancels)
                for p in ords:
                    _shift(p, seen0)
                continue
            row0 = 0
            for k, p in enumerate(ords):  # the ordinals themselves, saturated, less their rows again
                m = p.n if isinstance(p, (_Sparse, _Coded)) else p.shape[0]
                rows = np.arange(row0, row0 + m, dtype=np.int64)
                whole = (p.full() if isinstance(p, _Sparse) else p.full(np.int64) if isinstance(p, _Coded) else p)
                ords[k] = _piece((np.minimum(whole.astype(np.int64) + rows + seen0, 2147483647) - rows)
                                 .astype(np.int32))
                row0 += m

    def columns(self, *others: "ChunkedPart", side: bool = False):
        """(ii, ss, ff) columns of these rows, then the ``others``' in turn (``side``: of the
        side rows)."""
        n = (self.nv + sum(o.nv for o in others)) if side else (self.n + sum(o.n for o in others))
        rel = REL_COLUMNS if any(p.relative for p in (self, *others)) else None  # (pieces made by `keep`)
        out = []
        for w, dtype in enumerate((np.int64, np.int32, np.float64)):
            per_col = (self.side if side else self.pieces)[w]
            row0 = self.nv if side else self.n
            for other in others:
                theirs = (other.side if side else other.pieces)[w]
                if w == 1:  # the ordinals, less their rows' indices in the part: less the rows before it
                    for p in theirs[jev.S_ORD]:
                        _shift(p, -row0)
                for c in range(len(per_col)):
                    per_col[c].extend(theirs[c])
                    theirs[c].clear()
                row0 += other.nv if side else other.n
            out.append(_columns(per_col, n, dtype, (jev.S_ORD,) if w == 1 else (), rel if w == 0 else None))
        return tuple(out)


def _shift(p, d: int) -> None:
    """``d`` added to every value of an integer piece (`_Sparse` or `_Coded`), in place."""
    if isinstance(p, _Sparse):
        p.value = int(p.value) + d
        p.vals = (p.vals.astype(np.int64) + d).astype(p.dtype)
    else:
        p.base += d
        p.lo += d
        p.hi += d


def _chunk_rows(max_rows: int) -> int:
    """Rows of a chunk of a scan of at most ``max_rows`` rows: `CHUNK_ROWS`, or ``max_rows`` + 1
    for a smaller limit (`scan_part`, `ScanScratch`)."""
    return min(CHUNK_ROWS, max(max_rows, 0) + 1)




class PartNames:
    """The names of one part of a parallel scan interned chunk by chunk, each chunk right after
    the scanner wrote its rows (`scan_part`), while its bytes are still in the cache: a table of
    the part's own (`jsonrows.intern_spans_block`, ids in order of first use in the part, first
    rows counted from the part's start) and each chunk's ids.  The rows named are those
    `chrome._intern_names` names: a name, and not a flow event.  Interned after the scan instead,
    the names were a second pass over the whole file: 0.09-0.12 s of a 0.8-1.0 s steady load of
    the 176 MB sympy trace on a memory-starved Zen 3 host, where touching two bytes of each name
    alone took 0.035-0.043 s.  ``ok`` False: the cheap hash worked too hard (`interned_spans`'
    budget, per part), and the names are interned after the scan as before."""

    def __init__(self):
        self.state = jr.new_intern_state(jsp.FIRST_TABLE_SLOTS)
        self.ids: list = []  # int32 of each chunk's rows, -1 where not named
        self.n = 0
        self.budget = INTERN_BUDGET0
        self.ok = True

    def add(self, buf, ii, ss, k: int, row0: int, seed: int) -> None:
        """The first ``k`` rows of the scanner's ``ii, ss`` (rows ``row0`` on in the part)."""
        self.n += k
        if not self.ok:
            return
        ids = np.empty(k, np.int32)
        ok, self.budget, self.state = jr.intern_row_names(buf, ii, ss, k, jev.I_NAME_OFF, jev.S_NAME_LEN, jev.S_PH,
                                                          FLOW_PHASE, seed, self.budget, row0, ids, self.state)
        if not ok:
            self.ok, self.state, self.ids = False, None, []
            return
        self.ids.append(ids)


def merged_part_names(buf, parts: list, seed: int):
    """The names of a parallel scan's parts (`PartNames`, in the file's order) in one numbering:
    (the id of each row, -1 where not named; the first row of each id), equal to `interned_spans`'
    of all the rows (ids in order of first use in the file: a part's names new to the parts
    before it are numbered in the order the part first uses them, and first used there).  Only
    each part's distinct names are read again.  None when a part gave up (``ok`` False) or the
    merge's cheap hash works too hard: the caller interns the rows (`interned_spans`)."""
    if not parts or not all(p is not None and p.ok for p in parts):
        return None
    table = jr.new_intern_state(jsp.FIRST_TABLE_SLOTS)
    ids = np.empty(sum(p.n for p in parts), np.int32)
    firsts = []
    row0 = 0
    budget = INTERN_BUDGET0
    for p in parts:
        m = int(p.state[5][jr.CNT_IDS])
        off, ln, every = p.state[2][:m].copy(), p.state[3][:m].copy(), np.ones(m, bool)
        budget += intern_work(ln, every)
        before = int(table[5][jr.CNT_IDS])
        to_global = np.empty(m + 1, np.int32)
        to_global[m] = -1  # (a row without a name: local id -1, the last entry)
        ok, table = jr.intern_spans_block(buf, off, ln, every, seed, False, budget, 0, to_global[:m], table)
        if not ok:
            return None
        firsts.append(row0 + p.state[4][:m][to_global[:m] >= before])  # (new ids: ascending, in local order)
        at = row0
        for j, chunk in enumerate(p.ids):
            ids[at: at + chunk.shape[0]] = to_global[chunk]
            at += chunk.shape[0]
            p.ids[j] = None  # (memory: the part's ids go as the file's are written)
        row0 += p.n
    return ids, np.concatenate(firsts)


class ScanScratch:
    """The buffers one scanning thread reuses from one part to the next (`scan_part`) of a scan of at
    most ``max_rows`` rows: a chunk's rows and side rows as the scanner writes them (``rows``
    each, `_chunk_rows`), the nesting stack, and the chunk turned into columns
    (`ChunkedPart.keep`). Made afresh for each of a file's 8 parts they were ~19 MB of new pages
    a part: the scan of a 10^6-event first load faulted 29.8k pages, with one set a thread
    18.0k."""

    def __init__(self, max_rows: int, max_nesting: int):
        rows = self.rows = _chunk_rows(max_rows)
        self.max_nesting = max_nesting
        self.stack = np.empty(max_nesting, np.uint8)
        self.event_rows = (np.empty((rows, jev.N_I), np.int64), np.empty((rows, jev.N_S), np.int32),
                           np.empty((rows, jev.N_F), np.float64))
        self.side_rows = (np.empty((rows, jev.N_I), np.int64), np.empty((rows, jev.N_S), np.int32),
                          np.empty((rows, jev.N_F), np.float64))
        self.columns = [None, None, None]  # `ChunkedPart.scratch`, shared by the thread's parts

    def fits(self, max_rows: int, max_nesting: int) -> bool:
        """Whether these are the buffers of a scan of ``max_rows`` rows and ``max_nesting`` levels."""
        return self.rows == _chunk_rows(max_rows) and self.max_nesting == max_nesting


def scan_part(buf, i: int, stop_at: int, max_rows: int, max_nesting: int, seed: int = 0, max_t: float = np.inf,
              scratch: ScanScratch | None = None, names: bool = False):
    """Scan events from ``i`` (an event boundary) to ``stop_at`` (-1: to the end) in chunks
    of `CHUNK_ROWS` rows and side rows; the outputs of the fast path (``seed``, ``max_t`` of
    `sidetables.new_fast`) grow instead (`FastOut.grow`).  ``scratch``: the calling thread's
    buffers from its last part (made here when None or of another size).  ``names``: each
    chunk's names interned as soon as it is scanned (`PartNames`, the part's ``names``).  Returns
    (part, end, status, err_pos, seen) as `scan_events` does."""
    part = ChunkedPart()
    if names:
        part.names = PartNames()
    if scratch is None or not scratch.fits(max_rows, max_nesting):
        scratch = ScanScratch(max_rows, max_nesting)
    rows = scratch.rows
    stack = scratch.stack
    (ii, ss, ff), (vi, vs, vf) = scratch.event_rows, scratch.side_rows
    part.scratch = scratch.columns
    fx, part.fast = new_fast_out(rows, seed, max_t)
    seen = 0
    cnt = fx[2]
    while True:
        k, kv, end, st, ep, seen = js.scan_events_chunk(buf, i, ii, ss, ff, vi, vs, vf, fx, stack,
                                                        max_rows - part.n - part.nv - int(cnt[fs.C_EVENTS]),
                                                        stop_at, part.skipped, seen)
        if part.names is not None and k:
            part.names.add(buf, ii, ss, k, part.n, seed)
        part.keep(ii, ss, ff, k)
        part.keep(vi, vs, vf, kv, side=True)
        if st != jev.FULL:
            part.fast.keep(fx)
            part.scratch = None  # (the thread's, not the part's: not held until the parts are joined)
            return part, end, st, ep, seen
        if not fs.fast_room(cnt, fx[4]):  # (else the rows were full)
            fx = FastOut.grow(fx)
        i = end
