"""Shared test set-up.

Blender's user folders are isolated BEFORE anything imports bpy (conftest is
imported first), so tests never touch a real user's Blender configuration.
The numba cache goes to a per-run temporary folder unless NUMBA_CACHE_DIR is set.
"""
import os
import pathlib
import tempfile

import pytest

_TMP = pathlib.Path(tempfile.mkdtemp(prefix="tv3d-tests-"))
for _var in ("CONFIG", "SCRIPTS", "EXTENSIONS", "DATAFILES"):
    _d = _TMP / "blender-user" / _var.lower()
    _d.mkdir(parents=True, exist_ok=True)
    os.environ.setdefault(f"BLENDER_USER_{_var}", str(_d))
os.environ.setdefault("NUMBA_CACHE_DIR", str(pathlib.Path.home() / ".cache" / "tracevis3d" / "numba-tests"))

REPO = pathlib.Path(__file__).resolve().parent.parent
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
    """``realtraces.record_<what>`` into a fresh folder, once per caller's scope; skips when
    ``realtraces.<needs>_missing()`` says why it cannot record here, fails on a bad recording."""
    import realtraces

    why = getattr(realtraces, f"{needs}_missing")()
    if why:
        pytest.skip(why)
    out = tmp_path_factory.mktemp(f"realtrace-{what}")
    try:
        return getattr(realtraces, f"record_{what}")(out)
    except RuntimeError as e:
        pytest.fail(f"could not record the {what} trace: {e}", pytrace=False)


@pytest.fixture(scope="session")
def deep_trace_path(tmp_path_factory) -> pathlib.Path:
    """A real VizTracer trace ≥ 100 levels deep (json.tool on a 105-level document), recorded
    once per session (tests/realtraces.py); skips when viztracer is not installed."""
    return _recorded(tmp_path_factory, "deep")


@pytest.fixture(scope="session")
def threads_trace_path(tmp_path_factory) -> pathlib.Path:
    """A real VizTracer trace of examples/threads_pipeline.py: 5 named threads, lock, queue and
    condition waits, file I/O; recorded once per session; skips when viztracer is not installed."""
    return _recorded(tmp_path_factory, "threads")


@pytest.fixture(scope="session")
def json_pair_paths(tmp_path_factory) -> tuple:
    """Two real VizTracer traces of the same program on two inputs (json.tool on a list of
    flat records and on nested records with floats and non-ASCII text), recorded once per
    session: (path A, path B, seconds of the slower recording); skips without viztracer."""
    return _recorded(tmp_path_factory, "json_pair")


@pytest.fixture(scope="session")
def sync_program_path(tmp_path_factory) -> pathlib.Path:
    """tests/sync_program.py (producer → queue → consumer, a Condition, known hand-offs)
    recorded with VizTracer --log_func_args once per session; skips without viztracer."""
    return _recorded(tmp_path_factory, "sync_program")


@pytest.fixture(scope="session")
def threads_args_trace_path(tmp_path_factory) -> pathlib.Path:
    """examples/threads_pipeline.py recorded with --log_func_args (objects of the waits)."""
    return _recorded(tmp_path_factory, "threads_args")


@pytest.fixture(scope="session")
def docutils_pool_paths(tmp_path_factory) -> tuple:
    """Two real VizTracer traces of docutils in a thread pool (a third-party program, 100+
    levels, several threads): (A: 5 threads, B: 3 threads), recorded once per session;
    skips when viztracer or docutils is not installed."""
    return _recorded(tmp_path_factory, "docutils_pool", needs="docutils")


@pytest.fixture(scope="session")
def http_threads_paths(tmp_path_factory) -> tuple:
    """Two real VizTracer traces of a threading HTTP server (a thread per request: 24 and 16
    requests) rendering docutils pages for six client threads, recorded once per session;
    skips when viztracer or docutils is not installed."""
    return _recorded(tmp_path_factory, "http_threads", needs="docutils")


@pytest.fixture(scope="session")
def docutils_pool_wide_path(tmp_path_factory) -> pathlib.Path:
    """A real VizTracer trace of docutils in a thread pool of 16 workers (17 threads, 30+
    levels each), recorded once per session; skips when viztracer or docutils is not installed."""
    return _recorded(tmp_path_factory, "docutils_pool_wide", needs="docutils")
