"""The command line: renders a real trace headless, fails cleanly on bad input.

In-process calls of `cli.main` (real bpy) plus subprocess runs of
``python -m tracevis3d`` for the exit codes and the one-line errors.
"""
import os
import pathlib
import subprocess
import sys

import numpy as np
import pytest

from tracevis3d.cli import main

REPO = pathlib.Path(__file__).resolve().parent.parent


def _run(*args, timeout=300):
    env = dict(os.environ)
    env["PYTHONPATH"] = str(REPO) + os.pathsep + env.get("PYTHONPATH", "")
    return subprocess.run([sys.executable, "-m", "tracevis3d", *map(str, args)], cwd=REPO,
                          capture_output=True, text=True, timeout=timeout, env=env)


def _errors(stderr: str) -> list:
    """stderr lines that are not progress, warnings or Blender's own chatter."""
    return [ln for ln in stderr.splitlines()
            if ln.startswith("tracevis3d: error") or ln.startswith("tracevis3d: internal")
            or ln.startswith("Traceback")]


def _png(path):
    bpy = pytest.importorskip("bpy")
    img = bpy.data.images.load(str(path), check_existing=False)
    try:
        w, h = img.size
        a = np.empty(w * h * 4, np.float32)
        img.pixels.foreach_get(a)
        return a.reshape(h, w, 4)[::-1]
    finally:
        bpy.data.images.remove(img)


@pytest.mark.blender
def test_renders_a_real_trace(realdata, tmp_path, capsys):
    pytest.importorskip("bpy")
    src = realdata / "viztracer-examples" / "multithread.json"
    out = tmp_path / "mt.png"
    blend = tmp_path / "mt.blend"
    rc = main(["render-icicle", str(src), "-o", str(out), "--resolution", "480x270",
               "--save", str(blend), "--color-by", "module"])
    cap = capsys.readouterr()
    assert rc == 0, cap.err
    assert cap.out.strip().splitlines()[-1] == str(out)  # (Blender itself prints "Info: Saved ...")
    assert "[100%]" in cap.err and "rendering 480x270" in cap.err  # progress on stderr
    img = _png(out)
    assert img.shape == (270, 480, 4)
    drawn = np.abs(img[..., :3] - 1).max(-1) > 0.06
    assert 0.05 < drawn.mean() < 0.8  # a figure, not an empty or a flooded frame
    # five threads → five lanes of boxes: coloured pixels in several separate bands
    rows = (drawn & (img[..., :3].std(-1) > 0.08)).any(1)
    bands = np.count_nonzero(np.diff(rows.astype(int)) == 1)
    assert bands >= 3
    # the saved .blend remembers how it was built
    import json

    import bpy

    bpy.ops.wm.open_mainfile(filepath=str(blend))
    info = json.loads(bpy.context.scene["tracevis3d_build"])
    assert info["trace_path"].endswith("multithread.json")
    assert info["params"]["color_by"] == "module" and info["params"]["resolution"] == [480, 270]
    assert bpy.data.collections["TraceVis3D"].objects


@pytest.mark.blender
def test_thread_and_window_selection(realdata, tmp_path, capsys):
    pytest.importorskip("bpy")
    src = realdata / "viztracer-examples" / "multithread.json"
    out = tmp_path / "one.png"
    rc = main(["render-icicle", str(src), "-o", str(out), "--resolution", "320x180",
               "--thread", "0", "--window", "0:1ms", "--orthographic", "--no-legend"])
    cap = capsys.readouterr()
    assert rc == 0, cap.err
    import bpy

    info = __import__("json").loads(bpy.context.scene["tracevis3d_build"])
    assert info["params"]["threads"] == [0] and info["params"]["time_window"] == [0.0, 1000.0]
    assert _png(out).shape == (180, 320, 4)
    rc = main(["render-icicle", str(src), "-o", str(out), "--thread", "no-such-thread"])
    err = capsys.readouterr().err
    assert rc == 2 and len(_errors(err)) == 1 and "no-such-thread" in err


@pytest.mark.parametrize("content", [b"this is not a trace {{{", b"\x1f\x8b\x08garbage", b"",
                                     b'{"traceEvents": 5}', b"\x00\x01\x02\x03" * 100])
def test_corrupt_file_fails_cleanly(tmp_path, content):
    bad = tmp_path / "bad.json"
    bad.write_bytes(content)
    r = _run("render-icicle", bad, "-o", tmp_path / "x.png")
    assert r.returncode != 0
    errs = _errors(r.stderr)
    assert len(errs) == 1 and errs[0].startswith("tracevis3d: error: "), r.stderr
    assert "Traceback" not in r.stderr
    assert not (tmp_path / "x.png").exists()


@pytest.mark.parametrize("args, needle", [
    (["render-icicle", "{trace}", "-o", "{out}", "--resolution", "10x"], "resolution"),
    (["render-icicle", "{trace}", "-o", "{out}", "--window", "5:1"], "T0 < T1"),
    (["render-icicle", "{trace}", "-o", "{out}", "--engine", "povray"], "engine"),
    (["render-icicle", "{trace}"], "-o/--output"),
    (["render-icicle", "/no/such/file.json", "-o", "{out}"], "not found"),
    (["render-icicle", "{trace}", "-o", "/no/such/dir/x.png"], "does not exist"),
    (["render-icicle", "{trace}", "-o", "{out}", "--save", "x.txt"], ".blend"),
    (["frobnicate"], "invalid choice"),
    ([], "missing command"),
])
def test_bad_arguments_one_line(tmp_path, args, needle):
    trace = tmp_path / "t.json"
    trace.write_text('[{"ph": "X", "name": "f", "ts": 0, "dur": 5, "pid": 1, "tid": 1}]')
    argv = [a.format(trace=trace, out=tmp_path / "o.png") for a in args]
    r = _run(*argv)
    assert r.returncode == (1 if needle == "not found" else 2), r.stderr
    errs = _errors(r.stderr)
    assert len(errs) == 1 and needle in errs[0], r.stderr
    assert "Traceback" not in r.stderr
    # apart from progress lines ("[ 0%] ..."), the error is the only output
    assert [ln for ln in r.stderr.splitlines() if not ln.startswith("[")] == errs


def test_help_exits_zero():
    r = _run("render-icicle", "--help")
    assert r.returncode == 0 and "--resolution" in r.stdout
