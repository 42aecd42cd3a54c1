"""A time window's figure costs the window, not the trace (issue 26, item 5): the calls that
overlap a window are found by binary search (`model_window.window_calls`), `Trace.subset`
and the icicle cut the trace to them first, and the windowed icicle is the icicle of
``trace.subset(time_window=w)`` (its call indices mapped back to the trace)."""
import dataclasses
import os
import tracemalloc

import numpy as np
import pytest

import tracevis3d
from tracevis3d.layout import IcicleParams, icicle_layout
from tracevis3d.layout.annotate import fmt_time
from tracevis3d.naming import function_table
from tracevis3d.model_window import window_calls
from tree_factory import random_trace


def _traces():
    yield random_trace(seed=3, threads=3, kinds=True, tiny=0.3, pass_through=0.3)
    yield random_trace(seed=9, threads=1, n_roots=40, fanout=2, max_depth=7)
    yield tracevis3d.synthetic(30_000, threads=4, seed=5)


def _windows(tr, rng):
    span = float(tr.end.max())
    yield 0.3 * span, 0.45 * span
    yield 0.0, span
    yield -10.0, 0.01 * span  # from before the trace
    yield 0.9 * span, 2 * span  # past its end
    for _ in range(6):  # on call boundaries (equal times, zero-length windows)
        a, b = np.sort(rng.choice(np.r_[tr.start, tr.end], 2))
        yield float(a), float(b)
        yield float(a), float(a)


def test_window_calls_are_the_calls_that_overlap_it():
    rng = np.random.default_rng(1)
    for tr in _traces():
        for t0, t1 in _windows(tr, rng):
            want = np.flatnonzero((tr.end >= t0) & (tr.start <= t1))
            assert np.array_equal(window_calls(tr, t0, t1), want), (t0, t1)
            for threads in ([0], [tr.n_threads - 1, 0]):
                got = window_calls(tr, t0, t1, threads)
                assert np.array_equal(got, want[np.isin(tr.thread[want], threads)])
    assert window_calls(tr, 5.0, 1.0).size == 0  # t1 < t0: nothing


def test_subset_of_a_window_is_the_masked_cut():
    """`Trace.subset` finds the window by binary search: the same trace as the cut by a
    mask over every call (`Trace._take` of the mask), max_depth and threads alike."""
    rng = np.random.default_rng(2)
    for tr in _traces():
        for t0, t1 in list(_windows(tr, rng))[:5]:
            for threads, depth in ((None, None), ([0], None), (None, 2)):
                mask = (tr.end >= t0) & (tr.start <= t1)
                if threads is not None:
                    mask &= np.isin(tr.thread, threads)
                if depth is not None:
                    mask &= tr.depth <= depth
                got = tr.subset(thread=threads, time_window=(t0, t1), max_depth=depth)
                th = np.arange(tr.n_threads) if threads is None else np.asarray(threads)
                from tracevis3d.model_side import cut_side

                pids = None if threads is None else np.unique(tr.thread_pid[th])
                want = tr._take(mask, th, side=cut_side(tr, (t0, t1), pids),
                                instants=(tr.instant_ts >= t0) & (tr.instant_ts <= t1))
                for f in dataclasses.fields(want):
                    a, b = getattr(got, f.name), getattr(want, f.name)
                    if isinstance(a, np.ndarray):
                        assert np.array_equal(a, b), f.name
                got.check()


def _same_spec(full, sub, keep):
    """``full`` (a windowed icicle of a trace) equals ``sub`` (the icicle of its window's
    subset) but for call indices, which ``keep`` maps from the subset to the trace."""
    assert [ly.name for ly in full.layers] == [ly.name for ly in sub.layers]
    for a, b in zip(full.layers, sub.layers):
        for f in dataclasses.fields(a):
            x, y = getattr(a, f.name), getattr(b, f.name)
            if f.name == "attributes":
                assert x.keys() == y.keys(), a.name
                for k in x:
                    yk = np.asarray(y[k])
                    if k == "call_index":
                        yk = np.where(yk >= 0, keep[np.maximum(yk, 0)], yk)
                    assert np.array_equal(x[k], yk), (a.name, k)
            elif isinstance(x, np.ndarray):
                assert np.array_equal(x, y), (a.name, f.name)
            else:
                assert x == y, (a.name, f.name)
    for f in dataclasses.fields(full.labels):
        x, y = getattr(full.labels, f.name), getattr(sub.labels, f.name)
        if f.name == "call_index":
            y = np.where(y >= 0, keep[np.maximum(y, 0)], y)
        if isinstance(x, dict):  # per-label attributes (the callouts' leaders)
            assert x.keys() == y.keys() and all(np.array_equal(x[k], y[k]) for k in x), f.name
            continue
        assert (np.array_equal(x, y) if isinstance(x, np.ndarray) else x == y), f.name
    assert full.materials == sub.materials and full.legend == sub.legend
    assert full.meta == sub.meta


def _window_alone(tr, w):
    """The window's calls as a trace of their own, their times clipped to the window (as
    if recorded during the window only)."""
    sub = tr.subset(time_window=w)
    sub.start = np.maximum(sub.start, w[0])
    sub.end = np.minimum(sub.end, w[1])
    return sub.check()


@pytest.mark.parametrize("extra", [{}, {"color_by": "module", "fold": "none"}, {"color_by": "kind"},
                                   {"color_by": "self", "extrude_measure": "inclusive"},
                                   {"extrude_measure": "calls", "threads": [1], "hide": ["f3"]}])
def test_a_windowed_icicle_is_the_icicle_of_the_window(extra):
    """The colours are ranked, the levels folded and the measures taken over the window's
    calls, clipped to it: the figure of the window on its own, whichever trace it was cut
    from."""
    tr = random_trace(seed=3, threads=3, kinds=True, tiny=0.3, pass_through=0.3)
    span = float(tr.end.max())
    w = (0.3 * span, 0.55 * span)
    p = IcicleParams(resolution=(640, 360), time_window=w, **extra)
    full = icicle_layout(tr, p)
    _same_spec(full, icicle_layout(_window_alone(tr, w), p), window_calls(tr, *w))


def test_calls_across_the_window_edges_are_measured_inside_it():
    """A root running through the whole trace does not take the window's self-time scale
    nor its colour budget: its self time in the window is the window's gaps."""
    tr = tracevis3d.synthetic(40_000, threads=2, seed=2)
    span = float(tr.end.max())
    w = (0.5 * span, 0.52 * span)
    spec = icicle_layout(tr, IcicleParams(resolution=(640, 360), time_window=w, extrude_measure="inclusive"))
    assert any(f"deepest {fmt_time(w[1] - w[0])}" in t for t in spec.labels.texts)


def test_a_windowed_icicle_allocates_for_the_window_not_the_trace(tmp_path):
    """The numpy memory a windowed icicle of a memory-mapped 1M-call trace allocates is
    that of the icicle of the window's subset (within a byte per call of the trace: one
    bool array as long as the trace would show)."""
    tr = tracevis3d.synthetic(1_000_000, threads=4, seed=7)
    path = os.path.join(tmp_path, "t.tv3d.npz")
    tracevis3d.save(tr, path)
    del tr
    mapped = tracevis3d.load(path)
    span = float(mapped.end.max())
    w = (0.5 * span, 0.505 * span)
    p = IcicleParams(resolution=(640, 360), time_window=w)
    sub = mapped.subset(time_window=w)
    icicle_layout(sub, p)  # compiled, function tables cached
    function_table(mapped)  # the loaded trace's too (per function, once per trace: not the window's cost)
    peaks = []
    for t in (sub, mapped, sub, mapped):
        tracemalloc.start()
        icicle_layout(t, p)
        peaks.append(tracemalloc.get_traced_memory()[1])
        tracemalloc.stop()
    assert max(peaks[1], peaks[3]) - min(peaks[0], peaks[2]) < len(mapped), peaks
