"""The live tracer's compiled profile function (tracevis3d/live/native_hook.py): the same
events as the Python ``setprofile`` hook on the same code (Python calls, C functions and
bound C methods, METH_METHOD methods, generators, exceptions, a thread started while
tracing); the references the records own are all given back; full buffers drop and count;
and the kernels against brute-force twins."""
import gc
import re
import sys
import threading

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from tracevis3d.live import native_hook as N
from tracevis3d.live import protocol as P
from tracevis3d.live.convert import Converter
from tracevis3d.live.tracer import Hooks, make_hooks

pytestmark = pytest.mark.skipif(not N.available(), reason=f"no compiled hook here: {N.why_not()}")

PATTERN = re.compile(r"(\w+)-(\d+)")


class Box:
    def __init__(self):
        self.items = []

    def put(self, x):
        self.items.append(x)          # a C method bound to an instance (new object per call)
        return len(self.items)


def squares(n):
    for i in range(n):
        yield i * i


def fails(x):
    try:
        return int(x)
    except ValueError:
        return -1


def fib(n):
    return n if n < 2 else fib(n - 1) + fib(n - 2)


def in_thread(out):
    out.append(sum(squares(20)) + fib(7))


def workload():
    b = Box()
    for i in range(30):
        b.put(i)
        "a b c".split()
        PATTERN.match(f"x-{i}")        # a METH_METHOD method (re.Pattern.match)
        fails("7" if i % 2 else "x")
    out = []
    t = threading.Thread(target=in_thread, args=(out,), name="helper")
    t.start()
    t.join()
    return sum(squares(10)) + fib(8) + out[0]


def _events(hooks_cls, fn):
    """[(thread name, ENTER/EXIT, function name)] of ``fn`` run under the hooks, from the
    first call of ``fn`` to its return in the main thread and everything of other threads."""
    batches = []
    hooks = hooks_cls(lambda slot, batch: batches.append((slot, batch)))
    conv = Converter(hooks.origin, native=getattr(hooks, "native_rec", None))
    # the collector's callbacks (hypothesis registers one in the test process) are Python
    # calls a collection may run in the middle of ``fn``: not part of what is compared
    import gc

    callbacks, enabled = gc.callbacks[:], gc.isenabled()
    gc.callbacks.clear()
    gc.disable()
    try:
        hooks.start()
        fn()
        rest = hooks.stop()
    finally:
        gc.callbacks[:] = callbacks
        if enabled:
            gc.enable()
    out = []
    for slot, batch in batches + rest:
        rec = conv.convert(slot.index, batch)
        hooks.release(batch)
        out += [(slot.name, int(r["type"]), conv.funcs.entries[r["func"]][0].split(" (")[0]) for r in rec]
    main = [e for e in out if e[0] == "MainThread"]
    first = main.index(("MainThread", P.ENTER, fn.__name__))
    last = max(i for i, e in enumerate(main) if e == ("MainThread", P.EXIT, fn.__name__))
    return main[first: last + 1] + [e for e in out if e[0] != "MainThread"]


def test_compiled_hook_records_what_the_python_hook_records():
    py = _events(Hooks, workload)
    native = _events(N.NativeHooks, workload)
    assert native == py
    names = {e[2] for e in native}
    assert {"list.append", "str.split", "Pattern.match", "builtins.len", "squares", "fib", "fails"} <= names
    assert any(e[0] == "helper" and e[2] == "in_thread" for e in native)


def test_the_references_the_records_own_are_given_back():
    box = Box()
    base = sys.getrefcount(box)
    hooks = N.NativeHooks()
    conv = Converter(hooks.origin, native=hooks.native_rec)
    hooks.start()
    for i in range(1000):
        box.put(i)     # every bound `append` is a new object holding `box`
    rest = hooks.stop()
    held = sys.getrefcount(box)
    for slot, batch in rest:
        conv.convert(slot.index, batch)
        hooks.release(batch)
        hooks.release(batch)  # a second release gives nothing back twice
    gc.collect()
    assert sys.getrefcount(box) == base
    assert held >= base  # records of bound methods unknown at the time held their instance


def test_a_full_buffer_drops_counts_and_the_stack_carries_on():
    hooks = N.NativeHooks(max_events=64)
    conv = Converter(hooks.origin, native=hooks.native_rec)
    hooks.start()
    fib(12)  # 465 calls: far more than 64 events
    rest = hooks.stop()
    total = 0
    for slot, batch in rest:
        rec = conv.convert(slot.index, batch)
        hooks.release(batch)
        total += len(batch)
        assert (rec["type"] == P.ENTER).sum() >= (rec["type"] == P.EXIT).sum()
    assert total == 64 and hooks.dropped_in_buffers > 0 and 0 in hooks.lost


def test_buffers_grow_when_more_than_half_full_and_the_spare_is_reused():
    hooks = N.NativeHooks(max_events=1 << 14)
    hooks.native_rec.first_cap = 256
    hooks.start()
    caps = []
    for _ in range(4):
        fib(10)
        for slot, batch in hooks.take_partial():
            caps.append(batch.buf.shape[0])
            hooks.release(batch)
    hooks.stop()
    assert caps[0] == 1 << 14 or caps[0] == 256  # the first thread's buffer was made before the change
    assert max(caps) <= 1 << 14


def test_another_profiler_is_not_silently_replaced():
    sys.setprofile(lambda *a: None)
    try:
        with pytest.raises(RuntimeError, match="already running"):
            N.NativeHooks().start()
    finally:
        sys.setprofile(None)
        threading.setprofile(None)


def test_make_hooks_picks_the_compiled_hook(monkeypatch):
    monkeypatch.delenv("TRACEVIS3D_LIVE_HOOKS", raising=False)
    assert isinstance(make_hooks(lambda s, b: None), N.NativeHooks)
    if sys.version_info < (3, 12):
        assert type(make_hooks(lambda s, b: None, native=False)) is Hooks
    monkeypatch.setenv("TRACEVIS3D_LIVE_HOOKS", "setprofile")
    assert type(make_hooks(lambda s, b: None)) is Hooks
    monkeypatch.setenv("TRACEVIS3D_LIVE_HOOKS", "bogus")
    with pytest.raises(ValueError, match="TRACEVIS3D_LIVE_HOOKS"):
        make_hooks(lambda s, b: None)


# ------------------------------------------------------------------ kernel twins
def _stack_events_py(enter, fids, ts, stack, is_c, thread, origin):
    out, st_ = [], [(f, 7) for f in stack]
    for e, f, t in zip(enter, fids, ts):
        if e:
            st_.append((f, max(t - origin, 0)))
            kind = P.ENTER
        elif not st_:
            continue
        else:
            st_.pop()
            kind = P.EXIT
        out.append((kind, int(is_c[f]), thread, f, max(t - origin, 0)))
    return out, st_


@settings(max_examples=60, deadline=None)
@given(st.lists(st.tuples(st.booleans(), st.integers(0, 5), st.integers(0, 10 ** 6)), max_size=60),
       st.lists(st.integers(0, 5), max_size=5), st.integers(0, 3), st.integers(0, 1000))
def test_stack_events_matches_a_python_stack(events, stack, thread, origin):
    from tracevis3d.kernels.live import stack_events

    enter = np.array([e[0] for e in events], np.bool_)
    fids = np.array([e[1] for e in events], np.int64)
    ts = np.array([e[2] for e in events], np.int64)
    is_c = np.array([0, 1, 0, 1, 1, 0], np.int64)
    st_arr = np.zeros(max(1, len(stack)), np.int64)
    st_arr[: len(stack)] = stack
    st_t = np.full(st_arr.shape[0], 7, np.int64)
    packed, st_out, st_t_out, depth = stack_events(enter, fids, ts, st_arr, st_t, len(stack), is_c, thread, origin,
                                                   P.ENTER, P.EXIT)
    want, want_stack = _stack_events_py(enter, fids, ts, stack, is_c, thread, origin)
    rec = packed.view(P.EVENT_DTYPE).reshape(-1)
    got = [(int(r["type"]), int(r["flags"]), int(r["thread"]), int(r["func"]), int(r["ts"])) for r in rec]
    assert got == want
    assert list(zip(st_out[:depth].tolist(), st_t_out[:depth].tolist())) == want_stack


@settings(max_examples=60, deadline=None)
@given(st.lists(st.tuples(st.integers(0, 40), st.integers(0, 3)), max_size=80))
def test_table_lookup_and_first_of_each_match_a_dict(keys):
    from tracevis3d.kernels import native_trace as K

    k1 = np.array([k[0] * 16 for k in keys], np.int64)
    k2 = np.array([k[1] for k in keys], np.int64)
    first = K.first_of_each(k1, k2).tolist()
    seen = {}
    for i, k in enumerate(zip(k1.tolist(), k2.tolist())):
        seen.setdefault(k, i)
    assert first == sorted(seen.values())
    table = np.full((256, N.TABLE_FIELDS), -1, np.int64)
    known = {k: v for v, k in enumerate(sorted(seen)) if v % 2 == 0}
    for (a, b), v in known.items():
        K.insert(table, a, b, v)
    assert K.lookup(k1, k2, table).tolist() == [known.get(k, -1) for k in zip(k1.tolist(), k2.tolist())]


def test_open_calls_are_the_stack_with_the_times_the_calls_were_entered():
    """`Converter.open_calls` (the OPEN message): after any batch, ENTER records of the calls
    still open, outermost first, at their own times, for both hooks' batches."""
    a, b, c = fib.__code__, fails.__code__, squares.__code__
    conv = Converter(1000)
    conv.convert(0, [("call", a, 1100), ("call", b, 1200), ("call", c, 1300), ("return", c, 1400)])
    conv.convert(0, [("call", c, 1500)])
    rec = conv.open_calls()
    names = [conv.funcs.entries[f][0].split(" (")[0] for f in rec["func"]]
    assert names == ["fib", "fails", "squares"] and rec["ts"].tolist() == [100, 200, 500]
    assert (rec["type"] == P.ENTER).all() and (rec["thread"] == 0).all()
    conv.convert(0, [("return", c, 1600), ("return", b, 1700)])
    assert conv.open_calls()["ts"].tolist() == [100]

    def outer():
        return inner()

    def inner():
        got = hooks.take_partial()  # converted while outer and inner are open
        for slot, batch in got:
            seen.append(native_conv.convert(slot.index, batch))
            hooks.release(batch)
        return native_conv.open_calls()

    seen = []
    hooks = N.NativeHooks()
    native_conv = Converter(hooks.origin, native=hooks.native_rec)
    hooks.start()
    try:
        snap = outer()
    finally:
        for slot, batch in hooks.stop():
            hooks.release(batch)
    names = [native_conv.funcs.entries[f][0].split(" (")[0].rsplit(".", 1)[-1] for f in snap["func"]]
    k = names.index("outer")
    assert names[k + 1] == "inner" and "take_partial" in names[k + 2:]  # open, in order
    entered = np.concatenate(seen)
    entered = entered[entered["type"] == P.ENTER]
    for f, ts in zip(snap["func"][k: k + 2], snap["ts"][k: k + 2]):  # the times of their ENTER records
        assert ts in entered["ts"][entered["func"] == f]


def test_ended_threads_give_their_buffers_back_and_lose_nothing():
    hooks = N.NativeHooks()
    conv = Converter(hooks.origin, native=hooks.native_rec)
    hooks.start()
    got = {}
    try:
        for k in range(40):
            t = threading.Thread(target=fib, args=(6,), name=f"short-{k}")
            t.start()
            t.join()
            if k % 10 == 9:
                for _ in range(2):  # the first take sees them ended, the second retires them
                    for slot, batch in hooks.take_partial():
                        rec = conv.convert(slot.index, batch)
                        hooks.release(batch)
                        got[slot.name] = got.get(slot.name, 0) + int((rec["type"] == P.ENTER).sum())
    finally:
        for slot, batch in hooks.stop():
            hooks.release(batch)
    fib_calls = 25  # fib(6) makes 25 calls
    assert all(got.get(f"short-{k}", 0) >= fib_calls for k in range(40)), got
    retired = [b for s, b in zip(hooks.slots, hooks.buffers) if s.name.startswith("short-") and b.retired]
    assert len(retired) == 40 and all(b.current.size == 0 and b.spare is None for b in retired)


@pytest.mark.skipif(not hasattr(__import__("os"), "fork"), reason="no fork on this platform")
def test_a_forked_child_stops_recording():
    import os

    hooks = N.NativeHooks()
    hooks.start()
    try:
        r, w = os.pipe()
        pid = os.fork()
        if pid == 0:  # the child: its hooks are off, its buffers take nothing
            try:
                fib(10)
                ok = all(b.hdr[N.ACTIVE] == 0 for b in hooks.buffers) and sys.getprofile() is None
                os.write(w, b"1" if ok else b"0")
            finally:
                os._exit(0)
        os.close(w)
        assert os.read(r, 1) == b"1"
        os.waitpid(pid, 0)
        fib(5)
        assert hooks.active and hooks.buffers[0].hdr[N.ACTIVE] == 1  # the parent goes on
    finally:
        for slot, batch in hooks.stop():
            hooks.release(batch)
