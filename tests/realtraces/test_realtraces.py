"""The recorder of the tests' real traces (tests/support/realtraces.py), on programs recorded now: a
valid trace with the functions the program ran (deep, multi-threaded).  The figure, layout and
analysis tests read these programs' committed recordings (tests/data/recorded)."""
import pathlib
import shutil
import warnings

import numpy as np
import pytest

import tracevis3d
from tracevis3d.io.threadnames import is_placeholder_name


def _load(path):
    """``path`` loaded, every repair an error (a real VizTracer file needs none); a file that
    needed one is kept in build/test-logs/ and the test fails naming the repair (CI shows only
    the tail of a run: stop 85 lost which repair a fresh threads recording needed)."""
    with warnings.catch_warnings():
        warnings.simplefilter("error", tracevis3d.TraceWarning)
        try:
            return tracevis3d.load(path)
        except (tracevis3d.TraceWarning, tracevis3d.TraceFormatError) as e:
            kept = pathlib.Path(__file__).resolve().parents[2] / "build" / "test-logs" / pathlib.Path(path).name
            kept.parent.mkdir(parents=True, exist_ok=True)
            shutil.copyfile(path, kept)
            pytest.fail(f"{type(e).__name__}: {e} (the file kept as {kept})", pytrace=False)


def test_deep_trace_is_deep_and_valid(fresh_deep_trace_path):
    t = _load(fresh_deep_trace_path).check()
    assert int(t.depth.max()) >= 100, f"only {int(t.depth.max()) + 1} levels"
    assert 10_000 <= len(t) <= 200_000
    # the depth is the encoder's per-level generator
    deepest = int(np.argmax(t.depth))
    chain = []
    i = deepest
    while i >= 0:
        chain.append(t.function_names[t.func[i]])
        i = int(t.parent[i])
    assert sum("_iterencode_dict" in s for s in chain) >= 100


def test_threads_trace_has_named_threads_and_waits(fresh_threads_trace_path):
    t = _load(fresh_threads_trace_path).check()
    assert t.n_threads >= 5
    names = set(t.thread_names)
    assert {"MainThread", "writer", "parse_0", "parse_1", "parse_2"} <= names, names
    assert not any(is_placeholder_name(n) for n in t.thread_names)
    wait = t.kind == tracevis3d.KIND_WAIT
    assert wait.any()
    # every thread waits (queue put/get, condition, executor), and the waits take real time
    for k, name in enumerate(t.thread_names):
        w = wait & (t.thread == k)
        assert w.any(), f"{name} has no wait call"
    waited = {t.function_names[f] for f in np.unique(t.func[wait])}
    assert any(s.startswith("Queue.put") for s in waited) or any(s.startswith("Condition.wait") for s in waited)
    assert any(s.startswith("Condition.wait") for s in waited)
    assert (t.kind == tracevis3d.KIND_RELEASE).any()



def test_http_threads_recipe_records_a_thread_per_request(fresh_http_threads_paths):
    """The HTTP server recipe (`realtraces.record_http_threads`): two valid traces, each with a
    thread per request beside the server's and the six clients', the server's request handler and
    docutils' writer in them."""
    for path, requests in zip(fresh_http_threads_paths, (24, 16)):
        t = _load(path).check()
        assert t.n_threads >= requests + 7, (path.name, t.n_threads)
        names = set(t.function_names)
        assert any("process_request_thread" in s for s in names), path.name
        assert any("docutils" in s and "publish" in s for s in names), sorted(names)[:20]


def test_counters_recipe_records_counters_and_collections(fresh_counters_trace_path):
    """The counters recipe (`realtraces.record_counters`, --log_gc, retried on CPython's rare
    SystemError): a valid trace of docutils' workers with its counter tracks."""
    t = _load(fresh_counters_trace_path).check()
    assert t.n_threads >= 4
    assert any("docutils" in s for s in t.function_names)
    assert len(t.series_names) >= 3 and len(t.counter_ts) > 10, t.counter_names
