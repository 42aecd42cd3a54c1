"""render-batch on a real Dask cluster (a ``dask scheduler`` and two ``dask worker``
processes on loopback, started and killed here): one bad trace among good ones is recorded
in the manifest with why, and the good figures are made."""
import json
import subprocess
import sys

import pytest

pytest.importorskip("bpy")
pytest.importorskip("distributed")
pytestmark = pytest.mark.blender

from dask_processes import DaskProcesses, worker_env  # noqa: E402


def _trace(path, names):
    from tracevis3d.io.chrome_writer import save_chrome
    from tracevis3d.model import Trace

    n = len(names)
    tr = Trace.from_arrays(list(range(n)), [100.0 * k for k in range(n)], [100.0 * k + 80 for k in range(n)],
                           [-1] * n, function_names=names)
    save_chrome(tr, path)
    return path


@pytest.mark.timeout(400)
def test_one_bad_trace_is_in_the_manifest_and_the_others_are_made(tmp_path):
    good_a = _trace(tmp_path / "run_a.json", ["main (/src/a.py:1)", "work (/src/a.py:9)"])
    good_b = _trace(tmp_path / "run_b.json", ["main (/src/b.py:1)", "other (/src/b.py:7)", "end (/src/b.py:12)"])
    bad = tmp_path / "broken.json"
    bad.write_text('{"traceEvents": [', encoding="utf-8")
    (tmp_path / "dask").mkdir()
    procs = DaskProcesses(tmp_path / "dask", 2)
    try:
        procs.start()
        out = tmp_path / "figures"
        p = subprocess.run([sys.executable, "-m", "tracevis3d", "render-batch", str(good_a), str(bad), str(good_b),
                            "--view", "icicle", "-o", str(out), "--scheduler", procs.address,
                            "--options", "--resolution 128x72 --samples 1"],
                           capture_output=True, text=True, env=worker_env(), timeout=300)
    finally:
        procs.stop()
    assert p.returncode == 1, p.stderr[-3000:]
    err = [ln for ln in p.stderr.splitlines() if "error" in ln]
    assert len(err) == 1 and "broken" in err[0], p.stderr[-2000:]
    m = json.loads((out / "manifest.json").read_text(encoding="utf-8"))
    assert [e["figure"] for e in m["made"]] == ["run_a", "run_b"]
    assert [e["figure"] for e in m["failed"]] == ["broken"]
    assert "broken.json" in m["failed"][0]["error"] and m["failed"][0]["code"] == 1
    for e in m["made"]:
        data = (out / e["image"]).read_bytes()
        assert data[:8] == b"\x89PNG\r\n\x1a\n" and e["worker"].startswith("tcp://127.0.0.1:")
    assert sorted(f.name for f in out.iterdir()) == ["manifest.json", "run_a.png", "run_b.png"]
