"""Hostile and broken input (issue 9): no crash, no hang, bounded memory, an error
that says where, a warning with a count for every repair.

Three kinds of tests:
- brute-force twins of every kernel the fix changed or added (B/E pairing, flow
  binding, sampled stacks, interning, the JSON validator, line:column, the
  default kind rules) on generated inputs;
- each hostile class of the review, generated at a size where the old
  quadratic cost took minutes (or its memory ran out), loaded in a fresh process
  under an address-space limit with a wall-clock hang guard;
- one test per defect that the review reproduced with a small file.
"""
import gzip
import io
import json
import os
import pathlib
import random
import re
import stat
import threading
import warnings

import numpy as np
import orjson
import pytest

import tracevis3d
from tracevis3d import TraceFormatError, TraceWarning
from tracevis3d.io import load_bytes
from tracevis3d.io.limits import Limits
from tracevis3d.kernels import chrome_tree as ct
from tracevis3d.kernels import jsonspans as jsp
from tracevis3d.kernels import jsontokens as jt
from tracevis3d.kernels import jsonvalid as jv
from tracevis3d.model import ARRAY_DTYPES

import fuzz_hostile  # noqa: E402
import hostile_cases as hc  # noqa: E402


def _quiet(data, **kw):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", TraceWarning)
        if isinstance(data, (bytes, bytearray)):
            return load_bytes(bytes(data), **kw)
        return tracevis3d.load(data, **kw)


def _x(name, ts, dur, tid=1, **kw):
    ev = {"ph": "X", "name": name, "ts": ts, "dur": dur, "pid": 1, "tid": tid}
    ev.update(kw)
    return ev


@pytest.fixture(scope="module")
def warm(tmp_path_factory):
    """Compile (or load from the cache) every importer kernel in this process,
    so the guarded child processes below only load them."""
    d = tmp_path_factory.mktemp("warm")
    evs = [_x("Lock.acquire", 0, 10, args={"lock": "L"}), {"ph": "B", "name": "b", "ts": 1, "pid": 1, "tid": 1},
           {"ph": "E", "name": "b", "ts": 2, "pid": 1, "tid": 1},
           {"ph": "s", "id": 1, "cat": "c", "ts": 3, "pid": 1, "tid": 1, "name": "f"},
           {"ph": "f", "id": 1, "cat": "c", "ts": 4, "pid": 1, "tid": 1, "name": "f"},
           {"ph": "i", "s": "t", "ts": 5, "pid": 1, "tid": 1, "name": "m"}]
    t = _quiet(orjson.dumps(evs))
    _quiet(hc.samples_deep_chain(2000)[0])
    _quiet(gzip.compress(orjson.dumps(evs)))
    tracevis3d.save(t, d / "w.tv3d.npz")
    tracevis3d.load(d / "w.tv3d.npz")
    return d


# ------------------------------------------------------------ brute-force twins
def _match_begin_end_brute(thread, ts, is_begin, name, thread_last_ts):
    """The pairing rules of kernels/chrome_tree.py written the plain way: the
    stack and the held-back E list are scanned (quadratic; the old kernel)."""
    out, warn_count, warn_first = [], [0, 0, 0], [-1, -1, -1]
    stack, pend, pend_ts, cur = [], [], None, None
    n = len(ts)
    for k in range(n + 1):
        new_thread = k == n or thread[k] != cur
        if pend and (new_thread or ts[k] != pend_ts):
            for q in pend:
                warn_count[ct.W_E_UNMATCHED] += 1
                if warn_first[ct.W_E_UNMATCHED] < 0:
                    warn_first[ct.W_E_UNMATCHED] = q
            pend = []
        if new_thread:
            while stack:
                b = stack.pop()
                out.append((b, ts[b], max(thread_last_ts[cur], ts[b])))
                warn_count[ct.W_UNCLOSED] += 1
                if warn_first[ct.W_UNCLOSED] < 0:
                    warn_first[ct.W_UNCLOSED] = b
            if k == n:
                break
            cur = thread[k]
        if is_begin[k]:
            hit = next((q for q in range(len(pend)) if name[pend[q]] == name[k]), -1)
            if hit >= 0:
                out.append((k, ts[k], ts[k]))
                pend.pop(hit)
            else:
                stack.append(k)
            continue
        target = -1
        if stack:
            if name[k] < 0 or name[stack[-1]] == name[k]:
                target = len(stack) - 1
            else:
                target = next((q for q in range(len(stack) - 2, -1, -1) if name[stack[q]] == name[k]), -1)
        if target < 0:
            if not pend:
                pend_ts = ts[k]
            pend.append(k)
            continue
        if target < len(stack) - 1:
            warn_count[ct.W_E_MISMATCH] += 1
            if warn_first[ct.W_E_MISMATCH] < 0:
                warn_first[ct.W_E_MISMATCH] = k
        while len(stack) > target:
            b = stack.pop()
            out.append((b, ts[b], max(ts[k], ts[b])))
    return out, warn_count, warn_first


def test_match_begin_end_equals_brute_force():
    rng = np.random.default_rng(1)
    for trial in range(400):
        n = int(rng.integers(1, 120))
        thread = np.sort(rng.integers(0, 3, n))
        ts = np.zeros(n)
        for t in range(3):  # few distinct timestamps: many held-back E events at one ts
            m = thread == t
            ts[m] = np.sort(rng.integers(0, 1 + int(rng.integers(1, 8)), int(m.sum()))).astype(float)
        is_begin = rng.random(n) < rng.uniform(0.2, 0.8)
        name = rng.integers(-1, int(rng.integers(1, 5)), n).astype(np.int32)
        last = np.array([ts[thread == t].max() + 1 if (thread == t).any() else 0.0 for t in range(3)])
        b, s, e, wc, wf = ct.match_begin_end(thread, ts, is_begin, name, last)
        ref, rwc, rwf = _match_begin_end_brute(list(thread), list(ts), list(is_begin), list(name), list(last))
        assert list(zip(b.tolist(), s.tolist(), e.tolist())) == ref, trial
        assert wc.tolist() == rwc and wf.tolist() == rwf, trial


def _enclosing_brute(start, end, parent, lo, hi, ts):
    """The last call starting at or before ts, then up its parents to one ending at or after ts."""
    i = max((j for j in range(lo, hi) if start[j] <= ts), default=-1)
    while i >= lo:
        if end[i] >= ts:
            return i
        i = parent[i]
    return -1


def test_bind_flow_points_equals_brute_force(monkeypatch):
    monkeypatch.setattr(ct, "PARALLEL_BIND_POINTS", 1)  # the two-thread search on every trial
    rng = random.Random(2)
    for trial in range(60):
        evs = []
        for tid in (1, 2):
            t = 0
            for _ in range(rng.randint(1, 40)):
                d = rng.randint(0, 30)
                evs.append(_x(rng.choice("abc"), t, d, tid=tid))
                t += rng.randint(0, 12)
        tr = _quiet(orjson.dumps(evs))
        rg = tr.thread_ranges()
        lo, hi = rg[:, 0].copy(), rg[:, 1].copy()
        m = 200
        f_thread = np.array([rng.randint(-1, tr.n_threads - 1) for _ in range(m)], np.int64)
        f_ts = np.array([rng.uniform(-5, tr.span + 5) if rng.random() < 0.5 else float(rng.choice(tr.start))
                         for _ in range(m)])
        f_next = np.array([rng.random() < 0.3 for _ in range(m)])
        got = ct.bind_flow_points(tr.start, tr.end, tr.parent, lo, hi, f_thread, f_ts, f_next)
        # the bucketed search and the sweep it falls back to (a walk budget of 0: the sweep alone) agree
        swept = ct.bind_flow_points(tr.start, tr.end, tr.parent, lo, hi, f_thread, f_ts, f_next, 0)
        assert np.array_equal(got, swept), trial
        threaded = ct.bind_flow_points_threaded(tr.start, tr.end, tr.parent, lo, hi, f_thread, f_ts, f_next)
        assert np.array_equal(threaded, got), trial
        for k in range(m):
            t = int(f_thread[k])
            if t < 0 or hi[t] <= lo[t]:
                assert got[k] == -1
                continue
            want = -1
            if f_next[k]:
                after = [j for j in range(lo[t], hi[t]) if tr.start[j] >= f_ts[k]]
                want = min(after) if after else -1
            if want < 0:
                want = _enclosing_brute(tr.start, tr.end, tr.parent, lo[t], hi[t], f_ts[k])
            assert got[k] == want, (trial, k)


def test_bucket_points_groups_the_points_by_bucket_in_file_order():
    """`bucket_points` is a stable counting sort of the points by their bucket of `bind_index`
    (the brute force: each point's bucket computed on its own, then a stable argsort); points on
    no thread, or on a thread without calls, go last."""
    rng = np.random.default_rng(5)
    for trial in range(20):
        n_threads = int(rng.integers(1, 5))
        sizes = rng.integers(0, 60, n_threads)
        hi = np.cumsum(sizes).astype(np.int64)
        lo = hi - sizes
        start = np.concatenate([np.sort(rng.uniform(0, 100, s)) for s in sizes]) if sizes.sum() else np.zeros(0)
        m = int(rng.integers(0, 300))
        f_thread = rng.integers(-1, n_threads + 1, m).astype(np.int64)
        f_ts = rng.uniform(-10, 110, m)
        f_next = rng.random(m) < 0.3
        index = ct.bind_index(start, lo, hi)
        base, _, t_a, t_scale = index
        nq = int(base[-1])
        want_q = np.array([nq if not (0 <= t < n_threads and hi[t] > lo[t]) else
                           int(base[t]) + ct._bucket(f_ts[k], t_a[t], t_scale[t], int(base[t + 1] - base[t] - 1))
                           for k, t in enumerate(f_thread)], np.int64)
        order = np.argsort(want_q, kind="stable")
        ptr, point, ts, nxt = ct.bucket_points(base, t_a, t_scale, f_thread, f_ts, f_next)
        assert np.array_equal(point, order), trial
        assert np.array_equal(ts, f_ts[order]) and np.array_equal(nxt, f_next[order])
        assert np.array_equal(ptr, np.searchsorted(want_q[order], np.arange(nq + 2), side="left"))
        # the same buckets from the calls in any order (`bucket_points_early`: before the sort)
        call_thread = np.repeat(np.arange(n_threads), sizes)
        perm = rng.permutation(start.size)
        scales = ct.bucket_scales(*ct.thread_start_spans(call_thread[perm], start[perm], n_threads))
        assert all(np.array_equal(x, y) for x, y in zip(scales, (base, t_a, t_scale))), trial


def test_bind_flow_points_threaded_deep_chain_sweeps():
    """Points that each walk up a 5,000-deep chain pass the halves' walk budget: the threaded
    search falls back to the sweep, as the sequential one does, with the same answers."""
    depth = 5000
    start = np.arange(depth, dtype=np.float64)
    end = 2.0 * depth - np.arange(depth)  # nested, each ends before its parent: call i at 2·depth − i
    parent = np.arange(-1, depth - 1, dtype=np.int32)
    lo, hi = np.array([0], np.int64), np.array([depth], np.int64)
    m = 4000
    f_ts = np.linspace(depth + 1.5, 2.0 * depth - 0.5, m)  # after the deepest call ended
    f_thread = np.zeros(m, np.int64)
    f_next = np.zeros(m, np.bool_)
    ok = ct._bind_by_search(start, end, parent, lo, hi, f_thread, f_ts, f_next, 4 * m + 1024)[1]
    assert not ok  # the case is one of a budget passed
    want = ct.bind_flow_points(start, end, parent, lo, hi, f_thread, f_ts, f_next, 0)
    assert np.array_equal(want, np.floor(2.0 * depth - f_ts).astype(np.int32))  # the call still open
    with pytest.MonkeyPatch.context() as mp:
        mp.setattr(ct, "PARALLEL_BIND_POINTS", 1)
        assert np.array_equal(ct.bind_flow_points_threaded(start, end, parent, lo, hi, f_thread, f_ts, f_next), want)


def test_bind_flow_points_threaded_with_early_buckets():
    """The points grouped before the calls were sorted (`bucket_points_early`, the importer's
    stage) give the sequential search's answers; buckets grouped from other calls (some dropped
    after the grouping) are not used: the points are grouped again, with the same answers."""
    rng = np.random.default_rng(11)
    tr = tracevis3d.synthetic(3000, threads=3, seed=4)
    start, end, parent = tr.start, tr.end, tr.parent
    thread = np.asarray(tr.thread, np.int64)
    ranges = np.searchsorted(thread, np.arange(tr.n_threads + 1))
    lo, hi = ranges[:-1].astype(np.int64), ranges[1:].astype(np.int64)
    m = 5000
    f_thread = rng.integers(0, tr.n_threads, m).astype(np.int64)
    f_ts = rng.uniform(float(start.min()) - 5, float(end.max()) + 5, m)
    f_next = rng.random(m) < 0.3
    want = ct.bind_flow_points(start, end, parent, lo, hi, f_thread, f_ts, f_next)
    perm = rng.permutation(start.size)
    with pytest.MonkeyPatch.context() as mp:
        mp.setattr(ct, "PARALLEL_BIND_POINTS", 1)
        early = ct.bucket_points_early(thread[perm], start[perm], tr.n_threads, f_thread, f_ts, f_next)
        assert early is not None
        got = ct.bind_flow_points_threaded(start, end, parent, lo, hi, f_thread, f_ts, f_next, early)
        assert np.array_equal(got, want)
        keep = np.ones(start.size, bool)
        keep[lo] = False  # each thread's first call: other first starts, other buckets
        other = ct.bucket_points_early(thread[keep], start[keep], tr.n_threads, f_thread, f_ts, f_next)
        assert not np.array_equal(other[0][1], early[0][1])
        got = ct.bind_flow_points_threaded(start, end, parent, lo, hi, f_thread, f_ts, f_next, other)
        assert np.array_equal(got, want)


def _samples_brute(frames_parent, samples):
    """Sampled stacks the plain way: each stack by walking its parent chain, the
    common prefix with the open stack compared frame by frame."""
    calls = []
    open_ = []
    cur, last_t = None, None
    for th, t, f in samples:  # sorted by (thread, ts)
        if th != cur:
            for c in reversed(open_):
                calls[c][2] = last_t
            open_, cur = [], th
        st = []
        x = f
        while x >= 0:
            st.append(x)
            x = frames_parent[x]
        st = st[::-1]
        common = 0
        while common < min(len(open_), len(st)) and calls[open_[common]][0] == st[common]:
            common += 1
        for c in reversed(open_[common:]):
            calls[c][2] = t
        open_ = open_[:common]
        for fr in st[common:]:
            calls.append([fr, t, t, th])
            open_.append(len(calls) - 1)
        last_t = t
    for c in open_:
        calls[c][2] = last_t
    return [tuple(c) for c in calls]


def test_sampled_stacks_equal_brute_force():
    rng = random.Random(3)
    for trial in range(200):
        nf = rng.randint(1, 30)
        parent = [rng.randint(-1, k - 1) if k else -1 for k in range(nf)]  # a forest, parents first
        samples = sorted((rng.randint(0, 2), float(rng.randint(0, 20)), rng.randint(-1, nf - 1))
                         for _ in range(rng.randint(1, 40)))
        par, depth, ncyc, ndeep = ct.frame_depths(np.array(parent, np.int64), 1000)
        assert ncyc == ndeep == 0 and par.tolist() == parent
        th = np.array([s[0] for s in samples], np.int64)
        tt = np.array([s[1] for s in samples])
        ff = np.array([s[2] for s in samples], np.int64)
        f, s, e, t, status = ct.expand_samples(th, tt, ff, par, depth, 10 ** 6)
        assert status == 0
        got = list(zip(f.tolist(), s.tolist(), e.tolist(), t.tolist()))
        assert got == _samples_brute(parent, samples), trial
    # cycles and too-deep chains are cut, every frame gets a finite depth
    par, depth, ncyc, ndeep = ct.frame_depths(np.array([1, 2, 0, 2], np.int64), 1000)
    assert ncyc == 1 and (par >= -1).all() and depth.max() <= 3
    chain = np.arange(-1, 999, dtype=np.int64)  # 1000 frames, each the child of the previous
    par, depth, ncyc, ndeep = ct.frame_depths(chain, 99)
    assert ndeep == 9 and depth.max() == 99
    assert ct.expand_samples(np.zeros(3, np.int64), np.arange(3.0), np.array([999, 0, 999]), chain,
                             np.arange(1000), 1500)[4] == -1  # 1999 calls: over the limit


def test_native_validator_equals_check():
    """`first_bad_call` (the native loader's one-pass check) rejects exactly the
    traces `Trace.check()` rejects, on valid traces with one value changed."""
    from tracevis3d.kernels.tree import first_bad_call
    from tracevis3d.model import CALL_DTYPES, KIND_NAMES, TraceInvariantError

    rng = np.random.default_rng(7)
    base = [tracevis3d.synthetic(int(rng.integers(2, 200)), threads=int(rng.integers(1, 4)), seed=s) for s in range(6)]
    n_bad = 0
    for trial in range(1500):
        t = base[trial % len(base)]
        u = tracevis3d.model.Trace(**{**t.__dict__, **{k: getattr(t, k).copy() for k in CALL_DTYPES}})
        name = str(rng.choice(list(CALL_DTYPES)))
        a = getattr(u, name)
        i = int(rng.integers(0, len(a)))
        if a.dtype.kind == "f":
            a[i] = rng.choice([np.nan, np.inf, a[i] + rng.normal() * 5, a[max(i - 1, 0)], 0.0])
        else:
            a[i] = rng.choice([a[i] + 1, a[i] - 1, -1, -2, len(a), len(a) + 5, 0, a[rng.integers(0, len(a))]])
        code, at = first_bad_call(u.func, u.start, u.end, u.depth, u.parent, u.end_index, u.thread, u.kind,
                                  u.n_functions, u.n_threads, len(KIND_NAMES), np.inf)
        try:
            u.check()
            valid = True
        except TraceInvariantError:
            valid = False
        assert (code == 0) == valid, (trial, name, i, code, at)
        n_bad += not valid
    assert n_bad > 500  # most changes break an invariant: both sides were exercised


def test_interning_equals_a_dict_even_when_built_to_collide():
    rng = random.Random(4)
    for trial in range(30):
        words = [("a" * 20 + f"{rng.randint(0, 50):08d}" + "z" * 20).encode() if trial % 2 else
                 rng.choice([b"x", b"yy", b"", b"abc" * 20]) + str(rng.randint(0, 9)).encode() for _ in range(400)]
        buf = np.frombuffer(b"".join(words), np.uint8)
        lens = np.array([len(w) for w in words], np.int64)
        offs = np.concatenate([[0], np.cumsum(lens)[:-1]]).astype(np.int64)
        valid = np.array([rng.random() < 0.9 for _ in words])
        for seed in (0, 12345):
            ids, first = jsp.intern_spans(buf, offs, lens, valid, seed)
            seen = {}
            for k, w in enumerate(words):
                if valid[k]:
                    assert ids[k] == seen.setdefault(w, len(seen))
                    if ids[k] == len(seen) - 1 and first[ids[k]] != k:
                        assert words[first[ids[k]]] == w
                else:
                    assert ids[k] == -1
        a = np.array([rng.randint(0, 3) << 40 for _ in range(300)], np.int64)
        b = np.array([rng.randint(0, 40) << 50 for _ in range(300)], np.int64)
        ids, first = jsp.intern_pairs(a, b, 99)
        seen = {}
        for k in range(300):
            assert ids[k] == seen.setdefault((a[k], b[k]), len(seen))


def test_json_validator_equals_python_json():
    rng = random.Random(5)
    toks = ['{', '}', '[', ']', ',', ':', '"a"', '"b\\n"', '1', '-2.5e3', 'null', 'true', 'NaN', ' ', '-Infinity',
            '0', '01', '"', '\\', 'x', '.', 'e', '"\\u00e9"', '"\\uzz"', '"\x01"', 'Infinity', '-', '1.', '.5']
    for _ in range(20000):
        text = "".join(rng.choice(toks) for _ in range(rng.randint(1, 10)))
        b = text.encode()
        st = jv.json_spans_status(np.frombuffer(b + b" ", np.uint8), np.zeros(1, np.int64),
                                  np.array([len(b)], np.int64), 100, 1 << 20)[0]
        try:
            json.loads(text)
            ok = jv.JSON_OK
        except ValueError:
            ok = jv.JSON_INVALID
        assert st == ok, text
    deep = b"[" * 150 + b"]" * 150
    buf = np.frombuffer(deep, np.uint8)
    assert jv.json_spans_status(buf, np.zeros(1, np.int64), np.array([300]), 100, 1 << 20)[0] == jv.JSON_TOO_DEEP
    assert jv.json_spans_status(buf, np.zeros(1, np.int64), np.array([300]), 200, 1 << 20)[0] == jv.JSON_OK
    assert jv.json_spans_status(buf, np.zeros(1, np.int64), np.array([300]), 200, 299)[0] == jv.JSON_TOO_BIG


def test_line_col_equals_brute_force():
    rng = random.Random(6)
    for data in (bytes(rng.choice(b"ab\n") for _ in range(2000)), b"x" * 700, b"\n" * 300 + b"y" * 400):
        buf = np.frombuffer(data, np.uint8)
        for pos in [0, 1, 5, 299, 300, 301, 699, 700, 999, 2000, 2500] + [rng.randint(0, 2000) for _ in range(50)]:
            head = data[:pos]
            assert jt.line_col(buf, pos) == (head.count(b"\n") + 1, pos - head.rfind(b"\n")), (pos, len(data))


# the kind rules as they were written before (plain X\w*Y forms): the specification
PLAIN_KIND_RULES = [
    r"(?i)queue\w*['.]?\s*\.?(get|get_nowait|join|pop)\b|'get' of '\w*queue",
    r"(?i)queue\w*['.]?\s*\.?(put|put_nowait|task_done|push)\b|'put' of '\w*queue",
    r"(?i)(thread|process|pool|worker)\w*['.]?\s*\.?join\b|'join' of '(_thread|thread|process)",
    r"(?i)future\w*['.]?\s*\.?result\b",
    r"(?i)(^|[\s.:'_<])(acquire|wait|wait_for|waitpid|futex_wait|sem_wait|mutex_lock|spin_lock|pthread_join|"
    r"epoll_wait|synchronize|cudaStreamSynchronize|cudaDeviceSynchronize|cudaEventSynchronize|sleep|usleep|"
    r"nanosleep|clock_nanosleep)(\b|_|\()",
    r"(?i)(^|[\s.:'_<])(release|notify|notify_all|notifyAll|unlock|signal|broadcast|set_result|futex_wake|"
    r"sem_post|pthread_mutex_unlock|pthread_cond_signal|pthread_cond_broadcast)(\b|_|\()",
    r"(?i)(event|condition|semaphore|barrier|future)\w*['.]?\s*\.?set\b|'set' of '\w*event",
    r"(?i)(io|file|socket|ssl|os|posix|buffered\w*|textio\w*|fileio|stream|fd|pipe|select)\w*['.]?\s*(\.|of '|\s)?"
    r"(read|write|readline|readlines|readinto|recv\w*|send\w*|flush|fsync|pread\w*|pwrite\w*|accept|connect|"
    r"_accept|poll|epoll|select)\b",
    r"^(read|write|pread64|pwrite64|readv|writev|recv|send|recvfrom|sendto|recvmsg|sendmsg|fsync|fdatasync|open|"
    r"openat|close)(\(|$)",
    r"(?i)'(read|write|readline|readlines|readinto|recv|recv_into|send|sendall)' of '(_io\.|_socket|socket|_ssl|ssl)",
]
_TOKENS = ["queue", "Queue", "QUEUE", "get", "get_nowait", "join", "pop", "put", "push", "task_done", ".", "'", " ",
           "\t", "_", "a", "x", "1", "thread", "process", "pool", "worker", "future", "result", "event", "condition",
           "set", "io", "os", "posix", "textio", "fileio", "file", "buffered", "stream", "fd", "pipe", "ssl",
           "socket", "select", "poll", "epoll", "_accept", "read", "readline", "readlines", "recv", "recvfrom", "send", "pread", "pwrite", "write",
           "flush", "of '", "of", "'get' of '", "'put' of '", "'join' of '", "_thread", "(", ")", "<", ":", "é",
           "ſ", "K", "İ", "ı", "acquire", "release", "wait", "notify", "notifyAll", "_io.", "'read' of '",
           "accept", "connect", "s", "o", "i", "e", "t", "\n", "\u00a0", "Σ", "𝒜", "\ud800", "Read", "open",
           "close(", "sem_wait(", "cudaStreamSynchronize", "sleep", "asleep", "nanosleep", "Sleep"]


def _token_names(seed, count):
    rng = random.Random(seed)
    return ["".join(rng.choice(_TOKENS) for _ in range(rng.randint(0, 9))) for _ in range(count)]


def test_kind_rules_equal_their_plain_forms():
    """The linear regexes, and the numba scans of the default rules, match exactly
    the names the plain (quadratic) patterns match."""
    from tracevis3d import kinds

    assert len(kinds.KIND_RULES) == len(PLAIN_KIND_RULES)
    plain = [re.compile(p) for p in PLAIN_KIND_RULES]
    linear = [re.compile(p) for _, p in kinds.KIND_RULES]
    for seed in range(6):
        names = _token_names(seed, 3000)
        fast = kinds._default_rule_hits(names, range(len(plain)))
        for j in range(len(plain)):
            want = np.array([bool(plain[j].search(s)) for s in names])
            assert (np.array([bool(linear[j].search(s)) for s in names]) == want).all(), j
            bad = np.flatnonzero(fast[j] != want)
            assert bad.size == 0, (j, [names[i] for i in bad[:3]])
    # and classify_functions (fast defaults + a regex rule in front) equals regex-only classification
    names = _token_names(99, 3000)
    rules = [(tracevis3d.KIND_IO, r"^Read")] + kinds.KIND_RULES
    as_regex = [(k, re.compile(p)) for k, p in rules]  # compiled patterns take the regex path
    assert (kinds.classify_functions(names, rules) == kinds.classify_functions(names, as_regex)).all()


def test_kind_rules_on_real_names(realdata):
    from tracevis3d import kinds

    names = []
    for d in ("viztracer-examples", "catapult", "hta-trace-diff"):
        for p in sorted((realdata / d).iterdir()):
            if p.suffix in (".json", ".gz"):
                names += _quiet(p).function_names
    compiled = [(k, re.compile(p)) for k, p in kinds.KIND_RULES]
    plain = [(k, re.compile(p)) for (k, _), p in zip(kinds.KIND_RULES, PLAIN_KIND_RULES)]
    fast = kinds.classify_functions(names)
    assert (fast == kinds.classify_functions(names, compiled)).all()
    assert (fast == kinds.classify_functions(names, plain)).all()
    assert (fast > 0).sum() > 10  # real waits, releases and I/O were found


def test_kind_rules_are_linear_on_long_names():
    """Names that made the plain rules quadratic (20 KB: 26 s; these 400 KB ones would
    take hours).  A numba scan cannot be interrupted, so the guard is generous."""
    from tracevis3d import kinds

    names = [p * (400_000 // len(p)) for p in ("io", "queue", "thread", "future", "event", "os.", "<a ", "of '")]
    with fuzz_time_limit(60):
        kinds.classify_functions(names)
        for _, p in kinds.KIND_RULES:  # the regexes themselves (user rules go this way)
            rx = re.compile(p)
            for nm in names[:4]:
                rx.search(nm)


def fuzz_time_limit(seconds):
    from time_limits import time_limit

    return time_limit(seconds)


# ------------------------------------------- hostile classes in guarded processes
# (case, size, outcomes allowed, an outcome's message must contain)
GUARDED = [
    ("long_name", 400_000, {"ok"}, None),
    ("many_long_names", 2_000_000, {"ok"}, None),
    ("names_same_ends", 8_000_000, {"ok"}, None),
    ("colliding_tids", 8_000_000, {"ok"}, None),
    ("sync_calls_args", 8_000_000, {"ok"}, None),
    ("samples_deep_chain", 2_000_000, {"ok"}, None),
    ("samples_repeat", 2_000_000, {"error"}, "expand to more than"),
    ("unmatched_e_deep", 20_000_000, {"ok"}, None),
    ("pending_e", 40_000_000, {"ok"}, None),
    ("pending_e_matched", 40_000_000, {"ok"}, None),
    ("flow_deep_chain", 26_000_000, {"ok"}, None),
    ("empty_events_gz", 300_000, {"error"}, "decompression bomb"),
    ("x_events_gz", 300_000, {"error"}, "decompression bomb"),
    ("newlines_error_gz", 500_000, {"error"}, "decompression bomb"),
    ("newlines_error", 200_000_000, {"error"}, "(line 200000001, column 1)"),
    ("whitespace_events", 100_000_000, {"ok"}, None),
    ("tiny_events", 10_000_000, {"error"}, "skipped: {'no phase': 3333334}"),
    ("profile_chunks_swing", 4_000_000, {"error"}, "V8 profiles (from event #"),
    ("profile_ids_flood", 8_000_000, {"ok"}, None),
    ("cpuprofile_chain", 6_000_000, {"error"}, "expand to more than"),
]


@pytest.mark.parametrize("case,size,outcomes,needle", GUARDED, ids=[g[0] for g in GUARDED])
def test_hostile_class_in_a_guarded_process(warm, tmp_path, case, size, outcomes, needle):
    """Hang guard: 90 s of wall clock (the old code needed minutes to hours, or died);
    memory: 2.5 GB of address space, and under 2 GB peak RSS for inputs under 10 MB."""
    data, opts = hc.CASES[case](size)
    r = hc.measure_case(data, opts, workdir=tmp_path, timeout=90, max_address_space=int(2.5 * (1 << 30)), name=case)
    assert r["outcome"] in outcomes, (r["outcome"], r["message"][-600:])
    if needle:
        assert needle in r["message"], r["message"]
    if r["outcome"] == "error":
        assert f"{case}.bin" in r["message"] and "byte" in r["message"], r["message"]
    if len(data) < 10_000_000:
        assert r["peak_mb"] < 2048, r
    if not data.startswith(b"\x1f\x8b"):  # memory linear in the input: at most ~800 bytes per event,
        factor = 2 if case in ("newlines_error", "whitespace_events") else 16  # 2 bytes per blank byte
        assert r["peak_mb"] < 400 + factor * len(data) / 2**20, r


def test_native_tampered_files_are_refused(tmp_path):
    """Every tampered native file is a TraceFormatError naming the file (before
    anything uses it: `compare` indexes arrays with its values), a valid one loads."""
    for tamper in hc.NATIVE_TAMPERS + ("none",):
        p = tmp_path / f"{tamper}.tv3d.npz"
        p.write_bytes(hc.native_bytes(tamper))
        if tamper == "none":
            t = tracevis3d.load(p)
            tracevis3d.compare(t, t, tau=0.5)
            continue
        with pytest.raises(TraceFormatError) as e:
            t = tracevis3d.load(p)
            tracevis3d.compare(t, t, tau=0.5)  # (not reached: this would be where it crashed)
        assert str(p) in str(e.value), tamper


@pytest.mark.parametrize("tamper", ["deflate_bomb", "declared_huge"])
def test_native_bombs_in_a_guarded_process(warm, tmp_path, tamper):
    """A member that inflates to 1 GiB, and one that declares 2**40 values: refused
    under a 1.5 GB address-space limit, at once."""
    r = hc.measure_case(hc.native_bytes(tamper), {}, workdir=tmp_path, timeout=90,
                        max_address_space=int(1.5 * (1 << 30)), name=tamper)
    assert r["outcome"] == "error" and f"{tamper}.bin" in r["message"], r
    assert r["peak_mb"] < 600, r


def test_native_errors_say_what(tmp_path):
    cases = {"end_index_out_of_range": "end_index", "parent_forward": "parent",
             "short_func": "n_calls 200 but 10 calls",
             "wrong_dtype": "dtype float32", "header_meta_deep": "not JSON", "missing_member": "'thread'",
             "deflate_bomb": "compressed", "declared_huge": "declares 1099511627776 values",
             "header_surrogate": "lone surrogate", "args_bad": "not JSON", "header_version_str": "version"}
    for tamper, needle in cases.items():
        p = tmp_path / f"{tamper}.tv3d.npz"
        p.write_bytes(hc.native_bytes(tamper))
        with pytest.raises(TraceFormatError, match=re.escape(needle)) as e:
            tracevis3d.load(p)
        assert str(p) in str(e.value)


def test_native_from_a_pipe(tmp_path):
    """A native file read from a FIFO (not seekable) loads through memory."""
    t = tracevis3d.synthetic(300, threads=2, seed=2)
    p = tmp_path / "t.tv3d.npz"
    tracevis3d.save(t, p)
    u = _through_fifo(tmp_path, p.read_bytes())
    assert np.array_equal(u.func, t.func) and u.function_names == t.function_names


# ------------------------------------------------------------ item by item
def test_sampled_profile_bounded_and_named(realdata):
    t = _quiet(realdata / "speedscope-trace-event/simple-with-samples.json")
    assert t.meta["format"] == "chrome-json-samples" and t.meta["n_samples"] == 7
    # a frame without a name is named by its id; a cycle is cut with a warning
    doc = {"traceEvents": [{"ph": "M", "name": "thread_name", "pid": 1, "tid": 1, "args": {"name": "t"}}],
           "stackFrames": {"1": {"name": "root"}, "2": {"parent": "1"}, "3": {"name": "a", "parent": "4"},
                           "4": {"name": "b", "parent": "3"}},
           "samples": [{"ts": 1, "pid": 1, "tid": 1, "sf": 2}, {"ts": 2, "pid": 1, "tid": 1, "sf": "3"},
                       {"ts": 3, "pid": 1, "tid": 1}]}
    with pytest.warns(TraceWarning, match="cycle"):
        u = load_bytes(json.dumps(doc).encode())
    assert [u.name(i) for i in range(len(u))] == ["root", "2", "b", "a"]
    assert u.thread_names == ["t"] and u.meta["repairs"]["frame_cycle"]["count"] == 1
    with pytest.raises(TraceFormatError, match="expand to more than"):
        load_bytes(hc.samples_repeat(200_000)[0], sample_bytes_per_call=1000)


def test_deep_unmatched_and_held_back_end_events_stay_correct():
    n = 50_000
    evs = [{"ph": "B", "name": "b", "ts": k, "pid": 1, "tid": 1} for k in range(n)]
    evs += [{"ph": "E", "name": "zz", "ts": n + k, "pid": 1, "tid": 1} for k in range(n)]
    t = _quiet(orjson.dumps(evs))
    assert len(t) == n and t.meta["repairs"]["e_unmatched"]["count"] == n
    assert t.meta["repairs"]["unclosed"]["count"] == n and t.max_depth == n - 1
    evs = [{"ph": "E", "name": f"e{k}", "ts": 5, "pid": 1, "tid": 1} for k in range(n)]
    evs += [{"ph": "B", "name": f"e{k}", "ts": 5, "pid": 1, "tid": 1} for k in range(0, n, 2)]
    t = _quiet(orjson.dumps(evs))
    assert len(t) == n // 2 and (t.end == t.start).all()  # zero-length calls written end-first
    assert t.meta["repairs"]["e_unmatched"]["count"] == n // 2
    assert "e1\"" in t.meta["repairs"]["e_unmatched"]["first"]


def test_overflowing_and_infinite_times_are_repaired_alike():
    evs = (b'[{"ph":"X","name":"big","ts":1.7e308,"dur":1.7e308},{"ph":"X","name":"far","ts":1e22,"dur":1},'
           b'{"ph":"X","name":"neginf","ts":-Infinity,"dur":1},{"ph":"X","name":"inf","ts":Infinity,"dur":1},'
           b'{"ph":"X","name":"nan","ts":NaN,"dur":1},{"ph":"X","name":"ok","ts":5,"dur":1e300},'
           b'{"ph":"B","name":"b","ts":-Infinity},{"ph":"X","name":"good","ts":1,"dur":2}]')
    with pytest.warns(TraceWarning) as w:
        t = load_bytes(evs, source="edge.json")
    t.check()
    assert t.function_names == ["good"]
    assert t.meta["repairs"]["no_ts"]["count"] == 6 and t.meta["repairs"]["bad_dur"]["count"] == 1
    assert np.isfinite(t.start).all() and np.isfinite(t.end).all()
    assert any("6 × event without a finite ts" in str(x.message) for x in w)
    # within the time range everything stays finite, also for the layout
    u = _quiet(b'[{"ph":"X","name":"a","ts":-1e21,"dur":1},{"ph":"X","name":"b","ts":1e21,"dur":0}]')
    assert u.span == 2e21
    from tracevis3d.layout.icicle import icicle_layout

    spec = icicle_layout(u)
    for layer in spec.layers:
        assert np.isfinite(layer.positions).all() and np.isfinite(layer.scales).all()


def test_gzip_oddities(tmp_path):
    evs = [_x(f"f{k % 7}", k, 1) for k in range(3000)]
    body = orjson.dumps(evs)
    variants = hc.gzip_variants(body)
    t = _quiet(variants["multi_member"])
    assert len(t) == 3000 and t.meta["repairs"] == {}  # every member, not only the first
    with pytest.warns(TraceWarning, match="damaged"):
        t = load_bytes(variants["crc_error"])
    assert len(t) == 3000 and "CRC" in t.meta["repairs"]["gzip_corrupt"]["first"] or \
        "check" in t.meta["repairs"]["gzip_corrupt"]["first"]
    with pytest.warns(TraceWarning, match="no gzip member"):
        t = load_bytes(variants["trailing_garbage"])
    assert len(t) == 3000 and t.meta["repairs"]["gzip_trailing"]["count"] == 1
    with pytest.warns(TraceWarning, match="cut short"):
        t = load_bytes(variants["no_trailer"])
    assert len(t) == 3000 and "gzip_cut" in t.meta["repairs"]
    t = _quiet(variants["cut_in_deflate"])
    assert 0 < len(t) < 3000 and "gzip_cut" in t.meta["repairs"] and "truncated" in t.meta["repairs"]
    # a damaged deflate stream keeps every byte inflated before the damage
    g = bytearray(gzip.compress(body, 1))
    g[len(g) // 2: len(g) // 2 + 8] = b"\xff" * 8
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", TraceWarning)
        try:
            t = load_bytes(bytes(g))
            assert "gzip_corrupt" in t.meta["repairs"] or "gzip_cut" in t.meta["repairs"]
        except TraceFormatError as e:
            assert "byte" in str(e)
    # positions in errors of gzip input refer to the decompressed data
    p = tmp_path / "bad.json.gz"
    p.write_bytes(gzip.compress(b'[{"ph":"X","ts":1,"dur":1,"name":"a"}\n\n {"ph" 1}]'))
    with pytest.raises(TraceFormatError, match=r"byte \d+ of the decompressed data \(line 3, column 2\)"):
        tracevis3d.load(p)
    with pytest.raises(TraceFormatError, match="not gzip data|corrupt gzip"):
        load_bytes(b"\x1f\x8bgarbage")


def test_gzip_bomb_guards():
    bomb = gzip.compress(b"[" + b" " * (200 << 20) + b"]", 9)
    with pytest.raises(TraceFormatError, match="decompression bomb.*max_gzip_ratio="):
        load_bytes(bomb)
    events = gzip.compress(b"[" + b'{"ph":"X","ts":1,"dur":0},' * 1_500_000 + b'{"ph":"X","ts":1,"dur":0}]', 9)
    with pytest.raises(TraceFormatError, match="gzip_bytes_per_event="):
        load_bytes(events, max_gzip_ratio=10_000)
    assert len(_quiet(events, max_gzip_ratio=10_000, gzip_bytes_per_event=0.001)) == 1_500_001


def test_lone_surrogates_are_replaced():
    evs = b'[{"ph":"X","name":"a\\ud800b","ts":1,"dur":1},{"ph":"X","name":"\\udfff","ts":3,"dur":1},' \
          b'{"ph":"X","name":"ok \\ud83d\\ude00","ts":5,"dur":1}]'
    with pytest.warns(TraceWarning, match="lone surrogate"):
        t = load_bytes(evs)
    assert t.function_names == ["a\ufffdb", "\ufffd", "ok \U0001F600"]
    for s in t.function_names + t.function_files + t.thread_names + t.process_names:
        s.encode("utf-8")  # the label writer encodes every string
    assert t.meta["repairs"]["bad_utf8"]["count"] == 2


def test_metadata_with_a_lone_surrogate_or_bad_bytes_is_repaired_not_dropped():
    """orjson refuses a lone surrogate escape and bytes that are not UTF-8: a thread's name
    event that had one was dropped whole (the lane read "1"), and a counter's unit with it.
    Now read by Python's parser, its names repaired (U+FFFD) and counted like any name."""
    evs = (b'{"traceEvents":[{"ph":"M","pid":1,"tid":1,"name":"thread_name","args":{"name":"worker \\ud800 one"}},'
           b'{"ph":"M","pid":1,"tid":2,"name":"thread_name","args":{"name":"bad \xff bytes"}},'
           b'{"ph":"M","pid":1,"tid":0,"name":"tracevis3d_counter_unit","args":{"counter":"mem \\ud800",'
           b'"series":"rss","unit":"MB"}},'
           b'{"ph":"X","pid":1,"tid":1,"name":"f","ts":0,"dur":10},{"ph":"X","pid":1,"tid":2,"name":"g","ts":1,"dur":5},'
           b'{"ph":"C","pid":1,"tid":0,"name":"mem \\ud800","ts":2,"args":{"rss":5}},'
           b'{"ph":"M","pid":1,"tid":3,"name":"thread_name","args":' + b"[" * 3000 + b"]" * 3000 + b'}]}')
    with pytest.warns(TraceWarning, match="lone surrogate"):
        t = load_bytes(evs)
    assert sorted(t.thread_names) == ["bad \ufffd bytes", "worker \ufffd one"], t.thread_names
    assert t.counter_names == ["mem \ufffd"] and t.series_units == ["MB"], (t.counter_names, t.series_units)
    for s in t.thread_names + t.counter_names:
        s.encode("utf-8")


def test_long_names_are_cut_with_a_hash_and_stay_distinct():
    long_a = "x" * 10_000 + "a"
    long_b = "x" * 10_000 + "b"
    evs = [_x(long_a, 0, 1), _x(long_b, 2, 1), _x(long_a, 4, 1), _x("short", 6, 1)]
    with pytest.warns(TraceWarning, match="longer than max_name_chars"):
        t = load_bytes(orjson.dumps(evs))
    assert len(t.function_names) == 3 and t.function_names[2] == "short"
    assert all(len(s) == 4096 + 9 for s in t.function_names[:2])
    assert t.function_names[0] != t.function_names[1]
    assert t.meta["repairs"]["long_name"]["count"] == 2
    u = _quiet(orjson.dumps(evs), max_name_chars=20)
    assert u.function_names[0].startswith("x" * 20 + "…") and len(u.function_names[0]) == 29
    # a cut name survives the native round trip
    import tempfile

    with tempfile.TemporaryDirectory() as d:
        tracevis3d.save(t, pathlib.Path(d) / "t.tv3d.npz")
        assert tracevis3d.load(pathlib.Path(d) / "t.tv3d.npz").function_names == t.function_names


def test_args_are_readable_or_dropped_with_a_warning():
    deep = "[" * 2000 + "]" * 2000
    evs = (b'[{"ph":"X","name":"a","ts":1,"dur":1,"args":{"x" 1, "y": 2}},'
           b'{"ph":"X","name":"b","ts":3,"dur":1,"args":{"d":' + deep.encode() + b'}},'
           b'{"ph":"X","name":"c","ts":5,"dur":1,"args":{"ok":[1,2,{"z":null}]}},'
           b'{"ph":"X","name":"d","ts":7,"dur":1,"args":{"big":"' + b"y" * 2_000_000 + b'"}}]')
    with pytest.warns(TraceWarning) as w:
        t = load_bytes(evs)
    rep = t.meta["repairs"]
    assert rep["bad_args"]["count"] == 1 and rep["deep_args"]["count"] == 1 and rep["big_args"]["count"] == 1
    assert len(w) == 3
    assert t.args_call.tolist() == [t.function_names.index("c")]
    for i in range(len(t)):
        t.args_of(i)  # never raises
    from tracevis3d.blender.pick import describe_call

    for i in range(len(t)):
        describe_call(t, i)


def test_errors_say_where(tmp_path):
    raw = b'{"traceEvents": [\n {"ph":"X","name":"alpha","ts":1,"dur":5,"pid":1,"tid":1},\n' \
          b' {"ph":"X","name":"beta","ts":2,"dur":1,"pid":1,"tid":1}\n]}'
    p = tmp_path / "cut.json"
    first, first_end = raw.index(b'{"ph"'), raw.index(b"},") + 1
    n_errors = 0
    for cut in range(len(raw)):
        p.write_bytes(raw[:cut])
        try:
            _quiet(p)
        except TraceFormatError as e:
            n_errors += 1
            msg = str(e)
            assert str(p) in msg and "byte" in msg and "line" in msg, (cut, msg)
            if first < cut < first_end:  # inside the first event: says so, not "the array is empty"
                assert "inside the first event" in msg, (cut, msg)
    assert n_errors >= first_end  # every cut before the first event ends is an error


_NO_COMMA = "',' missing before this event or key"


@pytest.mark.parametrize("data,at,what", [
    (b'[{"ph":"X","ts":1,"dur":1,"name":"a"} {"ph":"X","ts":2,"dur":1,"name":"b"}]', b' {"ph"', _NO_COMMA),
    (b'{"a": 1 "traceEvents": []}', b' "traceEvents"', _NO_COMMA),
    (b'{"traceEvents": [{"ph":"X","ts":1,"dur":1,"name":"a"}], "traceEvents": []}', b' "traceEvents": []',
     "a second 'traceEvents' key"),
])
def test_json_that_was_silently_accepted_is_refused(data, at, what):
    pos = data.index(at) + 1
    with pytest.raises(TraceFormatError, match=re.escape(f"{what} at byte {pos} (line 1, column {pos + 1})")):
        load_bytes(data, source="bad.json")


def test_trailing_data_and_odd_phases_are_reported():
    one = b'[{"ph":"X","ts":1,"dur":1,"name":"a"}]'
    for tail in (b'[{"ph":"X","ts":2,"dur":1,"name":"b"}]', b"garbage", b"\n\x00"):
        with pytest.warns(TraceWarning, match="after the end of the JSON document"):
            t = load_bytes(one + tail)
        assert len(t) == 1 and re.search(r"from byte 3[89] ", t.meta["repairs"]["trailing_data"]["first"])
    t = _quiet(b'[{"ph":"XX","ts":1,"dur":1,"name":"a"},{"ph":"X","ts":1,"dur":1,"name":"b"},{"ph":"","ts":3}]')
    assert t.function_names == ["b"]
    assert t.meta["skipped"] == {"unknown phase (several characters)": 1, "no phase": 1}


@pytest.mark.parametrize("codec, says", [("utf-16", "UTF-16 text (byte order mark FF FE)"),
                                          ("utf-16-le", "looks like UTF-16 text"),
                                          ("utf-16-be", "looks like UTF-16 text"),
                                          ("utf-32", "UTF-32 text (byte order mark FF FE 00 00)")])
def test_a_utf16_file_is_named_as_such(tmp_path, codec, says):
    """A trace saved as UTF-16 or UTF-32 (PowerShell's ``>``, some Windows editors) is refused
    with what it is and what to do, from a file and from bytes, not only "not a Chrome trace"."""
    text = '{"traceEvents":[{"ph":"X","name":"f","pid":1,"tid":1,"ts":1,"dur":5}]}'
    p = tmp_path / "t.json"
    p.write_bytes(text.encode(codec))
    for load in (lambda: tracevis3d.load(p), lambda: load_bytes(p.read_bytes(), source="t.json")):
        with pytest.raises(TraceFormatError, match=re.escape(says) + ".*save it as UTF-8$"):
            load()
    u = tmp_path / "u.json"
    u.write_bytes(text.encode())
    assert len(tracevis3d.load(u)) == 1  # UTF-8: no hint, loads


def _zip_of(text: bytes, method) -> bytes:
    import zipfile
    b = io.BytesIO()
    with zipfile.ZipFile(b, "w", method) as z:
        z.writestr("trace.json", text)
    return b.getvalue()


@pytest.mark.parametrize("pack, says", [
    (lambda d: __import__("bz2").compress(d), "it is bzip2-compressed: decompress it (bunzip2) or gzip it instead"),
    (lambda d: __import__("lzma").compress(d), "it is xz-compressed"),
    (lambda d: __import__("zlib").compress(d), "a raw zlib stream (gzip without its header)"),
    (lambda d: gzip.compress(gzip.compress(d)), "gzip data again (compressed twice?)"),
    (lambda d: b"\x0a\x1c\x32\x1a\x0a\x18\x08\x01" + bytes(40), "a Perfetto protobuf trace"),
    (lambda d: _zip_of(d, __import__("zipfile").ZIP_DEFLATED), "a zip archive, not a TraceVis3D trace"),
    (lambda d: _zip_of(d, __import__("zipfile").ZIP_STORED), "it holds 'trace.json': unpack the trace from it"),
])
def test_a_packed_trace_is_named_as_such(tmp_path, pack, says):
    """A trace in a container the loader does not open (bzip2, xz, a raw zlib stream, gzip twice,
    a zip archive) or a Perfetto protobuf trace is refused saying what it is and what to do; a
    deflated zip read "damaged TraceVis3D file: member 'trace.json' is compressed"."""
    text = b'{"traceEvents":[{"ph":"X","name":"f","pid":1,"tid":1,"ts":1,"dur":5}]}'
    p = tmp_path / "t.json"
    p.write_bytes(pack(text))
    with pytest.raises(TraceFormatError, match=re.escape(says)):
        tracevis3d.load(p)


@pytest.mark.parametrize("fmt, name", [("native", "t.tv3d.npz"), ("compact", "t.tv3c"), ("chrome", "t.json")])
def test_save_names_the_place_it_cannot_write(tmp_path, fmt, name):
    """`tracevis3d.save` to a missing folder or onto a folder says so of the path given, in every
    format; the writers' own errors named their temporary file ('…/.tv3d-export-….part',
    't.tv3d.npz.tmp').  A file already there is replaced only by a complete one."""
    t = tracevis3d.synthetic(50, threads=1, seed=1)
    with pytest.raises(FileNotFoundError, match=re.escape(f"cannot save: its folder {tmp_path / 'no'} does not exist")) \
            as e:
        tracevis3d.save(t, tmp_path / "no" / name, format=fmt)
    assert e.value.filename == str(tmp_path / "no" / name)
    with pytest.raises(IsADirectoryError, match="cannot save: it is a folder; give a file name"):
        tracevis3d.save(t, tmp_path, format=fmt)
    p = tmp_path / name
    p.write_bytes(b"precious")
    beside = tmp_path / (name + ".tmp")  # the temporary's fixed name once: a user's file of that name was lost
    beside.write_bytes(b"mine")
    with pytest.raises((AttributeError, TypeError)):  # not a Trace: fails before or while writing
        tracevis3d.save(object(), p, format=fmt)
    assert p.read_bytes() == b"precious" and sorted(x.name for x in tmp_path.iterdir()) == [name, beside.name]
    os.chmod(p, 0o640)
    tracevis3d.save(t, p, format=fmt)
    assert len(tracevis3d.load(p)) == len(t) and beside.read_bytes() == b"mine"
    assert stat.S_IMODE(os.stat(p).st_mode) == 0o640, "a saved file keeps the mode of the one it replaces"
    fresh = tmp_path / ("new-" + name)
    mask = os.umask(0o027)
    try:
        tracevis3d.save(t, fresh, format=fmt)
    finally:
        os.umask(mask)
    assert stat.S_IMODE(os.stat(fresh).st_mode) == 0o640, "a new file: the umask's mode, not a temporary's 0o600"
    assert sorted(x.name for x in tmp_path.iterdir()) == sorted([name, beside.name, fresh.name])


def test_the_recorder_and_the_in_place_writer_save_whole_or_not_at_all(tmp_path):
    """The two writers `tracevis3d.save` does not call: `live.record.record` (its Chrome file)
    and `save_synthetic` (native, written in place) name the path they cannot write, and leave
    nothing behind when they fail."""
    from tracevis3d.live.record import record

    with pytest.raises(FileNotFoundError, match="cannot save: its folder .* does not exist") as e:
        with record(str(tmp_path / "no" / "r.json")):
            sum(range(10))
    assert e.value.filename == str(tmp_path / "no" / "r.json")
    p = tmp_path / "s.tv3d.npz"
    p.write_bytes(b"precious")
    with pytest.raises(ValueError):
        tracevis3d.save_synthetic(p, n_calls=-5)
    assert p.read_bytes() == b"precious" and [x.name for x in tmp_path.iterdir()] == [p.name]
    tracevis3d.save_synthetic(p, n_calls=100)
    assert len(tracevis3d.load(p)) == 100 and [x.name for x in tmp_path.iterdir()] == [p.name]


def test_limits_each_have_a_clear_message(tmp_path):
    ev = orjson.dumps([_x("a", k, 1) for k in range(100)])
    with pytest.raises(TraceFormatError, match="more than 10 events .*max_events="):
        load_bytes(ev, max_events=10)
    p = tmp_path / "t.json"
    p.write_bytes(ev)
    with pytest.raises(TraceFormatError, match="over the limit of 100 .*max_bytes="):
        tracevis3d.load(p, max_bytes=100)
    with pytest.raises(TraceFormatError, match="nested deeper than 10 levels .*max_nesting="):
        load_bytes(b'[{"ph":"X","ts":1,"dur":1,"args":' + b"[" * 20 + b"]" * 20 + b"}]", max_nesting=10)
    t = _quiet(b'[{"ph":"X","ts":1,"dur":1,"name":"a","args":{"k":[[[1]]]}}]', max_args_nesting=2)
    assert "deep_args" in t.meta["repairs"] and len(t.args_call) == 0
    t = _quiet(b'[{"ph":"X","ts":1,"dur":1,"name":"a","args":{"k":"1234567890"}}]', max_args_bytes=10)
    assert "big_args" in t.meta["repairs"]
    assert _quiet(ev, limits=Limits(max_events=100)).meta["n_events"] == 100
    with pytest.raises(TypeError, match="unexpected keyword"):
        load_bytes(ev, max_evnets=5)
    with pytest.raises(ValueError, match="positive"):
        load_bytes(ev, max_events=0)


def _through_fifo(tmp_path, data: bytes, **kw):
    fifo = tmp_path / "fifo"
    if fifo.exists():
        fifo.unlink()
    os.mkfifo(fifo)

    def write():
        with open(fifo, "wb") as f:
            f.write(data)

    th = threading.Thread(target=write)
    th.start()
    try:
        return _quiet(fifo, **kw)
    finally:
        th.join()


def test_pipes_fifos_and_endless_devices(tmp_path):
    evs = orjson.dumps([_x(f"fn{k}", k, 1) for k in range(5000)])  # ~350 KB: more than any sniffing buffer
    t = _through_fifo(tmp_path, evs)
    assert len(t) == 5000 and t.function_names[0] == "fn0"
    g = _through_fifo(tmp_path, gzip.compress(evs))
    assert len(g) == 5000
    with fuzz_time_limit(20):
        with pytest.raises(TraceFormatError, match="more than 1000 bytes"):
            tracevis3d.load("/dev/zero", max_bytes=1000)


def test_a_file_read_in_short_pieces_is_read_to_its_end(tmp_path, monkeypatch):
    """One read() returns at most 2 GiB on Linux, so reading a larger file with one call cut
    it short (a truncated trace); `_read_to_end` loops.  The cap is shrunk here to 1000 bytes.
    The same without huge pages (macOS, Windows: an uninitialised array)."""
    import mmap

    from tracevis3d.io import _read_to_end

    class Capped(io.FileIO):
        def readinto(self, b):
            return super().readinto(memoryview(b)[:1000])

    data = orjson.dumps([_x(f"fn{k}", k, 1) for k in range(400)])
    p = tmp_path / "t.json"
    p.write_bytes(data)
    with Capped(p, "rb") as f:
        view, total = _read_to_end(f, len(data) + 1)
    assert total == len(data) and bytes(view) == data
    assert len(_quiet(p)) == 400  # and load reads through the same buffer
    monkeypatch.delattr(mmap, "MADV_HUGEPAGE", raising=False)
    with Capped(p, "rb") as f:
        view, total = _read_to_end(f, len(data) + 1)
    assert total == len(data) and bytes(view) == data and len(_quiet(p)) == 400


def test_a_failing_parallel_scan_worker_falls_back_quietly(realdata, monkeypatch):
    from tracevis3d.io import chrome

    raw = (realdata / "viztracer-examples/multithread.json").read_bytes()
    seq = _quiet(raw)
    from tracevis3d.io import chrome_rows

    real = chrome_rows.scan_part
    hooks = []
    monkeypatch.setattr(threading, "excepthook", lambda args: hooks.append(args))

    def failing(buf, i, stop, max_rows, nesting, *fast):
        if stop < 0:
            raise MemoryError("worker out of memory")
        return real(buf, i, stop, max_rows, nesting, *fast)

    monkeypatch.setattr(chrome, "PARALLEL_SCAN_BYTES", 0)
    monkeypatch.setattr(chrome_rows, "scan_part", failing)
    par = _quiet(raw)
    assert not hooks  # nothing printed by the thread machinery
    for k in ARRAY_DTYPES:
        assert np.array_equal(getattr(seq, k), getattr(par, k)), k


def test_fuzz_short_seeded_run(warm):
    """A short run of the seeded fuzzer (``make fuzz`` runs a long one)."""
    n = int(os.environ.get("TV3D_FUZZ_SEEDS", 40))
    stats = {}
    failures = fuzz_hostile.run(0, n, verbose=False, stats=stats)
    assert failures == [], failures[:5]
    assert stats.get("ok", 0) + stats.get("error", 0) == n and stats.get("ok") and stats.get("error"), stats


def test_gzip_fast_inflate_is_zlibs_twin():
    """With python-isal the members inflate through it (about 3x zlib) and a damaged or cut
    member is done again with zlib: the bytes and the repairs are zlib's for every input."""
    import gzip
    import zlib as _zlib

    import tracevis3d.io.containers as tio
    from tracevis3d.io.limits import resolve_limits

    if tio.fast_zlib is None:
        pytest.skip("python-isal is not installed: only the zlib path exists")
    rng = np.random.default_rng(11)
    one = gzip.compress(b'{"traceEvents": [' + b'{"ph": "X"}, ' * 5000 + b"]}")
    two = gzip.compress(b"abc" * 1000)
    cases = {"valid": one, "two members": one + two, "trailing": one + b"garbage!",
             "cut": one[: len(one) // 2], "cut header": one[:5]}
    for k in range(8):  # flipped bytes inside the deflate data
        bad = bytearray(one + two)
        for at in rng.integers(12, len(one) - 8, 3):
            bad[at] ^= 0xFF
        cases[f"damaged {k}"] = bytes(bad)
    lim = resolve_limits(None, {})
    fast = tio.fast_zlib
    try:
        for name, data in cases.items():
            got = []
            for mod in (fast, None):
                tio.fast_zlib = mod
                try:
                    out, rep = tio.gunzip(data, "t.json.gz", lim)
                    got.append((out.tobytes(), rep))
                except TraceFormatError as e:
                    got.append(str(e))
            assert got[0] == got[1], name
    finally:
        tio.fast_zlib = fast
    assert _zlib  # the fallback module stays importable


@pytest.mark.parametrize("parallel", [False, True])
def test_a_viztracer_buffer_overflow_is_said(monkeypatch, parallel):
    """VizTracer's ring buffer, once full, keeps only the calls that end last and writes
    ``"viztracer_metadata": {"overflow": true}``: the early part of such a trace is hollow (only
    long outer calls).  The load says so (repair ``tracer_overflow``, ``meta["complete_from"]``:
    the first kept call's end) and the icicle's legend tells it; no overflow, a metadata object
    elsewhere in the file, one that is no object or is damaged: nothing said."""
    from tracevis3d.io import chrome
    from tracevis3d.layout.icicle import icicle_layout
    from tracevis3d.params.icicle import IcicleParams

    monkeypatch.setattr(chrome, "PARALLEL_SCAN_BYTES", 0 if parallel else 1 << 62)
    events = [_x("outer", 1000, 9000), _x("late", 8000, 500), _x("later", 9000, 100)]
    body = orjson.dumps(events)

    def doc(meta: bytes, before: bool = False) -> bytes:
        return (b'{' + meta + b',"traceEvents":' + body + b'}') if before else \
            (b'{"traceEvents":' + body + b',' + meta + b',"file_info":{"files":{},"functions":{}}}')

    t = _quiet(doc(b'"viztracer_metadata":{"overflow":true,"version":"1.1.1"}'))
    origin = float(t.meta["clock_origin"])
    assert t.meta["complete_from"] == pytest.approx(8500.0 - origin)  # "late" ends first, at 8500 µs
    assert "tracer_overflow" in t.meta["repairs"]
    with pytest.warns(TraceWarning, match="VizTracer's buffer was full .* larger tracer_entries"):
        load_bytes(doc(b'"viztracer_metadata":{"overflow":true}'))
    spec = icicle_layout(t, IcicleParams(resolution=(960, 540)))
    legend = " ".join(spec.labels.texts)  # (a note's lines are labels of their own)
    assert "VizTracer's buffer was full" in legend and "(thick on the time axis)" in legend
    whole = _quiet(doc(b'"viztracer_metadata":{"overflow":false}'))
    axis, axis_whole = (icicle_layout(u, IcicleParams(resolution=(960, 540))).layer("axis") for u in (t, whole))
    thick = axis.scales[len(axis_whole):]  # one more mark: the stretch with calls missing, thicker than the line
    assert len(axis) == len(axis_whole) + 1 and thick[0, 2] > 2 * axis.scales[0, 2]
    wpu = spec.meta["world_per_us"]
    assert thick[0, 0] == pytest.approx((t.meta["complete_from"] - spec.meta["t0"]) * wpu, rel=1e-4)
    from tracevis3d.layout.threads import threads_layout
    from tracevis3d.layout.threads_params import ThreadsParams

    ring = threads_layout(t, ThreadsParams(resolution=(960, 540)))
    assert any("VizTracer's buffer was full" in x for x in ring.labels.texts)
    from tracevis3d.layout.cone import cone_layout
    from tracevis3d.layout.extravis import extravis_layout

    for other in (cone_layout(t), extravis_layout(t)):  # no time axis: the legend says it all the same
        assert any("VizTracer's buffer was full" in x for x in other.labels.texts)
    assert "tracer_overflow" in _quiet(doc(b'"viztracer_metadata":{"overflow":true}', before=True)).meta["repairs"]
    from tracevis3d.io.chrome_writer import chrome_json_bytes

    for style in ("sorted", "viztracer"):  # an export says it again, and the load reads the same point
        assert _quiet(chrome_json_bytes(t, style=style)).meta["complete_from"] == pytest.approx(t.meta["complete_from"])
    for meta in (b'"viztracer_metadata":{"overflow":false}', b'"viztracer_metadata":[true]',
                 b'"other":{"viztracer_metadata":{"overflow":true}}', b'"viztracer_metadata":{"overflow":"yes"}',
                 b'"viztracer_metadata":{"a":' + b"[" * 3000 + b"]" * 3000 + b'}'):  # deeper than Python's json
        u = _quiet(doc(meta))
        assert "complete_from" not in u.meta and "tracer_overflow" not in u.meta["repairs"], meta
        assert not any("VizTracer" in x for x in icicle_layout(u, IcicleParams(resolution=(960, 540))).labels.texts)
