"""Chrome Trace Event JSON export (`tracevis3d.save(..., format="chrome")`, issue 26 item 4):
the bytes kernel against a brute-force twin, round trips through the importer (plain and
gzip, both styles, real traces), streaming in chunks, and a failed export that keeps the
file that was there."""
import gzip
import json
import os

import numpy as np
import orjson
import pytest

import tracevis3d
from tracevis3d.io.chrome_writer import chrome_json_bytes, iter_chrome_json, save_chrome


def _twin_event(trace, c, origin, with_args=True):
    """One X event as the kernel writes it, by Python's own formatting."""
    def t3(v):
        sign = "-" if v < 0 else ""
        v = abs(v)
        whole = np.floor(v)
        frac = int(np.rint((v - whole) * 1000.0))
        w = int(whole)
        if frac >= 1000:
            w, frac = w + 1, frac - 1000
        return f"{sign}{w}.{frac:03d}"

    th = int(trace.thread[c])
    ev = (f'{{"pid": {int(trace.thread_pid[th])}, "tid": {int(trace.thread_tid[th])}, '
          f'"ts": {t3(float(trace.start[c]) + origin)}, "ph": "X", "cat": "FEE", '
          f'"name": {json.dumps(trace.function_names[int(trace.func[c])])}, "dur": {t3(float(trace.duration[c]))}')
    if with_args and len(trace.args_call):
        k = np.flatnonzero(trace.args_call == c)
        if k.size:
            a = trace.args_blob[trace.args_ptr[k[0]]: trace.args_ptr[k[0] + 1]].tobytes().decode()
            ev += f', "args": {a}'
    return ev + "}"


@pytest.mark.parametrize("style", ["sorted", "viztracer"])
def test_kernel_matches_its_twin(style):
    t = tracevis3d.synthetic(3000, threads=3, seed=5)
    t.meta["clock_origin"] = 1_661_938_466_355_509.25  # absolute µs, as real traces have
    doc = chrome_json_bytes(t, style=style).decode()
    origin = t.meta["clock_origin"]
    order = np.lexsort((-t.start, t.end)) if style == "viztracer" else np.arange(len(t))
    want = ", ".join(_twin_event(t, int(c), origin) for c in order)
    assert want in doc
    orjson.loads(doc)


def test_times_carry_and_sign():
    """Fractions that round to 1000 carry into the whole part; negative times keep their sign."""
    t = tracevis3d.synthetic(50, seed=1)
    t.start[:] = t.start - t.start.min() - 5.0  # starts before the origin
    t.start[0] = -5.0
    t.meta["clock_origin"] = 0.0
    t.end[:] = t.start + 1.0
    t.end[0] = t.start[0] + 1.9996  # rounds to 2.000
    doc = chrome_json_bytes(t).decode()
    assert '"ts": -5.000' in doc and '"dur": 2.000' in doc
    for c in range(len(t)):
        assert _twin_event(t, c, 0.0) in doc


def test_non_finite_times_are_refused_in_one_line():
    t = tracevis3d.synthetic(20, seed=2)
    t.start[3] = np.inf
    with pytest.raises(ValueError, match="cannot export a call start of inf"):
        chrome_json_bytes(t)
    t = tracevis3d.synthetic(20, seed=2)  # a trace made by hand, never checked: its side values too
    t.counter_names, t.series_names, t.series_units = ["m"], ["v"], [""]
    t.series_counter, t.series_pid = np.zeros(1, np.int32), np.zeros(1, np.int64)
    t.counter_ts, t.counter_value, t.counter_series = np.array([1.0, 2.0]), np.array([1.0, np.nan]), np.zeros(2, np.int32)
    with pytest.raises(ValueError, match="cannot export a counter value of nan"):
        chrome_json_bytes(t)
    t.counter_value[1], t.counter_ts[0] = 3.0, -np.inf
    with pytest.raises(ValueError, match="cannot export a counter sample time of -inf"):
        chrome_json_bytes(t)


@pytest.mark.parametrize("suffix", [".json", ".json.gz"])
@pytest.mark.parametrize("style", ["sorted", "viztracer"])
def test_round_trip_through_the_importer(tmp_path, suffix, style):
    a = tracevis3d.synthetic(20000, threads=4, seed=3)
    p = tmp_path / f"a{suffix}"
    if style == "sorted":
        tracevis3d.save(a, p, format="chrome")
    else:
        save_chrome(a, p, style=style)
    if suffix.endswith(".gz"):
        with gzip.open(p) as f:
            orjson.loads(f.read())
    b = tracevis3d.load(p)
    for k in ("parent", "depth", "thread"):
        assert np.array_equal(getattr(a, k), getattr(b, k)), k
    names = lambda t: np.array(t.function_names, object)[t.func]  # noqa: E731 (ids follow the file's order)
    assert (names(a) == names(b)).all()
    assert np.allclose(a.start, b.start, atol=1e-3) and np.allclose(a.end, b.end, atol=1e-3)
    assert a.thread_names == b.thread_names


def test_real_trace_round_trips(realdata, tmp_path):
    src = realdata / "viztracer-examples" / "multithread.json"
    if not src.exists():
        pytest.skip(f"{src} is not in the shared real data")
    a = tracevis3d.load(src)
    p = tmp_path / "mt.json"
    tracevis3d.save(a, p, format="chrome")
    b = tracevis3d.load(p)
    assert len(a) == len(b) and np.array_equal(a.parent, b.parent)
    assert (np.array(a.function_names, object)[a.func] == np.array(b.function_names, object)[b.func]).all()
    assert a.instant_names == b.instant_names and len(a.instant_ts) == len(b.instant_ts)


def test_streamed_in_chunks():
    t = tracevis3d.synthetic(5000, seed=4)
    parts = list(iter_chrome_json(t, chunk_calls=700))
    assert len(parts) >= 5000 // 700 + 2  # head, the chunks, the tail
    assert max(len(x) for x in parts[1:-1]) < 700 * 400
    assert b"".join(parts) == chrome_json_bytes(t)


def test_a_failed_export_keeps_the_file_that_was_there(tmp_path):
    p = tmp_path / "keep.json"
    p.write_bytes(b"user data")
    t = tracevis3d.synthetic(100, seed=6)
    t.end[5] = np.nan
    with pytest.raises(ValueError):
        tracevis3d.save(t, p, format="chrome")
    assert p.read_bytes() == b"user data"
    assert [x for x in os.listdir(tmp_path) if x != "keep.json"] == []  # no half file left


def test_arguments_of_a_real_trace_match_the_twin(realdata):
    src = realdata / "viztracer-examples" / "function_args_return.json"
    if not src.exists():
        pytest.skip(f"{src} is not in the shared real data")
    t = tracevis3d.load(src)
    assert len(t.args_call) > 0
    doc = chrome_json_bytes(t).decode()
    origin = t.meta.get("clock_origin", 0.0)
    assert all(_twin_event(t, c, origin) in doc for c in range(len(t)))
