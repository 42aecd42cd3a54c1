"""The cone tree's zoom reads the trace its build kept (issue 70), as the icicle's does
(`blender.zoom_inputs`): in the building session the trace in memory; once the scene is saved,
a native copy of a text trace in the user cache, which a fresh Blender that opens the .blend maps
instead of parsing the JSON again.  The zoom's result names the file it read (``trace_file``).

The proof that the fresh Blender did not parse the JSON: its text is made unreadable while its
size and modification time stay those the build recorded, and the zoom still draws the subtree;
once the file really changes (a new modification time), the zoom reads the file itself."""
import json
import os
import subprocess
import sys
import textwrap

import numpy as np
import pytest

bpy = pytest.importorskip("bpy")
pytestmark = pytest.mark.blender

import tracevis3d  # noqa: E402
from tracevis3d.blender import view  # noqa: E402
from tracevis3d.blender.zoom_inputs import TRACE_COPY_KEY  # noqa: E402
from tracevis3d.layout import refine  # noqa: E402


def _bushy_call(trace) -> int:
    """The call with the largest subtree of at most half the trace's calls (a cone of its own)."""
    size = trace.end_index.astype(np.int64) - np.arange(len(trace))
    ok = np.flatnonzero((size >= 20) & (2 * size <= len(trace)))
    return int(ok[np.argsort(-size[ok], kind="stable")[0]])


@pytest.mark.timeout(900)
def test_a_cone_zoom_reads_the_kept_trace_not_the_json(tmp_path, monkeypatch):
    from tracevis3d.blender.cone_tasks import cone_build_job
    from tracevis3d.blender.hygiene import remove_startup_defaults

    cache = tmp_path / "cache"
    monkeypatch.setenv("TRACEVIS3D_ZOOM_CACHE", str(cache))
    path = tmp_path / "run.json"
    tracevis3d.save(tracevis3d.synthetic(4000, threads=2, seed=5), path, format="chrome")
    bpy.ops.wm.read_factory_settings(use_empty=True)
    remove_startup_defaults(bpy.context.scene)
    scene = bpy.context.scene
    trace = tracevis3d.load(path)
    call = _bushy_call(trace)
    cone_build_job(trace, {}, scene=scene, trace_path=str(path)).run(interval=0.02)
    # the building session: the trace in memory, nothing read again, nothing written yet
    out = view.zoom_to(scene, call=call)
    assert out["call"] == call and out["calls_drawn"] > 0 and out["trace_file"] is None, out["trace_file"]
    view.zoom_to(scene, call=None)
    assert TRACE_COPY_KEY not in scene and (not cache.exists() or not any(cache.iterdir()))
    # saving the scene keeps the JSON as a native file, recorded in the scene
    blend = str(tmp_path / "cone.blend")
    bpy.ops.wm.save_as_mainfile(filepath=blend)
    rec = json.loads(scene[TRACE_COPY_KEY])
    st = os.stat(path)
    assert rec["file"] == [st.st_mtime_ns, st.st_size]
    copy = cache / refine.trace_copy_name(rec["fingerprint"])
    assert len(tracevis3d.load(copy)) == len(trace)
    # the JSON's text unreadable, its size and time unchanged: a fresh Blender zooms from the copy
    text = path.read_bytes()
    kept_text = tmp_path / "run.json.orig"
    kept_text.write_bytes(text)
    path.write_bytes(b" " * len(text))
    os.utime(path, ns=(st.st_atime_ns, st.st_mtime_ns))
    script = textwrap.dedent(f"""
        import json, os, shutil, bpy
        bpy.ops.wm.open_mainfile(filepath={blend!r})
        from tracevis3d.blender import view
        scene = bpy.context.scene
        first = view.zoom_to(scene, call={call})
        view.zoom_to(scene, call=None)
        shutil.copyfile({str(kept_text)!r}, {str(path)!r})  # the file really changes (a new time): read itself
        os.utime({str(path)!r}, ns=({st.st_atime_ns}, {st.st_mtime_ns + 10**9}))
        again = view.zoom_to(scene, call={call})
        print("RESULT", json.dumps({{"first": [first["call"], first["calls_drawn"], first["trace_file"]],
                                    "again": [again["call"], again["calls_drawn"], again["trace_file"]]}}))
    """)
    env = dict(os.environ, PYTHONPATH=os.pathsep.join(p for p in [str(os.path.dirname(os.path.dirname(
        tracevis3d.__file__))), os.environ.get("PYTHONPATH", "")] if p))
    r = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, timeout=600, env=env)
    lines = [ln for ln in r.stdout.splitlines() if ln.startswith("RESULT ")]
    assert r.returncode == 0 and lines, r.stderr[-3000:]
    res = json.loads(lines[-1][7:])
    assert res["first"] == [call, out["calls_drawn"], str(copy)], res
    assert res["again"] == [call, out["calls_drawn"], str(path)], res
