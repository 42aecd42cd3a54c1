"""The live tracer on Python ≥ 3.12: ``sys.monitoring`` (PEP 669) callbacks and the
compiled profile function (which CPython ≥ 3.12 runs from its own monitoring events): the
same program recorded and fed live by the Python 3.13 interpreter of ``.venv313`` (built by
``make test`` when a python3.13 exists) has the same calls as under Python 3.11's
``sys.setprofile`` hooks: every call of the program's own functions at the same depth, and
its C calls."""
import collections
import os
import pathlib
import subprocess
import sys

import pytest

import tracevis3d
from live_helpers import follow
from tracevis3d.live import LiveSession

REPO = pathlib.Path(__file__).resolve().parents[2]
SCRIPT = str(REPO / "tests" / "live_programs" / "deterministic.py")
PY313 = REPO / ".venv313" / "bin" / "python"
ENV = {**os.environ, "PYTHONPATH": str(REPO)}


@pytest.fixture(scope="module")
def py313() -> str:
    if not PY313.is_file():
        pytest.skip(f"no Python ≥ 3.12 interpreter at {PY313} (make test builds it when python3.13 exists)")
    r = subprocess.run([str(PY313), "-c", "import sys, zmq, numpy; print(sys.version_info >= (3, 12))"],
                       capture_output=True, text=True, env=ENV, timeout=120)
    if r.stdout.strip() != "True":
        pytest.skip(f"{PY313} is not a Python ≥ 3.12 with pyzmq and numpy: {r.stderr[-300:]}")
    return str(PY313)


def _record(python, out, hooks=None):
    env = dict(ENV, **({"TRACEVIS3D_LIVE_HOOKS": hooks} if hooks else {}))
    r = subprocess.run([python, "-m", "tracevis3d.live", "record", "-o", str(out), SCRIPT],
                       capture_output=True, text=True, env=env, timeout=300, cwd=str(out.parent))
    assert r.returncode == 0, r.stderr[-2000:]
    assert "Exception ignored" not in r.stderr, r.stderr[-2000:]  # no dummy threads made while tracing
    return tracevis3d.load(str(out))


def _own_calls(t):
    """Per thread: (name, depth) of the calls of the program's own functions, and how often
    it called a few C functions (the standard library's own calls differ across versions)."""
    out = {}
    for ti, name in enumerate(t.thread_names):
        lo, hi = t.thread_ranges()[ti]
        names = [t.function_names[t.func[i]] for i in range(lo, hi)]
        out[name] = [(f, int(t.depth[lo + k])) for k, f in enumerate(names) if "deterministic.py" in f]
        out[name + " C"] = collections.Counter(f for f in names if f in ("builtins.sum", "str.split", "str.join"))
    return out


def test_python_313_hooks(py313):
    """The compiled hook by default; Python ``sys.monitoring`` callbacks without it (the
    recorder's reference) or when asked; the Python setprofile hook when asked."""
    code = ("from tracevis3d.live.tracer import make_hooks; "
            "print(type(make_hooks(lambda slot, batch: None)).__name__, "
            "type(make_hooks(lambda slot, batch: None, native=False)).__name__)")
    for env, want in (("", "NativeHooks MonitoringHooks"), ("monitoring", "MonitoringHooks MonitoringHooks"),
                      ("setprofile", "Hooks Hooks")):
        r = subprocess.run([py313, "-c", code], capture_output=True, text=True, timeout=120,
                           env=dict(ENV, TRACEVIS3D_LIVE_HOOKS=env))
        assert r.stdout.strip() == want, (env, r.stderr[-2000:])


def test_monitoring_records_the_calls_setprofile_records(py313, tmp_path):
    old = _own_calls(_record(sys.executable, tmp_path / "setprofile.json"))
    new = _own_calls(_record(py313, tmp_path / "monitoring.json"))
    assert old.keys() == new.keys()
    for key in old:
        assert new[key] == old[key], key
    assert sum(len(v) for k, v in new.items() if not k.endswith(" C")) > 100


@pytest.mark.parametrize("hooks", ["monitoring", "native"])
def test_python_313_feeds_a_live_viewer(py313, tmp_path, hooks):
    old = _own_calls(_record(sys.executable, tmp_path / "setprofile.json"))
    with LiveSession("tcp://127.0.0.1:*") as sess:
        p = subprocess.Popen([py313, "-m", "tracevis3d.live", "run", "--endpoint", sess.endpoint, SCRIPT],
                             env=dict(ENV, TRACEVIS3D_LIVE_HOOKS=hooks), stdout=subprocess.PIPE,
                             stderr=subprocess.PIPE, text=True)
        follow(sess, timeout=120)
        out, err = p.communicate(timeout=120)
        assert p.returncode == 0, err[-2000:]
        live = sess.trace.check()
        assert sess.bad == {} and sess.gaps == 0 and sess.dropped == 0
    assert live.thread_names == ["MainThread", "worker-0", "worker-1", "worker-2"]
    assert _own_calls(live) == old  # the program's calls, fed live by sys.monitoring
    assert live.meta["live"]["open_calls"] == 0
