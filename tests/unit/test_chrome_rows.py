"""The scanner's rows kept column by column (io.chrome_rows, issue 26): read like the 2-D rows
they replace, chunked scans equal to the sequential one, interning tables that grow."""
import random
import warnings

import numpy as np
import orjson
import pytest

import tracevis3d
from tracevis3d.io import chrome, chrome_rows
from tracevis3d import pages
from tracevis3d.kernels import jsonevent as jev
from tracevis3d.kernels import jsonspans as jsp
from tracevis3d.model import ARRAY_DTYPES


def _quiet(data, **kw):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        return tracevis3d.io.load_bytes(data, source="t", **kw)


def test_columns_read_and_write_like_the_rows_they_replace():
    rng = np.random.default_rng(3)
    n = 700
    a = np.zeros((n, 5), np.int64)
    a[:, 0] = rng.integers(0, 1 << 40, n)  # dense
    a[[5, 100, 333, 600], 1] = 7  # sparse: a few rows differ
    a[:, 2] = -1  # one value throughout
    a[:, 3] = np.arange(n)
    a[::2, 4] = 5  # half: dense
    f = np.full((n, 2), np.nan)
    f[3, 1] = 1.5
    old = chrome_rows.CHUNK_ROWS
    for chunk in (1, 64, 1000):
        part = chrome_rows.ChunkedPart()
        part.pieces = [[[] for _ in range(5)], [], [[] for _ in range(2)]]
        for s in range(0, n, chunk):
            for arr, per_col in ((a, part.pieces[0]), (f, part.pieces[2])):
                for c in range(arr.shape[1]):
                    per_col[c].append(chrome_rows._piece(arr[s: s + chunk, c]))
            part.n += min(chunk, n - s)
        ii, _, ff = part.columns()
        kinds = [type(c).__name__ for c in ii.cols]
        if chunk > 1:  # (pieces of one row each hold different values: kept dense)
            assert kinds[1] == kinds[2] == "_Sparse" and kinds[0] == "_Coded", kinds
            # dense integers in the fewest bytes that hold their range (from its lowest value)
            assert [ii.cols[c].codes.dtype for c in (0, 3, 4)] == [np.int64, np.uint16, np.uint8]
        for rows in (slice(None), slice(3, 40, 5), rng.integers(0, n, 50), rng.random(n) < 0.3,
                     np.zeros(0, np.int64), 17, -1, np.array([-3, 5])):
            for c in range(5):
                assert np.array_equal(ii[rows, c], a[rows, c]), (chunk, c, rows)
            for c in range(2):
                assert np.array_equal(ff[rows, c], f[rows, c], equal_nan=True)
        with pytest.raises(IndexError):
            ii[np.array([n]), 1]
        b = a.copy()
        ii[np.array([0, 9]), 2] = 4
        b[[0, 9], 2] = 4
        assert np.array_equal(ii[:, 2], b[:, 2])
        both = ii.concat(ii)
        assert np.array_equal(both[:, 1], np.concatenate([a[:, 1], a[:, 1]]))
        for c in range(5):
            for bits in (1, 2, 4, 8, 1 << 45):
                assert ii.any_bits(c, bits) == bool(np.any(b[:, c] & bits)), (c, bits)
        for c in range(5):
            for limit in (0, 4, 6):
                want = np.concatenate([b[:, c] > limit, np.zeros(3, bool)])
                assert np.array_equal(ii.rows_where_over(c, limit, n + 3), want), (c, limit)
        col = ii.column(1)
        assert np.array_equal(col[np.array([5, 6])], [7, 0])
        col[np.array([6])] = 9
        assert ii[6, 1] == 9
        t = ff.take(1)
        assert np.array_equal(t, f[:, 1], equal_nan=True) and t.flags.writeable
    assert chrome_rows.CHUNK_ROWS == old


def _events(n, seed):
    rng = random.Random(seed)
    ev = [{"ph": "M", "pid": 1, "tid": 1, "name": "thread_name", "args": {"name": "main"}}]
    for k in range(n):
        ph = rng.choice("XXXXXBEiCsf")
        e = {"ph": ph, "pid": rng.choice([1, 1, 1, 2]), "tid": rng.choice([1, 2, "w"]),
             "name": f"fn{rng.randint(0, 40)}", "ts": k * 1.5 + rng.choice([0, 0.1234567890123456789])}
        if ph == "X":
            e["dur"] = rng.choice([0.5, 2, "3"])
        if ph in "sf":
            e.update(id=rng.randint(0, 20), cat="c")
        if ph == "C":
            e["args"] = {"v": rng.randint(0, 9)}
        if rng.random() < 0.05:
            e["args"] = {"x": [1, {"y": 2}]}
        ev.append(e)
    return orjson.dumps({"traceEvents": ev, "displayTimeUnit": "ns"})


@pytest.mark.parametrize("chunk", [1, 3, 1000])
@pytest.mark.parametrize("join_threads", [1, 2])
@pytest.mark.parametrize("large", [False, True])
def test_chunked_parallel_scan_equals_sequential(monkeypatch, chunk, join_threads, large):
    """The parts' columns joined on one thread or on two (`chrome_rows._columns`); ``large``: as a
    scan of `TRIM_FROM_ROWS` rows is (the freed pieces given back as they go, the columns made
    without numpy's huge-page advice)."""
    data = _events(3000, chunk)
    monkeypatch.setattr(chrome, "PARALLEL_SCAN_BYTES", 1 << 62)
    seq = _quiet(data)
    monkeypatch.setattr(chrome, "PARALLEL_SCAN_BYTES", 0)
    monkeypatch.setattr(chrome_rows, "CHUNK_ROWS", chunk)
    monkeypatch.setattr(chrome_rows, "PARALLEL_JOIN_ROWS", 0 if join_threads == 2 else 1 << 62)
    monkeypatch.setattr(chrome_rows, "TRIM_FROM_ROWS", 0 if large else 1 << 62)
    par = _quiet(data)
    for k in ARRAY_DTYPES:
        assert np.array_equal(getattr(seq, k), getattr(par, k)), k
    assert seq.meta["repairs"] == par.meta["repairs"] and seq.meta["n_events"] == par.meta["n_events"]
    assert seq.function_names == par.function_names and seq.thread_names == par.thread_names
    # too many events: the same clear error whichever way the file is scanned
    with pytest.raises(tracevis3d.TraceFormatError, match="more than 100 events"):
        _quiet(data, max_events=100)


def _load_or_error(data):
    try:
        t = _quiet(data)
    except tracevis3d.TraceFormatError as e:
        return str(e)
    return t


def test_parallel_scan_of_the_keys_after_the_events_equals_sequential(monkeypatch):
    """The object form's keys after the events (`jsonscan.scan_object_tail`), scanned by the
    parallel scan's last part's thread: the same trace, or the same error, as the sequential scan,
    for tails of every kind: VizTracer's ``viztracer_metadata`` and a ``file_info`` of escaped
    source (strings whose escapes fall at every offset of a 32-byte block), ``displayTimeUnit``
    after the events, a bad tail (syntax, a second ``traceEvents``, too deep), a file cut inside
    it, and the tail's scan failing (the sequential scan then)."""
    events = orjson.loads(_events(400, 5))["traceEvents"]
    source = "".join(f'x = "{"q" * k}\\"\n' + "\t" * (k % 3) for k in range(70))
    body = orjson.dumps(events)
    tails = [
        orjson.dumps({"viztracer_metadata": {"version": "1.1.1"}, "file_info": {
            "files": {f"/m{k}.py": [source * (k + 1), 70] for k in range(6)}, "functions": {"f": ["/m0.py", 3]}}}),
        orjson.dumps({"displayTimeUnit": "ms", "otherData": {"a": [1, 2, {"b": None}]}}),
        b'{"a": [1, 2}', b'{"traceEvents": []}', b'{"a": ' + b"[" * 200 + b"]" * 200 + b"}", b'{"a": 1, "b": "\\"',
        b'{"a" 1}', b'{"a": 1,, "b": 2}',
    ]
    cases = []
    for tail in tails:
        whole = b'{"traceEvents": ' + body + b", " + tail[1:]
        cases += [whole, whole[: len(whole) - 7], whole + b" x"]
    for data in cases:
        monkeypatch.setattr(chrome, "PARALLEL_SCAN_BYTES", 1 << 62)
        want = _load_or_error(data)
        monkeypatch.setattr(chrome, "PARALLEL_SCAN_BYTES", 0)
        monkeypatch.setattr(chrome_rows, "CHUNK_ROWS", 64)
        got = _load_or_error(data)
        if isinstance(want, str):
            assert got == want, data[-80:]
            continue
        for k in ARRAY_DTYPES:
            assert np.array_equal(getattr(want, k), getattr(got, k)), (k, data[-80:])
        assert want.meta == got.meta, data[-80:]
    # the tail's scan raising on the part's thread: no parallel scan (the sequential one then)
    def failing(*a):
        raise MemoryError

    monkeypatch.setattr(chrome.js, "scan_object_tail", failing)
    assert chrome._scan_parallel(np.frombuffer(cases[0], np.uint8), 10 ** 6, 64) is None


@pytest.mark.parametrize("join_threads", [1, 2])
def test_large_join_makes_its_columns_without_huge_page_advice(monkeypatch, join_threads):
    """From `TRIM_FROM_ROWS` rows on, every column is joined with numpy's huge-page advice off
    (`pages.huge_pages`), on both threads, and numpy's own setting is back after; below it
    the advice is left as it is."""
    if pages._NUMPY_ADVICE is None:
        pytest.skip("this numpy has no switch for its huge-page advice")
    data = _events(3000, 7)
    joined = []
    join_one = chrome_rows._joined_column

    def spy(*args):
        joined.append(pages._OPEN[-1][1] if pages._OPEN else None)
        return join_one(*args)

    monkeypatch.setattr(chrome_rows, "_joined_column", spy)
    monkeypatch.setattr(chrome, "PARALLEL_SCAN_BYTES", 0)
    monkeypatch.setattr(chrome_rows, "CHUNK_ROWS", 50)
    monkeypatch.setattr(chrome_rows, "PARALLEL_JOIN_ROWS", 0 if join_threads == 2 else 1 << 62)
    for trim_from, advice in ((1 << 62, None), (0, False)):
        monkeypatch.setattr(chrome_rows, "TRIM_FROM_ROWS", trim_from)
        joined.clear()
        _quiet(data)
        assert joined and set(joined) == {advice}
        assert not pages._OPEN


def test_chunked_scan_keeps_slow_number_spans(monkeypatch):
    """Spans are kept only for numbers outside the exact fast path: those are re-parsed."""
    ev = [{"ph": "X", "name": "a", "pid": 1, "tid": 1, "ts": 1, "dur": 2}] * 5
    raw = orjson.dumps(ev).replace(b'"ts":1,', b'"ts":1.00000000000000000001,', 1)
    monkeypatch.setattr(chrome, "PARALLEL_SCAN_BYTES", 0)
    monkeypatch.setattr(chrome_rows, "CHUNK_ROWS", 2)
    t = _quiet(raw)
    assert len(t) == 5 and np.all(t.end - t.start == 2.0)
    buf = np.frombuffer(raw, np.uint8)
    ii, ss, ff, n, *_ = chrome._scan_parallel(buf, 100, 64)
    assert n == 5 and (ss[:, jev.S_FLAGS] & jev.FL_SLOW).tolist() == [jev.FL_SLOW, 0, 0, 0, 0]
    assert ss[:, jev.S_NUM_LEN].tolist() == [22, -1, -1, -1, -1]


def test_interning_tables_grow_past_their_first_size():
    rng = random.Random(11)
    n = 6 * jsp.FIRST_TABLE_SLOTS
    words = [f"w{rng.randint(0, 4 * jsp.FIRST_TABLE_SLOTS)}".encode() for _ in range(n)]
    buf = np.frombuffer(b"".join(words), np.uint8)
    lens = np.array([len(w) for w in words], np.int64)
    offs = np.concatenate([[0], np.cumsum(lens)[:-1]]).astype(np.int64)
    valid = np.array([rng.random() < 0.9 for _ in words])
    ids, first = jsp.intern_spans(buf, offs, lens, valid, 5)
    seen: dict = {}
    for k, w in enumerate(words):
        assert ids[k] == (seen.setdefault(w, len(seen)) if valid[k] else -1)
    assert len(first) == len(seen) > jsp.FIRST_TABLE_SLOTS and all(words[first[v]] == w for w, v in seen.items())
    a = np.array([rng.randint(0, 60) for _ in range(n)], np.int64)
    b = np.array([rng.randint(0, 60) << 33 for _ in range(n)], np.int64)
    ids, first = jsp.intern_pairs(a, b, 7)
    seen = {}
    for k in range(n):
        assert ids[k] == seen.setdefault((a[k], b[k]), len(seen))
    assert len(first) == len(seen) > jsp.FIRST_TABLE_SLOTS


def test_side_rows_load_as_the_event_rows_did(monkeypatch):
    """Counters and flow events in the side rows, through the fast path or scan_event (the
    first key not ``ph``), sequential or chunked in parallel: one Trace."""
    evs = [{"ph": "X", "name": "a", "ts": k * 10, "dur": 8, "pid": 1, "tid": 1 + k % 2} for k in range(300)]
    for k in range(300):
        evs.append({"ph": "C", "name": "mem", "pid": 1, "ts": k * 3, "args": {"rss": k, "heap": 2 * k}})
        evs.append({"ph": "s" if k % 2 == 0 else "f", "id": k // 2, "cat": "c", "pid": 1, "tid": 1 + k % 2,
                    "ts": k * 10 + 1, **({"bp": "e"} if k % 2 else {})})
    fast = orjson.dumps(evs)
    late = orjson.dumps([{k: e[k] for k in sorted(e, key=lambda k: k == "ph")} for e in evs])  # ph last
    monkeypatch.setattr(chrome, "PARALLEL_SCAN_BYTES", 1 << 62)
    want = _quiet(fast)
    assert want.counter_ts.size == 600 and want.flow_id.size == 150
    for data in (fast, late):
        for par, chunk in ((False, None), (True, 7), (True, 1000)):
            monkeypatch.setattr(chrome, "PARALLEL_SCAN_BYTES", 0 if par else 1 << 62)
            if chunk:
                monkeypatch.setattr(chrome_rows, "CHUNK_ROWS", chunk)
            got = _quiet(data)
            for k in ARRAY_DTYPES:
                assert np.array_equal(getattr(want, k), getattr(got, k)), (k, par, chunk)
            assert want.meta["repairs"] == got.meta["repairs"]
            with pytest.raises(tracevis3d.TraceFormatError, match="more than 800 events"):
                _quiet(data, max_events=800)


def test_fast_outputs_grow_and_are_kept_without_a_copy():
    """`FastOut.grow` doubles the fast path's outputs (past the first capacity, several times)
    holding what they held; `keep` takes them at the end as views of the last buffers, one piece
    per column; the ordinals of a later part are shifted in place; `drop` lets them go."""
    from tracevis3d.kernels import sidetables as fs

    rng = np.random.default_rng(3)
    fx, out = chrome_rows.new_fast_out(1 << 10, 0, np.inf)
    want_s, want_f = [[] for _ in range(4)], [[] for _ in range(8)]
    sizes = [(5, 0), (700, 3), (0, 900), (3000, 3000), (1, 1)]
    for m_s, m_f in sizes:
        cnt = fx[2]
        n_s, n_f = int(cnt[fs.C_SAMPLES]), int(cnt[fs.C_FLOWS])
        while not (n_s + m_s + fs.MAX_PAIRS <= fx[4].shape[1] and n_f + m_f < fx[4].shape[1]):
            cap = fx[4].shape[1]
            fx = chrome_rows.FastOut.grow(fx)
            assert fx[4].shape[1] == fx[5].shape[1] == fx[6].shape[1] == 2 * cap and fx[2] is cnt
        _, _, _, _, ov, oi, os_, _ = fx
        cols_s = (ov[0], ov[1], oi[0], oi[1])
        cols_f = (ov[2], oi[2], oi[3], os_[0], os_[1], os_[2], os_[3], os_[4])
        for a, w in zip(cols_s, want_s):
            a[n_s:n_s + m_s] = rng.integers(0, 1000, m_s)
            w.append(a[n_s:n_s + m_s].copy())
        for a, w in zip(cols_f, want_f):
            a[n_f:n_f + m_f] = rng.integers(0, 1000, m_f)
            w.append(a[n_f:n_f + m_f].copy())
        cnt[fs.C_SAMPLES], cnt[fs.C_FLOWS] = n_s + m_s, n_f + m_f
        cnt[fs.C_EVENTS] += m_s + m_f
    out.keep(fx)
    for pieces, want in ((out.samples, want_s), (out.flows, want_f)):
        for got, w in zip(pieces, want):
            assert len(got) == 1 and np.array_equal(got[0], np.concatenate(w))
    assert np.shares_memory(out.flows[0][0], fx[4]) and np.shares_memory(out.samples[2][0], fx[5])
    assert out.n == sum(m_s + m_f for m_s, m_f in sizes)
    before = out.flows[5][0].astype(np.int64)
    out.add_to_ordinals(7)
    assert np.array_equal(out.flows[5][0], np.minimum(before + 7, 2147483647))
    out.drop("flows")
    assert out.flows is None and out.samples is not None


def test_rows_to_columns_equals_numpys_transposition():
    """`jsonrows.rows_to_columns` (blocks of rows, unsigned positions) against ``rows[:k].T``, for
    counts around its block, the three row dtypes and columns longer than ``k`` (left as they were)."""
    from tracevis3d.kernels import jsonrows as jr

    rng = np.random.default_rng(3)
    for dtype, w in ((np.int64, 8), (np.int32, 15), (np.float64, 3)):
        rows = rng.integers(-2 ** 31, 2 ** 31, (1100, w)).astype(dtype)
        for k in (0, 1, jr.TRANSPOSE_BLOCK - 1, jr.TRANSPOSE_BLOCK, jr.TRANSPOSE_BLOCK + 1, 1000, 1100):
            out = np.full((w, 1100), 7, dtype)
            jr.rows_to_columns(rows, k, out)
            assert np.array_equal(out[:, :k], rows[:k].T)
            assert (out[:, k:] == 7).all()


@pytest.mark.filterwarnings("ignore:invalid value encountered:RuntimeWarning")  # (numpy's NaN and inf - inf: the point)
def test_max_by_key_equals_numpys_maximum_at():
    """`jsonrows.max_by_key` and `max_by_key_of_rows` (each thread's last time, `chrome._thread_last_ts`)
    against ``np.maximum.at`` on masked and gathered rows, with NaNs, infinities and ties."""
    from tracevis3d.kernels import jsonrows as jr

    rng = np.random.default_rng(5)
    for trial in range(40):
        n, n_keys = int(rng.integers(0, 300)), int(rng.integers(1, 9))
        key = rng.integers(0, n_keys, n + 5).astype(np.int32 if trial % 2 else np.int64)
        values = rng.choice(np.array([np.nan, np.inf, -np.inf, 0.0, 1.5, 1.5, -2.0]), n + 5) + \
            (rng.random(n + 5) if trial % 3 else 0.0)
        take = rng.random(n) < 0.7
        want = np.full(n_keys, -np.inf)
        if trial % 4 == 0:
            want[0] = np.nan
        got = want.copy()
        np.maximum.at(want, key[:n][take], values[:n][take])
        jr.max_by_key(got, key, values, take)
        assert np.array_equal(got, want, equal_nan=True), trial
        rows = rng.integers(0, n + 5, int(rng.integers(0, 50)))
        start, length = values[rng.integers(0, n + 5, rows.size)], values[rng.integers(0, n + 5, rows.size)]
        np.maximum.at(want, key[rows], start + length)
        jr.max_by_key_of_rows(got, key, rows, start, length)
        assert np.array_equal(got, want, equal_nan=True), trial


def _same_piece(p, q) -> bool:
    if type(p) is not type(q):
        return False
    if isinstance(p, np.ndarray):
        return p.dtype == q.dtype and p.tobytes() == q.tobytes()
    if isinstance(p, chrome_rows._Coded):
        return (p.codes.dtype, p.codes.tobytes(), p.base, p.lo, p.hi) == \
            (q.codes.dtype, q.codes.tobytes(), q.base, q.lo, q.hi)
    return (p.dtype == q.dtype and p.n == q.n and np.array(p.value, p.dtype).tobytes() == np.array(q.value, q.dtype).tobytes()
            and p.at.dtype == q.at.dtype and np.array_equal(p.at, q.at) and p.vals.dtype == q.vals.dtype
            and p.vals.tobytes() == q.vals.tobytes())


def test_chunk_pieces_equal_each_columns_piece():
    """`chrome_rows._chunk_pieces` (`jsonrows.column_stats`, `rows_differing`) against `_piece` of
    each column: constant columns, a few rows differing (sparse) and many (coded in 1, 2, 4 or 8
    bytes; floats copied, NaNs and -0.0 told apart by their bits), for the three row dtypes."""
    rng = np.random.default_rng(17)
    for trial in range(60):
        k = int(rng.integers(1, 3000))
        for dtype, w in ((np.int64, 8), (np.int32, 15), (np.float64, 3)):
            t = np.empty((w, k + 7), dtype)
            for c in range(w):
                mode = (trial + c) % 5
                base = rng.choice([0, -5, 2 ** 31 - 3, -2 ** 31, 2 ** 40]) if dtype == np.int64 else \
                    rng.choice([0, -5, 2 ** 31 - 300]) if dtype == np.int32 else rng.choice([0.0, -0.0, np.nan, 1.5])
                col = np.full(k, base, dtype)
                if mode == 1:  # a few differ: sparse
                    col[rng.integers(0, k, max(1, k // 200))] = 7
                elif mode >= 2:  # many: dense, in a range of 2^8, 2^16 or wider
                    span = (1 << 7, 1 << 15, 1 << 30)[mode - 2]
                    col = (rng.integers(0, span, k) + (base if dtype != np.float64 else 0)).astype(dtype) \
                        if dtype != np.float64 else rng.choice(np.array([np.nan, -0.0, 0.0, 1.0, 2.5]), k)
                t[c, :k] = col
            got = chrome_rows._chunk_pieces(t, k)
            want = [chrome_rows._piece(t[c, :k]) for c in range(w)]
            assert all(_same_piece(g, q) for g, q in zip(got, want)), (trial, dtype)


class _Rep:
    def __init__(self):
        self.items = []

    def add(self, code, count, first=None):
        self.items.append((code, int(count), first))


def _x_calls_numpy(rep, xr, x_flags, xdur, tdur, ts, max_t):
    """The numpy form `chrome._x_calls` had before `jsonrows.x_call_times`: the twin."""
    has_dur = (x_flags & jev.FL_DUR) != 0
    no_dur_key = np.flatnonzero(~has_dur)
    if no_dur_key.size:
        xdur[no_dur_key] = tdur[xr[no_dur_key]]
    no_dur = ~has_dur & ((x_flags & jev.FL_TDUR) == 0)
    rep.add("no_dur", int(no_dur.sum()), int(xr[np.flatnonzero(no_dur)[0]]) if no_dur.any() else None)
    xdur[no_dur] = 0.0
    x_ts = ts[xr]
    with np.errstate(over="ignore", invalid="ignore"):
        x_end = np.abs(np.maximum(xdur, 0.0) + x_ts)
    bad_dur = ~no_dur & ~(np.isfinite(xdur) & (x_end <= max_t))
    rep.add("bad_dur", int(bad_dur.sum()), int(xr[np.flatnonzero(bad_dur)[0]]) if bad_dur.any() else None)
    neg = xdur < 0
    rep.add("negative_dur", int(neg.sum()), int(xr[np.flatnonzero(neg)[0]]) if neg.any() else None)
    xdur[neg] = 0.0
    if bad_dur.any():
        ok = ~bad_dur
        return xr[ok], xdur[ok], x_ts[ok]
    return xr, xdur, x_ts


@pytest.mark.filterwarnings("ignore:invalid value encountered:RuntimeWarning")
@pytest.mark.filterwarnings("ignore:overflow encountered:RuntimeWarning")
def test_x_calls_equal_their_numpy_form():
    """`chrome._x_calls` (`jsonrows.x_call_times`) against the numpy form it replaced: durations
    missing (tdur or none), negative, NaN, infinite, ends past the limit, times NaN and large."""
    rng = np.random.default_rng(23)
    odd = np.array([np.nan, np.inf, -np.inf, -3.0, 0.0, 2.5, 1e300, -0.0])
    for trial in range(40):
        n_rows = int(rng.integers(1, 300))
        xr = np.sort(rng.choice(n_rows, int(rng.integers(0, n_rows + 1)), replace=False)).astype(np.int64)
        flags = rng.choice(np.array([jev.FL_DUR, jev.FL_DUR | jev.FL_TDUR, jev.FL_TDUR, 0, jev.FL_DUR | 1]),
                           xr.size).astype(np.int32)
        dur = rng.choice(odd, xr.size) if trial % 2 else rng.random(xr.size) * 10
        tdur = rng.choice(odd, n_rows)
        ts = np.where(rng.random(n_rows) < 0.1, rng.choice(odd, n_rows), rng.random(n_rows) * 1e6)
        max_t = 1e17 if trial % 3 else 5e5
        r1, r2 = _Rep(), _Rep()
        got = chrome._x_calls(r1, xr, flags, dur.copy(), tdur, ts, max_t)
        want = _x_calls_numpy(r2, xr, flags, dur.copy(), tdur, ts, max_t)
        assert r1.items == r2.items, trial
        for g, w in zip(got, want):
            assert g.dtype == w.dtype and g.tobytes() == w.tobytes(), trial


def _name_rows(words, phases):
    """The scanner's rows of events named ``words`` (None: no name) of ``phases``, their names laid
    out one after another in a buffer: (buffer, ii, ss)."""
    blob = b"".join(w or b"" for w in words)
    ii = np.zeros((len(words), jev.N_I), np.int64)
    ss = np.zeros((len(words), jev.N_S), np.int32)
    at = 0
    for k, (w, ph) in enumerate(zip(words, phases)):
        ii[k, jev.I_NAME_OFF] = at
        ss[k, jev.S_NAME_LEN] = -1 if w is None else len(w)
        ss[k, jev.S_PH] = ord(ph)
        at += len(w or b"")
    return np.frombuffer(blob + b"\0" * 16, np.uint8), ii, ss


def _twin_names(words, phases):
    """The brute-force twin of the names' numbering: a dict of first uses of the named rows."""
    seen: dict = {}
    ids, first = [], []
    for k, (w, ph) in enumerate(zip(words, phases)):
        if w is None or ph in "stf":
            ids.append(-1)
            continue
        if w not in seen:
            seen[w] = len(seen)
            first.append(k)
        ids.append(seen[w])
    return ids, first


@pytest.mark.parametrize("seed", range(6))
def test_names_interned_part_by_part_equal_their_first_uses(seed):
    """`chrome_rows.PartNames` (a parallel scan's parts' names, interned a chunk at a time) merged
    (`merged_part_names`): the ids and first rows of a dict of first uses over all the rows, for
    any cut into parts and chunks; names that differ only in their middle (the cheap hash's
    collisions) stay apart; flow events and rows without a name get -1."""
    rng = random.Random(seed)
    mid = [b"x" * 20 + str(j).encode() + b"y" * 20 for j in range(30)]  # same head and tail
    pool = [f"f{j}".encode() for j in range(200)] + mid + [b"", b"a" * 300]
    n = 3000
    words = [None if rng.random() < 0.05 else rng.choice(pool) for _ in range(n)]
    phases = [rng.choice("XXXXXBEistf") for _ in range(n)]
    buf, ii, ss = _name_rows(words, phases)
    cuts = sorted(rng.sample(range(1, n), rng.randint(0, 9)))
    parts = []
    for lo, hi in zip([0] + cuts, cuts + [n]):
        p = chrome_rows.PartNames()
        r = lo
        while r < hi:
            k = min(hi - r, rng.choice([1, 7, 64, 1000]))
            p.add(buf, ii[r: r + k], ss[r: r + k], k, r - lo, seed)
            r += k
        named = [w for w, ph in zip(words[lo:hi], phases[lo:hi]) if w is not None and ph not in "stf"]
        assert p.budget == chrome_rows.INTERN_BUDGET0 + 2 * (sum(map(len, named)) + len(named))  # (intern_work)
        parts.append(p)
    ids, first = chrome_rows.merged_part_names(buf, parts, seed)
    t_ids, t_first = _twin_names(words, phases)
    assert ids.tolist() == t_ids and first.tolist() == t_first
    # the part-by-part numbering is the one `interned_spans` gives the rows in one pass
    off = np.ascontiguousarray(ii[:, jev.I_NAME_OFF])
    ln = np.maximum(ss[:, jev.S_NAME_LEN], 0).astype(np.int64)
    valid = (ss[:, jev.S_NAME_LEN] >= 0) & ~np.isin(ss[:, jev.S_PH], [ord(c) for c in "stf"])
    one_ids, one_first = jsp.intern_spans(buf, off, ln, valid, seed)
    assert np.array_equal(one_ids, ids) and np.array_equal(one_first, first)


class _RecordedGiveBack:
    """What `chrome_rows.interned_spans` tells a give-back (`chrome._NameGiveBack`'s calls): the
    rows after each block and the table's first spans then."""

    def __init__(self):
        self.after_rows, self.kept, self.restored = [], [], 0

    def before(self, off, valid):
        pass

    def after(self, hi, state):
        self.after_rows.append(hi)
        m = int(state[5][0])
        self.kept.append(sorted(zip(state[2][:m].tolist(), state[3][:m].tolist())))

    def restore(self):
        self.restored += 1


@pytest.mark.parametrize("seed", range(4))
def test_names_interned_in_two_halves_equal_one_pass(seed, monkeypatch):
    """While the file is given back, `interned_spans` interns the second half of the rows on a
    second thread into a table of its own and merges it (`_interned_in_halves`): the ids and first
    rows of one pass; the give-back told of the first half's blocks, then of the end with every
    distinct name's first span in the table (the pages it keeps)."""
    rng = random.Random(seed)
    pool = [f"g{j}".encode() for j in range(150)] + [b"x" * 20 + str(j).encode() + b"y" * 20 for j in range(20)]
    n = 4000
    words = [None if rng.random() < 0.05 else rng.choice(pool[: 60 if k < n // 2 else None]) for k in range(n)]
    phases = [rng.choice("XXXXBEistf") for _ in range(n)]
    buf, ii, ss = _name_rows(words, phases)

    def block_of(lo, hi):
        off = np.ascontiguousarray(ii[lo:hi, jev.I_NAME_OFF])
        ln = np.maximum(ss[lo:hi, jev.S_NAME_LEN], 0).astype(np.int64)
        valid = (ss[lo:hi, jev.S_NAME_LEN] >= 0) & ~np.isin(ss[lo:hi, jev.S_PH], [ord(c) for c in "stf"])
        return off, ln, valid

    one_ids, one_first = chrome_rows.interned_spans(buf, block_of, n, seed)
    monkeypatch.setattr(chrome_rows, "PARALLEL_INTERN_ROWS", 0)
    monkeypatch.setattr(chrome_rows, "INTERN_BLOCK", rng.choice([7, 100, 1000]))
    monkeypatch.setattr(chrome_rows, "GIVE_BACK_BLOCK", rng.choice([5, 64, 3000]))
    gb = _RecordedGiveBack()
    ids, first = chrome_rows.interned_spans(buf, block_of, n, seed, gb)
    assert np.array_equal(ids, one_ids) and np.array_equal(first, one_first)
    t_ids, t_first = _twin_names(words, phases)
    assert ids.tolist() == t_ids and first.tolist() == t_first
    assert gb.after_rows[-1] == n and max(gb.after_rows[:-1]) == n // 2 and not gb.restored
    spans = {(int(ii[r, jev.I_NAME_OFF]), int(ss[r, jev.S_NAME_LEN])) for r in first.tolist()}
    assert set(gb.kept[-1]) == spans  # every distinct name's first occurrence, both halves'


def test_names_interned_in_halves_fall_back_to_one_pass_where_the_cheap_hash_gives_up(monkeypatch):
    """A second half of thousands of names in one probe chain of the cheap hash: its table gives up,
    and the rows are interned in one pass (the keyed hash after the cheap one, the bytes read again
    first: ``restore``), with the numbers of one pass."""
    words = [b"a%d" % (j % 50) for j in range(3000)] + [b"h" * 16 + f"{j:06d}".encode() + b"t" * 16 for j in range(5000)]
    phases = "X" * len(words)
    buf, ii, ss = _name_rows(words, phases)

    def block_of(lo, hi):
        return (np.ascontiguousarray(ii[lo:hi, jev.I_NAME_OFF]), ss[lo:hi, jev.S_NAME_LEN].astype(np.int64),
                np.ones(hi - lo, bool))

    monkeypatch.setattr(chrome_rows, "PARALLEL_INTERN_ROWS", 0)
    gb = _RecordedGiveBack()
    ids, first = chrome_rows.interned_spans(buf, block_of, len(words), 1, gb)
    t_ids, t_first = _twin_names(words, phases)
    assert ids.tolist() == t_ids and first.tolist() == t_first and gb.restored == 1


def test_names_interned_part_by_part_give_up_where_the_cheap_hash_works_too_hard():
    """Thousands of distinct names with the same length, head and tail all fall in one probe
    chain of the cheap hash: the part gives up (``ok`` False) and the merge answers None, so the
    load interns the names after the scan with the keyed hash (`interned_spans`)."""
    words = [b"h" * 16 + f"{j:06d}".encode() + b"t" * 16 for j in range(4000)]
    buf, ii, ss = _name_rows(words, "X" * len(words))
    p = chrome_rows.PartNames()
    p.add(buf, ii, ss, len(words), 0, 1)
    assert not p.ok and chrome_rows.merged_part_names(buf, [p], 1) is None
    q = chrome_rows.PartNames()
    q.add(buf, ii[:10], ss[:10], 10, 0, 1)
    assert chrome_rows.merged_part_names(buf, [q, None], 1) is None and chrome_rows.merged_part_names(buf, [], 1) is None


def test_kind_rules_given_as_an_iterator_serve_every_stage():
    """The names' kinds are classified on a second thread, the "(unnamed)" function's on the main
    one: kind rules passed as a one-shot iterator reach both (the load takes them as a list)."""
    from tracevis3d.kinds import KIND_RULES
    from tracevis3d.model import KIND_IO

    ev = [{"ph": "X", "name": "threading.Lock.acquire", "pid": 1, "tid": 1, "ts": 0, "dur": 5},
          {"ph": "X", "pid": 1, "tid": 1, "ts": 1, "dur": 1}]
    rules = [(KIND_IO, r"\(unnamed\)")] + list(KIND_RULES)
    as_list = _quiet(orjson.dumps(ev), kind_rules=rules)
    as_iter = _quiet(orjson.dumps(ev), kind_rules=iter(rules))
    assert as_list.function_names == as_iter.function_names == ["threading.Lock.acquire", "(unnamed)"]
    assert as_iter.kind.tolist() == as_list.kind.tolist() and as_list.kind[1] == KIND_IO


@pytest.mark.parametrize("seed", range(6))
def test_functions_of_calls_equal_their_numpy_form(seed):
    """`jsonspans.functions_of_calls` against the numpy form `chrome._function_table` had: each
    call's name gathered, an unnamed one taken as the name appended after the others, renumbered
    by first use, and each function's first call where the running maximum of the ids grows."""
    rng = np.random.default_rng(seed)
    n_names = int(rng.integers(1, 50))
    n_rows = int(rng.integers(0, 400))
    name_id = rng.integers(-1 if seed % 2 else 0, n_names, n_rows).astype(np.int32)
    rows = rng.integers(0, max(n_rows, 1), int(rng.integers(0, 600)) if n_rows else 0).astype(np.int64)
    func, fn_names, first, unnamed = jsp.functions_of_calls(name_id, rows, n_names)
    c_name = name_id[rows]
    want_unnamed = bool((c_name < 0).any())
    c_name = np.where(c_name < 0, n_names, c_name)
    ids, inverse = np.unique(c_name, return_inverse=True)
    first_at = np.array([np.flatnonzero(c_name == v)[0] for v in ids], np.int64)
    by_first = np.argsort(first_at, kind="stable")
    rank = np.empty(ids.size, np.int64)
    rank[by_first] = np.arange(ids.size)
    assert unnamed == want_unnamed
    assert func.dtype == np.int32 and np.array_equal(func, rank[inverse])
    assert fn_names.dtype == np.int64 and np.array_equal(fn_names, ids[by_first])
    assert first.dtype == np.int64 and np.array_equal(first, first_at[by_first])
    if func.size:  # the first calls are where the running maximum grows, as before
        grows = np.concatenate([[True], np.maximum.accumulate(func)[1:] > np.maximum.accumulate(func)[:-1]])
        assert np.array_equal(first, np.flatnonzero(grows))


def test_x_calls_of_one_run_of_rows_equal_those_gathered():
    """X events that are one run of rows (`chrome._as_block`: their flags and durations read as
    views, a missing dur taken from tdur and a negative one zeroed in place) load as the same
    X events interleaved with instants do (their rows gathered)."""
    ev = [{"ph": "X", "name": f"f{k % 7}", "pid": 1, "tid": 1 + k % 2, "ts": 10.0 * k, "dur": 4.0}
          for k in range(60)]
    ev[3]["dur"] = -2.0  # negative: 0
    del ev[5]["dur"]
    ev[5]["tdur"] = 3.0  # no dur: tdur's
    del ev[8]["dur"]  # neither: 0
    ev[11]["dur"] = 1e300  # ends past the limit: dropped
    run = [{"ph": "M", "pid": 1, "tid": 1, "name": "thread_name", "args": {"name": "main"}}] + ev
    mixed = run[:1] + [e for k, x in enumerate(ev)
                       for e in ([x, {"ph": "i", "name": "tick", "pid": 1, "tid": 1, "ts": 10.0 * k + 1, "s": "t"}]
                                 if k % 9 == 4 else [x])]
    a, b = _quiet(orjson.dumps(run)), _quiet(orjson.dumps(mixed))
    assert len(a) == 59 and b.instant_ts.size == 7
    for k in ("func", "start", "end", "depth", "parent", "thread"):
        assert np.array_equal(getattr(a, k), getattr(b, k)), k
    assert a.function_names == b.function_names
    for code in ("negative_dur", "no_dur", "bad_dur"):
        assert a.meta["repairs"][code]["count"] == b.meta["repairs"][code]["count"] >= 1, code
