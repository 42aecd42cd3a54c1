"""tracevis3d.blender.session: the add-on's trace cache (bpy-free, so tested directly)."""
import json
import os

import pytest

from tracevis3d import TraceFormatError
from tracevis3d.blender import session


def write_chrome(path, n_children=3, name="main"):
    """A small valid Chrome trace: one root with ``n_children`` children."""
    events = [{"ph": "X", "name": name, "ts": 0, "dur": 100 * (n_children + 1), "pid": 1, "tid": 1}]
    for k in range(n_children):
        events.append({"ph": "X", "name": f"child{k}", "ts": 10 + 100 * k, "dur": 50, "pid": 1, "tid": 1})
    path.write_text(json.dumps({"traceEvents": events}))
    return path


@pytest.fixture(autouse=True)
def _clean():
    session.clear_cache()
    yield
    session.clear_cache()


def test_same_file_loaded_once(tmp_path):
    p = write_chrome(tmp_path / "a.json")
    a = session.get_trace(p)
    b = session.get_trace(str(p))
    assert a is b
    assert len(a) == 4
    assert session.cached_paths() == [str(p)]


def test_rewritten_file_is_reloaded(tmp_path):
    p = write_chrome(tmp_path / "a.json", n_children=3)
    a = session.get_trace(p)
    write_chrome(p, n_children=5)  # size changes; mtime may not (coarse clocks)
    os.utime(p, ns=(os.stat(p).st_atime_ns, os.stat(p).st_mtime_ns + 1_000_000_000))
    b = session.get_trace(p)
    assert b is not a and len(b) == 6
    assert session.cached_paths() == [str(p)], "the old version must be dropped"


def test_cache_is_bounded_lru(tmp_path):
    paths = [write_chrome(tmp_path / f"t{k}.json", n_children=k + 1) for k in range(session.MAX_TRACES + 1)]
    first = session.get_trace(paths[0])
    for p in paths[1:]:
        session.get_trace(p)
    assert len(session.cached_paths()) == session.MAX_TRACES
    assert str(paths[0]) not in session.cached_paths()
    assert session.get_trace(paths[0]) is not first  # evicted, so reloaded


def test_clear_cache(tmp_path):
    p = write_chrome(tmp_path / "a.json")
    a = session.get_trace(p)
    session.clear_cache()
    assert session.cached_paths() == []
    assert session.get_trace(p) is not a


@pytest.mark.parametrize("bad, message", [
    ("", "no trace file given"),
    ("   ", "no trace file given"),
    ("missing.json", "not found"),
    (".", "not a file"),
])
def test_bad_paths_are_named(tmp_path, bad, message):
    path = bad if not bad.strip() else str(tmp_path / bad) if bad != "." else str(tmp_path)
    with pytest.raises(TraceFormatError, match=message):
        session.get_trace(path)
    assert session.cached_paths() == []


def test_corrupt_file_is_not_cached(tmp_path):
    p = tmp_path / "corrupt.json"
    p.write_text('{"traceEvents": [{"ph": "X", "name": ')
    with pytest.raises(TraceFormatError) as e:
        session.get_trace(p)
    assert "corrupt.json" in str(e.value)
    assert session.cached_paths() == []
    with pytest.raises(TraceFormatError):
        session.get_trace(None)
