"""The scanner's event rows kept column by column, each exactly as long as the rows.

The scanner (`tracevis3d.kernels.jsonscan`) writes rows of 148 bytes (`jsonevent`: int64 ×8,
int32 ×15, float64 ×3).  Kept as they come, 10^7 events are 1.48 GB, twice that while two
halves are joined and more while the rows grow by doubling.  Here the rows are scanned in
chunks of `CHUNK_ROWS` into one reused buffer per scanning thread; after each chunk its columns
are copied out, and a column that holds one value in nearly every row of the file (the blank
``bind_id`` of a file without flows, ``tdur``, the number spans that only slow numbers have,
often the phase, the process, the flags and the args of a file of calls with a few metadata
events) is kept as that value and its exceptions.  A typical call trace
then keeps about 60 of the 148 bytes per event, and nothing is ever joined or doubled.

`EventColumns` is read like the 2-D row arrays it replaces (``ii[rows, jev.I_PID]``,
``ss[:, jev.S_FLAGS]``, ``ii[rows, jev.I_NAME_OFF] = ...``), so the importer's steps are
unchanged; `take` hands a column over (the importer's own copy, no second one) and `drop`
frees one that no step needs any more.
"""
from __future__ import annotations

import ctypes
import ctypes.util

import numpy as np

from ..kernels import jsonevent as jev
from ..kernels import jsonscan as js
from ..kernels import sidetables as fs

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


def release_free_memory() -> None:
    """Give the memory freed by the joined chunks back to the system.  The chunks' pieces are
    small allocations spread over both threads' malloc arenas; freed, glibc keeps them (0.24 GB
    after a 10^7-event scan) unless asked (``malloc_trim``); elsewhere this does nothing."""
    if _MALLOC_TRIM is not None:
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
            rows = np.arange(*rows.indices(self.n))
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


def kept_values(values: np.ndarray, rows: np.ndarray) -> _Sparse:
    """``values`` at the ascending ``rows`` only (NaN elsewhere), read like the array."""
    rows = np.asarray(rows, np.int64)
    return _Sparse(np.nan, values.dtype, values.shape[0], rows, values[rows])


class EventColumns:
    """One part of the rows (int64, int32 or float64 columns), column by column.

    ``x[rows, c]`` reads column ``c`` at ``rows`` (a fresh contiguous array, as numpy's fancy
    indexing gives; a slice gives a view of a stored column), ``x[rows, c] = v`` writes it,
    ``x.shape`` is (rows, columns) like the 2-D array's."""

    def __init__(self, cols: list, n: int, dtype):
        self.cols = cols
        self.n = int(n)
        self.dtype = np.dtype(dtype)

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
        if isinstance(col, _Sparse):
            return col.take(rows)
        out = col[rows]
        return out if col.dtype == self.dtype else out.astype(self.dtype)  # a narrowed int64 column

    def __setitem__(self, key, value):
        rows, c = key
        col = self._col(c)
        if isinstance(col, _Sparse) or col.dtype != self.dtype:  # (a narrowed column: widened first)
            col = self.cols[c] = col.full() if isinstance(col, _Sparse) else col.astype(self.dtype)
        col[rows] = value

    def take(self, c: int) -> np.ndarray:
        """Column ``c`` as its own writable array, no longer kept here."""
        col = self._col(c)
        self.cols[c] = None
        if isinstance(col, _Sparse):
            return col.full()
        return col if col.dtype == self.dtype else col.astype(self.dtype)

    def any_bits(self, c: int, bits: int) -> bool:
        """Whether any row of column ``c`` has one of ``bits`` (without making it whole)."""
        col = self._col(c)
        if isinstance(col, _Sparse):
            return bool((int(col.value) & bits) and col.n > col.at.size) or bool(np.any(col.vals & bits))
        return bool(np.any(col & bits))

    def rows_where_over(self, c: int, limit: int, n: int) -> np.ndarray:
        """A mask of ``n`` rows (rows past these are False): where column ``c`` > ``limit``."""
        col = self._col(c)
        mask = np.zeros(n, bool)
        if isinstance(col, _Sparse) and not col.value > limit:
            mask[col.at[col.vals > limit]] = True
        else:
            mask[: self.n] = (col.full() if isinstance(col, _Sparse) else col) > limit
        return mask

    def column(self, c: int) -> "ColumnOf":
        """Column ``c`` read and written in place (``col[rows]``, ``col[rows] = v``): for a
        column that is nearly always blank (``tdur``), without making it whole."""
        return ColumnOf(self, c)

    def drop(self, *cs: int) -> None:
        """Free columns no step reads any more."""
        for c in cs:
            self.cols[c] = None

    def nbytes(self) -> int:
        return sum(c.nbytes for c in self.cols if c is not None)

    def concat(self, other: "EventColumns") -> "EventColumns":
        """These rows, then ``other``'s (a sampled profile's samples and frames after the events)."""
        n = self.n + other.n
        out = []
        for a, b in zip(self.cols, other.cols):
            if a is None or b is None:
                out.append(None)
            elif isinstance(a, _Sparse) and isinstance(b, _Sparse) and _same(a.value, b.value, self.dtype):
                out.append(_Sparse(a.value, self.dtype, n, np.concatenate([a.at, b.at + self.n]),
                                   np.concatenate([a.vals, b.vals])))
            else:
                out.append(np.concatenate([a.full() if isinstance(a, _Sparse) else a,
                                           b.full() if isinstance(b, _Sparse) else b]))
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
    value, else a copy."""
    m = col.shape[0]
    if not m:
        return _Sparse(0, col.dtype, 0)
    bits = col.view(np.int64 if col.dtype.itemsize == 8 else np.int32)
    other = bits != bits[-1]
    k = int(np.count_nonzero(other))
    if k * SPARSE_EVERY > m:
        return np.array(col)
    at = np.flatnonzero(other)
    return _Sparse(col[-1].item(), col.dtype, m, at, col[at])


def _narrowed(pieces: list, dtype) -> np.dtype:
    """int32 for an int64 column whose values all fit (byte offsets of a file under 2 GiB, thread
    ids: half the memory; `EventColumns` reads them back as int64), else ``dtype``."""
    if np.dtype(dtype) != np.int64:
        return np.dtype(dtype)
    lo, hi = 0, 0
    for p in pieces:
        vals = p.vals if isinstance(p, _Sparse) else p
        if isinstance(p, _Sparse):
            lo, hi = min(lo, int(p.value)), max(hi, int(p.value))
        if vals.size:
            lo, hi = min(lo, int(vals.min())), max(hi, int(vals.max()))
    i32 = np.iinfo(np.int32)
    return np.dtype(np.int32) if i32.min <= lo and hi <= i32.max else np.dtype(dtype)


def _columns(pieces_per_col: list, n: int, dtype) -> EventColumns:
    """Join each column's pieces into one column of ``n`` values (a `_Sparse` when every piece
    is one with the same value), freeing the pieces as it goes: at most one column is held
    twice."""
    cols = []
    for pieces in pieces_per_col:
        if not pieces:
            cols.append(_Sparse(0, dtype, 0))
            continue
        first = pieces[0]
        if all(isinstance(p, _Sparse) and _same(p.value, first.value, dtype) for p in pieces):
            at, vals, base = [], [], 0
            for p in pieces:
                at.append(p.at + base)
                vals.append(p.vals)
                base += p.n
            cols.append(_Sparse(first.value, dtype, n, np.concatenate(at), np.concatenate(vals)))
            pieces.clear()
            continue
        col = np.empty(n, _narrowed(pieces, dtype))
        at = 0
        while pieces:
            p = pieces.pop(0)
            m = p.n if isinstance(p, _Sparse) else p.shape[0]
            if isinstance(p, _Sparse):
                col[at: at + m] = p.value
                col[at + p.at] = p.vals
            else:
                col[at: at + m] = p
            at += m
        assert at == n
        cols.append(col)
        if col.nbytes >= 16 << 20:  # the column's pieces, freed: not held while the next is joined
            release_free_memory()
    return EventColumns(cols, n, dtype)


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

    def keep(self, ii, ss, ff, k: int, side: bool = False) -> None:
        """The first ``k`` rows of ``ii, ss, ff`` (``side``: side rows)."""
        if not k:
            return
        for a, per_col in zip((ii, ss, ff), self.side if side else self.pieces):
            for c, pieces in enumerate(per_col):
                pieces.append(_piece(a[:k, c]))
        if side:
            self.nv += k
        else:
            self.n += k

    def add_to_ordinals(self, seen0: int) -> None:
        """The ordinals of a second part go on from the events of the first."""
        self.fast.add_to_ordinals(seen0)
        for cols in (self.pieces, self.side):
            for k, p in enumerate(cols[1][jev.S_ORD]):
                if isinstance(p, _Sparse):
                    p.value = int(min(p.value + seen0, 2147483647))
                    p.vals = np.minimum(p.vals.astype(np.int64) + seen0, 2147483647).astype(np.int32)
                else:
                    cols[1][jev.S_ORD][k] = np.minimum(p.astype(np.int64) + seen0, 2147483647).astype(np.int32)

    def columns(self, *others: "ChunkedPart", side: bool = False):
        """(ii, ss, ff) columns of these rows, then the ``others``' in turn (``side``: of the
        side rows)."""
        n = (self.nv + sum(o.nv for o in others)) if side else (self.n + sum(o.n for o in others))
        out = []
        for w, dtype in enumerate((np.int64, np.int32, np.float64)):
            per_col = (self.side if side else self.pieces)[w]
            for other in others:
                theirs = (other.side if side else other.pieces)[w]
                for c in range(len(per_col)):
                    per_col[c].extend(theirs[c])
                    theirs[c].clear()
            out.append(_columns(per_col, n, dtype))
        return tuple(out)


def scan_part(buf, i: int, stop_at: int, max_rows: int, max_nesting: int, seed: int = 0, max_t: float = np.inf):
    """Scan events from ``i`` (an event boundary) to ``stop_at`` (-1: to the end) in chunks
    of `CHUNK_ROWS` rows and side rows; the outputs of the fast path (``seed``, ``max_t`` of
    `sidetables.new_fast`) grow instead (`FastOut.grow`).  Returns (part, end, status, err_pos,
    seen) as `scan_events` does."""
    part = ChunkedPart()
    stack = np.empty(max_nesting, np.uint8)
    rows = min(CHUNK_ROWS, max(max_rows, 0) + 1)
    ii = np.empty((rows, jev.N_I), np.int64)
    ss = np.empty((rows, jev.N_S), np.int32)
    ff = np.empty((rows, jev.N_F), np.float64)
    vi, vs, vf = (np.empty((rows, w), t) for w, t in ((jev.N_I, np.int64), (jev.N_S, np.int32), (jev.N_F, np.float64)))
    fx, part.fast = new_fast_out(rows, seed, max_t)
    seen = 0
    cnt = fx[2]
    while True:
        k, kv, end, st, ep, seen = js.scan_events_chunk(buf, i, ii, ss, ff, vi, vs, vf, fx, stack,
                                                        max_rows - part.n - part.nv - int(cnt[fs.C_EVENTS]),
                                                        stop_at, part.skipped, seen)
        part.keep(ii, ss, ff, k)
        part.keep(vi, vs, vf, kv, side=True)
        if st != jev.FULL:
            part.fast.keep(fx)
            return part, end, st, ep, seen
        if not fs.fast_room(cnt, fx[4]):  # (else the rows were full)
            fx = FastOut.grow(fx)
        i = end
