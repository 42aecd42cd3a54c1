"""A cluster whose workers cannot import bpy (issue 72): a real ``dask scheduler`` and two real
``dask worker`` processes on loopback, each with a ``--preload`` module that makes ``import bpy``
fail there (tests/support/no_bpy_preload.py).  ``render-animation`` and ``render-batch`` end
with one line naming the scheduler's address and why, exit 1, within 30 s, before any frame or
figure is attempted."""
import subprocess
import sys

import pytest

pytest.importorskip("distributed")
pytestmark = pytest.mark.blender

from dask_processes import REPO, DaskProcesses, worker_env  # noqa: E402

PRELOAD = REPO / "tests" / "support" / "no_bpy_preload.py"


@pytest.fixture(scope="module")
def no_bpy_cluster(tmp_path_factory):
    folder = tmp_path_factory.mktemp("dask-no-bpy")
    procs = DaskProcesses(folder, 2, worker_args=["--preload", str(PRELOAD)])
    try:
        yield procs.start()
    finally:
        procs.stop()


@pytest.fixture(scope="module")
def trace(tmp_path_factory):
    from tracevis3d.io.chrome_writer import save_chrome
    from tracevis3d.model import Trace

    path = tmp_path_factory.mktemp("trace") / "run.json"
    save_chrome(Trace.from_arrays([0, 1], [0.0, 10.0], [100.0, 50.0], [-1, 0], function_names=["main", "work"]), path)
    return path


def _one_error_line(argv, tmp_path) -> str:
    p = subprocess.run([sys.executable, "-m", "tracevis3d", *map(str, argv)], capture_output=True, text=True,
                       env=worker_env(), timeout=30, cwd=str(tmp_path))
    lines = [ln for ln in p.stderr.splitlines() if ln.strip()]
    assert p.returncode == 1 and len(lines) == 1, (p.returncode, p.stderr[-3000:])
    return lines[0]


@pytest.mark.timeout(200)
def test_render_animation_on_workers_without_bpy_is_one_line_naming_the_address(no_bpy_cluster, trace, tmp_path):
    line = _one_error_line(["render-animation", trace, "-o", tmp_path / "frames", "--seconds", "1", "--fps", "2",
                            "--resolution", "64x36", "--scheduler", no_bpy_cluster.address], tmp_path)
    assert no_bpy_cluster.address in line and "no bpy module" in line and "2 worker(s)" in line, line
    assert not (tmp_path / "frames").exists()


@pytest.mark.timeout(200)
def test_render_batch_on_workers_without_bpy_is_one_line_naming_the_address(no_bpy_cluster, trace, tmp_path):
    line = _one_error_line(["render-batch", trace, "--view", "icicle", "-o", tmp_path / "figures",
                            "--scheduler", no_bpy_cluster.address], tmp_path)
    assert no_bpy_cluster.address in line and "no bpy module" in line, line
