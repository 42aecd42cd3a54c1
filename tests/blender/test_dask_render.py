"""render-animation on a real Dask cluster (issue 72): a ``dask scheduler`` and two
``dask worker`` processes on loopback, started and killed by these tests, no mocks.

The trace: ``python -m pydoc -w email.message`` recorded under VizTracer (sub-pixel clusters
included); 12 frames of its growth at 160x90, Workbench.  The cluster's frames must equal the
frames this process renders alone, pixel for pixel: with two workers, with a worker killed
while it renders, and the scene shipped as bytes (the workers are separate processes that are
told no path)."""
import os
import pathlib
import subprocess
import sys

import numpy as np
import pytest

bpy = pytest.importorskip("bpy")
pytest.importorskip("distributed")
pytestmark = pytest.mark.blender

from dask_processes import DaskProcesses, free_port, worker_env  # noqa: E402
from realtraces import record_viztracer, viztracer_missing  # noqa: E402

COMMON = ["--seconds", "1", "--fps", "12", "--resolution", "160x90", "--samples", "1"]
NAMES = [f"frame_{k:04d}.png" for k in range(1, 13)]


@pytest.fixture(scope="module")
def pydoc_trace(tmp_path_factory) -> pathlib.Path:
    why = viztracer_missing()
    if why:
        pytest.skip(why)
    work = tmp_path_factory.mktemp("pydoc")
    return record_viztracer(work / "pydoc.json", ["-m", "pydoc", "-w", "email.message"], work)


@pytest.fixture(scope="module")
def local_frames(pydoc_trace, tmp_path_factory) -> pathlib.Path:
    out = tmp_path_factory.mktemp("local") / "frames"
    p = subprocess.run([sys.executable, "-m", "tracevis3d", "render-animation", str(pydoc_trace), "-o", str(out),
                        *COMMON], capture_output=True, text=True, env=worker_env(), timeout=300)
    assert p.returncode == 0, p.stderr[-3000:]
    return out


@pytest.fixture()
def cluster(tmp_path):
    procs = DaskProcesses(tmp_path / "dask", 2)
    (tmp_path / "dask").mkdir()
    try:
        yield procs.start()
    finally:
        procs.stop()


def _png(path) -> np.ndarray:
    from tracevis3d.blender.figure_report import load_image

    return load_image(str(path), channels=4)


def _cli(*argv) -> subprocess.Popen:
    return subprocess.Popen([sys.executable, "-m", "tracevis3d", *map(str, argv)], stdout=subprocess.PIPE,
                            stderr=subprocess.PIPE, text=True, env=worker_env())


def _same_frames(a: pathlib.Path, b: pathlib.Path) -> None:
    assert sorted(os.listdir(b)) == NAMES, sorted(os.listdir(b))
    for name in NAMES:
        assert np.array_equal(_png(a / name), _png(b / name)), name


@pytest.mark.timeout(400)
def test_two_workers_render_the_frames_of_one_process(pydoc_trace, local_frames, cluster, tmp_path):
    out = tmp_path / "cluster"
    p = _cli("render-animation", pydoc_trace, "-o", out, *COMMON, "--scheduler", cluster.address, "--chunk", "2")
    _, err = p.communicate(timeout=300)
    assert p.returncode == 0, err[-3000:]
    _same_frames(local_frames, out)
    assert "sent to the workers" in err  # the scene went as bytes, not as a path
    last = [ln for ln in err.splitlines() if "rendered 12 frames at" in ln]
    assert last and last[0].count("tcp://127.0.0.1:") == 2, err[-2000:]  # both workers had a share


@pytest.mark.timeout(500)
def test_a_worker_killed_mid_render_loses_no_frame(pydoc_trace, local_frames, cluster, tmp_path):
    out = tmp_path / "cluster"
    p = _cli("render-animation", pydoc_trace, "-o", out, *COMMON, "--scheduler", cluster.address, "--chunk", "1")
    lines = []
    for line in p.stderr:  # the first frame back: both workers are rendering the next ones
        lines.append(line)
        if "frames 1/12" in line:
            cluster.kill_worker(0)
            break
    rest, tail = p.communicate(timeout=400)
    err = "".join(lines) + tail
    assert p.returncode == 0, err[-3000:]
    assert any("frames 1/12" in ln for ln in lines), err[-3000:]
    _same_frames(local_frames, out)
    assert not [f for f in os.listdir(out) if f.startswith(".")]  # no staging file left behind


@pytest.mark.timeout(60)
def test_an_unreachable_scheduler_is_one_line_and_exit_1(pydoc_trace, tmp_path):
    address = f"tcp://127.0.0.1:{free_port()}"  # nothing listens there
    p = subprocess.run([sys.executable, "-m", "tracevis3d", "render-animation", str(pydoc_trace), "-o",
                        str(tmp_path / "f"), *COMMON, "--scheduler", address], capture_output=True, text=True,
                       env=worker_env(), timeout=30)
    err = [ln for ln in p.stderr.splitlines() if ln.strip()]
    assert p.returncode == 1 and len(err) == 1 and address in err[0], p.stderr
