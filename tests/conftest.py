"""Shared test set-up.

Blender's user folders are isolated BEFORE anything imports bpy (conftest is
imported first), so tests never touch a real user's Blender configuration.
The numba cache goes to a per-run temporary folder unless NUMBA_CACHE_DIR is set.
"""
import os
import pathlib
import signal
import tempfile

import pytest

_TMP = pathlib.Path(tempfile.mkdtemp(prefix="tv3d-tests-"))
for _var in ("CONFIG", "SCRIPTS", "EXTENSIONS", "DATAFILES"):
    _d = _TMP / "blender-user" / _var.lower()
    _d.mkdir(parents=True, exist_ok=True)
    os.environ.setdefault(f"BLENDER_USER_{_var}", str(_d))
os.environ.setdefault("NUMBA_CACHE_DIR", str(pathlib.Path.home() / ".cache" / "tracevis3d" / "numba-tests"))
# the wheel and the extension the tests build carry the generic kernels only (scripts/test.sh says
# so too): each x86-64 level would be another full compile, ~4 min of two cores
os.environ.setdefault("TRACEVIS3D_KERNEL_CPUS", "generic")

REPO = pathlib.Path(__file__).resolve().parent.parent
#: tests/support: the summary names any kernel compiled during the tests (compile_log) and each
#: layer's time against its budget (layer_budget)
pytest_plugins = ["compile_log", "layer_budget"]
REALDATA = pathlib.Path(os.environ.get("TRACEVIS3D_REALDATA", REPO.parent / "shared" / "realdata"))


@pytest.fixture(scope="session")
def realdata() -> pathlib.Path:
    """../shared/realdata, or skip with a clear reason when it is absent."""
    if not REALDATA.is_dir():
        pytest.skip(f"real trace files not found at {REALDATA} (set TRACEVIS3D_REALDATA)")
    return REALDATA


@pytest.fixture
def tmp_out(tmp_path) -> pathlib.Path:
    return tmp_path


def _recorded(tmp_path_factory, what: str, needs: str = "viztracer"):
    """``realtraces.record_<what>`` into a fresh folder, once per caller's scope (taken from the
    early runner when it started it, `pytest_collection_finish`); skips when
    ``realtraces.<needs>_missing()`` says why it cannot record here, fails on a bad recording."""
    import realtraces

    why = getattr(realtraces, f"{needs}_missing")()
    if why:
        pytest.skip(why)
    try:
        if what in _EARLY:
            return _EARLY[what].result()
        return getattr(realtraces, f"record_{what}")(tmp_path_factory.mktemp(f"realtrace-{what}"))
    except RuntimeError as e:
        pytest.fail(f"could not record the {what} trace: {e}", pytrace=False)


#: the session's recordings: fixture name -> (what `realtraces.record_<what>` records, what it needs)
RECORDINGS = {"fresh_deep_trace_path": ("deep", "viztracer"), "fresh_threads_trace_path": ("threads", "viztracer"),
              "fresh_json_pair_paths": ("json_pair", "viztracer"),
              "fresh_http_threads_paths": ("http_threads", "docutils"),
              "fresh_counters_trace_path": ("counters", "docutils")}
#: what the early runner was given: name -> EarlyResult (a recording's paths, or an early process's result)
_EARLY: dict = {}


class EarlyResult:
    """What an early job returns, read from its folder when the runner has written it
    (tests/support/early_runner.py); ``result()`` waits for it, and fails when the runner is gone."""

    def __init__(self, name: str, folder: pathlib.Path):
        self.name, self.folder = name, folder

    def result(self):
        import pickle
        import time

        import early_runner

        done = self.folder / early_runner.RESULT_NAME
        while not done.exists():
            if _RUNNER[0].poll() is not None and not done.exists():
                raise RuntimeError(f"the early runner ended (exit {_RUNNER[0].returncode}) before {self.name}")
            time.sleep(0.1)
        kind, value = pickle.loads(done.read_bytes())
        if kind == "error":
            raise value
        return value


def pytest_collection_modifyitems(config, items):
    """Tests marked ``builds_packages`` run after the other tests of their session, in their
    own order: the extension zip and the wheel they build need Python 3.13's kernels, which
    make test compiles beside tests/blender (scripts/test.sh).  Run first, the extension test's
    setup waited ~3 min for them and ``--durations`` blamed it; the wait was not idle time (that
    compile keeps both cores busy), so the layer's wall time is the same either way."""
    items[:] = sorted(items, key=lambda item: item.get_closest_marker("builds_packages") is not None)


def pytest_collection_finish(session):
    """Start the session's slow child processes now, one at a time in one child process
    (tests/support/early_runner.py: no Python runs beside bpy in this process), in the order the
    selected tests first need them: the real programs recorded once per session
    (`RECORDINGS`) and the processes a test module lists in ``EARLY_PROCESSES`` (name -> a
    function of a work folder that runs it, for its tests marked ``early_process(name)``).
    They wait for their child process, so they run on the core the suite leaves idle (the
    tests run one at a time); a test that needs one waits for its result (``early_result``)."""
    import json
    import subprocess
    import sys

    import realtraces

    if session.config.option.collectonly:
        return
    jobs = {}
    for item in session.items:
        for name in item.fixturenames:
            if name in RECORDINGS:
                what, needs = RECORDINGS[name]
                if what not in jobs and not getattr(realtraces, f"{needs}_missing")():
                    jobs[what] = ("realtraces", f"record_{what}")
        for mark in item.iter_markers("early_process"):
            name = mark.args[0]
            if name not in jobs:
                run = getattr(item.module, "EARLY_PROCESSES")[name]
                jobs[name] = (str(item.module.__file__), run.__name__)  # a test module: by its path
    if not jobs:
        return
    factory = getattr(session.config, "_tmp_path_factory", None)  # pytest's basetemp (kept for the last runs)
    spec = []
    for name, (module, function) in jobs.items():
        folder = (factory.mktemp(f"early-{name}") if factory is not None else
                  pathlib.Path(tempfile.mkdtemp(prefix=f"early-{name}-", dir=_TMP)))
        spec.append([name, module, function, str(folder)])
        _EARLY[name] = EarlyResult(name, folder)
    spec_file = _TMP / "early-jobs.json"
    spec_file.write_text(json.dumps(spec))
    env = dict(os.environ, PYTHONPATH=os.pathsep.join(filter(None, [str(REPO), os.environ.get("PYTHONPATH")])))
    _RUNNER.append(subprocess.Popen([sys.executable, str(REPO / "tests" / "support" / "early_runner.py"), str(spec_file)],
                                    cwd=str(REPO), env=env, stdin=subprocess.DEVNULL,
                                    start_new_session=True))


#: the early runner's process (one per session)
_RUNNER: list = []


def session_tmp() -> pathlib.Path:
    """This session's own temporary folder (Blender's user folders, the extension driver's
    work), removed when the session ends: a run left ~400 MB in /tmp before, and a disk of
    many runs filled up."""
    return _TMP


def pytest_sessionfinish(session):
    """An interrupted or partial run does not wait for early work no test will read; the
    session's temporary folder goes (pytest's own, with the recordings, keeps its last runs)."""
    import shutil

    for runner in _RUNNER:
        if runner.poll() is None:  # the runner and the program it is recording
            os.killpg(runner.pid, signal.SIGKILL)
            runner.wait()
    shutil.rmtree(_TMP, ignore_errors=True)


@pytest.fixture(scope="session")
def early_result():
    """``early_result(name)``: the result of the early process ``name`` (started at collection
    when a selected test is marked ``early_process(name)``; else run now in a fresh folder)."""
    def get(name: str, module):
        if name not in _EARLY:
            return module.EARLY_PROCESSES[name](pathlib.Path(tempfile.mkdtemp(prefix=f"early-{name}-", dir=_TMP)))
        return _EARLY[name].result()
    return get


#: the committed recordings (tests/data/recorded, made by tools/record_test_traces.py with the recipes
#: of tests/support/realtraces.py) that figure, layout and analysis tests read: the same bytes on
#: every run, whatever the machine's load was (a recording made during the session drew its figure
#: from a run as slow or fast as that moment's machine)
COMMITTED = REPO / "tests" / "data" / "recorded"


def _committed(tmp_path_factory, name: str) -> tuple:
    """The committed recording ``name`` inflated into a folder of the session (once per session,
    by its fixture): (its paths, its manifest entry)."""
    import gzip
    import json
    import lzma
    import shutil

    entry = json.loads((COMMITTED / "manifest.json").read_text())[name]
    folder = tmp_path_factory.mktemp(f"recorded-{name}")
    paths = []
    for f in entry["files"]:
        packed = COMMITTED / f["file"]
        target = folder / packed.stem  # (the name less .gz or .xz)
        with (lzma.open if packed.suffix == ".xz" else gzip.open)(packed) as src, open(target, "wb") as dst:
            shutil.copyfileobj(src, dst, 1 << 20)
        paths.append(target)
    return paths, entry


@pytest.fixture(scope="session")
def deep_trace_path(tmp_path_factory) -> pathlib.Path:
    """A real VizTracer trace ≥ 100 levels deep (json.tool on a 105-level document), committed
    (tests/data/recorded/deep_json_tool.json.gz)."""
    return _committed(tmp_path_factory, "deep")[0][0]


@pytest.fixture(scope="session")
def threads_trace_path(tmp_path_factory) -> pathlib.Path:
    """A real VizTracer trace of examples/threads_pipeline.py: 5 named threads, lock, queue and
    condition waits, file I/O; committed (tests/data/recorded/threads_pipeline.json.gz)."""
    return _committed(tmp_path_factory, "threads")[0][0]


@pytest.fixture(scope="session")
def json_pair_paths(tmp_path_factory) -> tuple:
    """Two real VizTracer traces of the same program on two inputs (json.tool on a list of
    flat records and on nested records with floats and non-ASCII text), committed
    (tests/data/recorded/json_tool_{a,b}.json.gz): (path A, path B, seconds the recording took)."""
    (a, b), entry = _committed(tmp_path_factory, "json_pair")
    return a, b, float(entry["seconds"])


@pytest.fixture(scope="session")
def sync_program_path(tmp_path_factory) -> pathlib.Path:
    """tests/support/sync_program.py (producer → queue → consumer, a Condition, known hand-offs)
    recorded with VizTracer --log_func_args; committed (tests/data/recorded/sync_program.json.gz)."""
    return _committed(tmp_path_factory, "sync_program")[0][0]


@pytest.fixture(scope="session")
def fresh_deep_trace_path(tmp_path_factory) -> pathlib.Path:
    """`deep_trace_path`'s program recorded now, once per session, for the tests of the recorder
    itself (tests/support/realtraces.py); skips when viztracer is not installed."""
    return _recorded(tmp_path_factory, "deep")


@pytest.fixture(scope="session")
def fresh_threads_trace_path(tmp_path_factory) -> pathlib.Path:
    """`threads_trace_path`'s program recorded now, once per session, for the tests of the
    recorder itself; skips when viztracer is not installed."""
    return _recorded(tmp_path_factory, "threads")


@pytest.fixture(scope="session")
def fresh_json_pair_paths(tmp_path_factory) -> tuple:
    """`json_pair_paths`' program recorded now, once per session, for the tests of the recorder
    itself: (path A, path B, seconds of the slower recording); skips without viztracer."""
    return _recorded(tmp_path_factory, "json_pair")


@pytest.fixture(scope="session")
def numba_jit_trace_path(tmp_path_factory) -> pathlib.Path:
    """Three threads jit-compiling with numba behind its compiler lock (`realtraces.record_numba_jit`),
    committed (tests/data/recorded/numba_jit.json.xz)."""
    return _committed(tmp_path_factory, "numba_jit")[0][0]


@pytest.fixture(scope="session")
def docutils_pool_paths(tmp_path_factory) -> tuple:
    """Two real VizTracer traces of docutils in a thread pool (a third-party program, 100+
    levels, several threads): (A: 5 threads, B: 3 threads), committed
    (tests/data/recorded/docutils_pool_{a,b}.json.xz)."""
    return tuple(_committed(tmp_path_factory, "docutils_pool")[0])


@pytest.fixture(scope="session")
def http_threads_paths(tmp_path_factory) -> tuple:
    """Two real VizTracer traces of a threading HTTP server (a thread per request: 24 and 16
    requests) rendering docutils pages for six client threads, committed
    (tests/data/recorded/http_threads_{a,b}.json.xz): recorded during the session on a busy CI
    machine, the live view's figure of it was 53 % empty once (≤ 50 % on every quiet run)."""
    return tuple(_committed(tmp_path_factory, "http_threads")[0])


@pytest.fixture(scope="session")
def docutils_pool_wide_path(tmp_path_factory) -> pathlib.Path:
    """A real VizTracer trace of docutils in a thread pool of 16 workers (17 threads, 30+
    levels each), committed (tests/data/recorded/docutils_pool_16.json.xz)."""
    return _committed(tmp_path_factory, "docutils_pool_wide")[0][0]


@pytest.fixture(scope="session")
def counters_trace_path(tmp_path_factory) -> pathlib.Path:
    """A real VizTracer trace with counters (`realtraces.record_counters`: VizCounter, log_gc and
    a psutil-style monitor around docutils), committed (tests/data/recorded/docutils_counters.json.xz)."""
    return _committed(tmp_path_factory, "counters")[0][0]


@pytest.fixture(scope="session")
def fresh_http_threads_paths(tmp_path_factory) -> tuple:
    """`http_threads_paths`' program recorded now, once per session, for the tests of the recorder
    itself; skips without viztracer or docutils."""
    return _recorded(tmp_path_factory, "http_threads", needs="docutils")


@pytest.fixture(scope="session")
def fresh_counters_trace_path(tmp_path_factory) -> pathlib.Path:
    """`counters_trace_path`' program recorded now, once per session, for the tests of the recorder
    itself (its --log_gc retries); skips without viztracer or docutils."""
    return _recorded(tmp_path_factory, "counters", needs="docutils")
