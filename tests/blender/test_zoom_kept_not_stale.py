"""A kept native copy of a large trace is never stale (issue 78, case 5).

A trace past `refine.FINGERPRINT_WHOLE` is fingerprinted by pieces (`refine.content_fingerprint`).
Before, the pieces and the size were all it hashed: an edit outside them that kept the size
left the fingerprint, so rebuilding and saving only touched the kept copy of the OLD trace, and
a fresh Blender's zoom read it.  Now a large file's fingerprint covers its status too (mtime,
ctime, inode: `refine.file_identity`), and a kept copy is used again only when it holds the
trace in memory.  The threshold and piece size are lowered here (the logic unchanged) so that a
500 kB Chrome trace is "large"; the edit also puts the file's old modification time back (as
``cp -p`` or an archive would), which only its status-change time then tells."""
import json
import os
import re
import subprocess
import sys
import textwrap

import numpy as np
import pytest

bpy = pytest.importorskip("bpy")
pytestmark = pytest.mark.blender

import tracevis3d  # noqa: E402
from tracevis3d.blender.zoom_inputs import TRACE_COPY_KEY  # noqa: E402
from tracevis3d.layout import refine  # noqa: E402

WHOLE, CHUNK = 64 << 10, 1 << 10


def _outside_the_pieces(text: bytes) -> tuple:
    """(start, end) of a function name in the file's middle that no piece of the fingerprint reads."""
    size = len(text)
    pieces = [((size - CHUNK) * k // (refine.FINGERPRINT_CHUNKS - 1), CHUNK) for k in range(refine.FINGERPRINT_CHUNKS)]
    for m in re.finditer(rb'"name": "(api\.[a-zA-Z_.]+)"', text[size // 3:]):
        a, b = size // 3 + m.start(1), size // 3 + m.end(1)
        if all(b <= p or a >= p + n for p, n in pieces):
            return a, b
    raise AssertionError("no name outside the pieces")


def _same(a, b) -> bool:
    return (len(a) == len(b) and np.array_equal(a.start, b.start) and np.array_equal(a.end, b.end)
            and [a.function_names[f] for f in a.func] == [b.function_names[f] for f in b.func])


@pytest.mark.timeout(900)
def test_an_edit_outside_the_pieces_writes_a_new_copy_that_a_fresh_blender_zooms(tmp_path, monkeypatch):
    from tracevis3d.blender.cone_tasks import cone_build_job
    from tracevis3d.blender.hygiene import remove_startup_defaults

    monkeypatch.setattr(refine, "FINGERPRINT_WHOLE", WHOLE)
    monkeypatch.setattr(refine, "FINGERPRINT_CHUNK", CHUNK)
    cache = tmp_path / "cache"
    monkeypatch.setenv("TRACEVIS3D_ZOOM_CACHE", str(cache))
    path = tmp_path / "run.json"
    tracevis3d.save(tracevis3d.synthetic(4000, threads=2, seed=5), path, format="chrome")
    assert path.stat().st_size > 4 * WHOLE
    blend = str(tmp_path / "cone.blend")

    def build_and_save():
        bpy.ops.wm.read_factory_settings(use_empty=True)
        remove_startup_defaults(bpy.context.scene)
        trace = tracevis3d.load(path)
        cone_build_job(trace, {}, scene=bpy.context.scene, trace_path=str(path)).run(interval=0.02)
        bpy.ops.wm.save_as_mainfile(filepath=blend)
        rec = json.loads(bpy.context.scene[TRACE_COPY_KEY])
        return trace, rec, cache / refine.trace_copy_name(rec["fingerprint"])

    old, rec_old, copy_old = build_and_save()
    assert _same(tracevis3d.load(copy_old), old)
    # an edit outside every piece: one function name renamed, the size and the modification time kept
    st = os.stat(path)
    text = bytearray(path.read_bytes())
    a, b = _outside_the_pieces(bytes(text))
    text[b - 1:b] = b"Q"  # a name no function has
    path.write_bytes(bytes(text))
    os.utime(path, ns=(st.st_atime_ns, st.st_mtime_ns))
    assert os.stat(path).st_size == st.st_size and os.stat(path).st_mtime_ns == st.st_mtime_ns
    new, rec_new, copy_new = build_and_save()
    assert not _same(new, old)  # the edit changed the trace
    assert rec_new["fingerprint"] != rec_old["fingerprint"], "an edit outside the pieces must change the fingerprint"
    assert _same(tracevis3d.load(copy_new), new), "the kept copy holds the trace as it is now"
    # a fresh Blender opens the .blend and zooms from the kept copy of the NEW trace
    call = int(np.flatnonzero(np.array([new.function_names[f] for f in new.func]) ==
                              bytes(text[a:b]).decode())[0])
    script = textwrap.dedent(f"""
        import json, bpy
        from tracevis3d.layout import refine
        refine.FINGERPRINT_WHOLE, refine.FINGERPRINT_CHUNK = {WHOLE}, {CHUNK}  # as in the building session
        bpy.ops.wm.open_mainfile(filepath={blend!r})
        from tracevis3d.blender import view
        out = view.zoom_to(bpy.context.scene, call={call})
        print("RESULT", json.dumps([out["call"], out["trace_file"]]))
    """)
    env = dict(os.environ, TRACEVIS3D_ZOOM_CACHE=str(cache), PYTHONPATH=os.pathsep.join(
        p for p in [str(os.path.dirname(os.path.dirname(tracevis3d.__file__))), os.environ.get("PYTHONPATH", "")] if p))
    r = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, timeout=600, env=env)
    lines = [ln for ln in r.stdout.splitlines() if ln.startswith("RESULT ")]
    assert r.returncode == 0 and lines, r.stderr[-3000:]
    assert json.loads(lines[-1][7:]) == [call, str(copy_new)]


@pytest.mark.timeout(300)
def test_a_kept_copy_that_does_not_hold_the_trace_is_written_again(tmp_path, monkeypatch):
    """A copy under the trace's fingerprint that holds another trace (a damaged or foreign file)
    is written again, not only touched."""
    from tracevis3d.blender.zoom_inputs import _save_trace_copy

    monkeypatch.setenv("TRACEVIS3D_ZOOM_CACHE", str(tmp_path / "cache"))
    path = tmp_path / "run.json"
    trace = tracevis3d.synthetic(500, seed=1)
    tracevis3d.save(trace, path, format="chrome")
    trace = tracevis3d.load(path)
    fp = refine.content_fingerprint(path)
    copy = tmp_path / "cache" / refine.trace_copy_name(fp)
    copy.parent.mkdir()
    tracevis3d.save(tracevis3d.synthetic(500, seed=2), copy)  # another trace under this name
    assert _save_trace_copy(trace, str(path), fp) == str(copy)
    assert _same(tracevis3d.load(copy), trace)
