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
