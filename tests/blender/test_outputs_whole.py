"""Every output written whole or not at all (issue 68, item 1): `io.atomic.replaced_whole` with
the completeness checks of `io.outputs`, used by the trace savers and by Blender's figure, scene,
video and frame writers.  A full disk is a real file-size limit (RLIMIT_FSIZE) on a real
process; the old file must stay byte for byte, the command exits 1 with one line naming the
path and the cause, and no temporary is left."""
from __future__ import annotations

import os
import resource
import struct
import subprocess
import sys
import zlib

import pytest

import tracevis3d
from tracevis3d.io import outputs
from tracevis3d.io.atomic import OutputError, replaced_whole

REPO = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))


def _png(w=4, h=3) -> bytes:
    def chunk(kind, data):
        return struct.pack(">I", len(data)) + kind + data + struct.pack(">I", zlib.crc32(kind + data))

    raw = b"".join(b"\0" + b"\x80" * (3 * w) for _ in range(h))
    return (b"\x89PNG\r\n\x1a\n" + chunk(b"IHDR", struct.pack(">IIBBBBB", w, h, 8, 2, 0, 0, 0))
            + chunk(b"IDAT", zlib.compress(raw)) + chunk(b"IEND", b""))


def _mp4() -> bytes:
    def box(kind, payload):
        return struct.pack(">I", 8 + len(payload)) + kind + payload

    return box(b"ftyp", b"isom\0\0\0\0") + box(b"mdat", b"\0" * 100) + box(b"moov", b"\0" * 40)


def _blend() -> bytes:
    return b"BLENDER17-01v0500" + b"\0" * 200 + b"DNA1" + b"\0" * 100 + b"ENDB" + b"\0" * 28


@pytest.mark.parametrize("ext, good", [(".png", _png()), (".mp4", _mp4()), (".blend", _blend()),
                                       (".jpg", b"\xff\xd8" + b"\0" * 50 + b"\xff\xd9")])
def test_each_check_passes_a_whole_file_and_refuses_every_cut(tmp_path, ext, good):
    p = tmp_path / ("f" + ext)
    p.write_bytes(good)
    outputs.verify_output(str(p))
    for cut in range(0, len(good) - 1, max(1, len(good) // 40)):
        p.write_bytes(good[:cut])
        with pytest.raises(outputs.IncompleteOutput):
            outputs.verify_output(str(p))


def test_a_failed_write_keeps_the_old_file_and_leaves_no_temporary(tmp_path):
    p = tmp_path / "fig.png"
    p.write_bytes(_png())
    with pytest.raises(OutputError, match=r"fig.png: cannot save: the file written is incomplete \(the PNG has no end"):
        with replaced_whole(p, verify=outputs.verify_png) as tmp:
            with open(tmp, "wb") as f:
                f.write(_png()[:-7])
    assert p.read_bytes() == _png() and os.listdir(tmp_path) == ["fig.png"]


def test_links_are_followed_and_other_files_refused(tmp_path):
    real = tmp_path / "real.png"
    real.write_bytes(b"old")
    link = tmp_path / "link.png"
    link.symlink_to("real.png")
    with replaced_whole(link, verify=outputs.verify_png) as tmp:
        with open(tmp, "wb") as f:
            f.write(_png())
    assert link.is_symlink() and real.read_bytes() == _png()
    dangling = tmp_path / "dangling.png"
    dangling.symlink_to("sub_missing.png")
    with replaced_whole(dangling) as tmp:
        with open(tmp, "wb") as f:
            f.write(b"x")
    assert dangling.is_symlink() and (tmp_path / "sub_missing.png").read_bytes() == b"x"
    loop = tmp_path / "loop.png"
    loop.symlink_to("loop.png")
    with pytest.raises(OutputError, match="loop of symbolic links"):
        with replaced_whole(loop):
            pass
    fifo = tmp_path / "fifo.png"
    os.mkfifo(fifo)
    with pytest.raises(OutputError, match=r"fifo.png: cannot save: it is a FIFO \(named pipe\), not a regular file"):
        with replaced_whole(fifo):
            pass
    with pytest.raises(OutputError, match="/dev/null: cannot save: it is a character device"):
        tracevis3d.save(tracevis3d.synthetic(20, seed=1), "/dev/null")
    assert os.path.exists("/dev/null") and not os.path.isfile("/dev/null")
    assert sorted(x.name for x in tmp_path.iterdir()) == ["dangling.png", "fifo.png", "link.png", "loop.png",
                                                         "real.png", "sub_missing.png"]


_SAVE_UNDER_LIMIT = r"""
import os, resource, sys
import tracevis3d
t = tracevis3d.synthetic(20000, threads=2, seed=1)
path, fmt = sys.argv[1], sys.argv[2]
resource.setrlimit(resource.RLIMIT_FSIZE, (30000, resource.RLIM_INFINITY))
tracevis3d.save(t, path, format=fmt)
"""


@pytest.mark.parametrize("fmt, name", [("native", "t.tv3d.npz"), ("compact", "t.tv3c"), ("chrome", "t.json")])
def test_save_onto_a_full_disk_keeps_the_old_file(tmp_path, fmt, name):
    """A file-size limit (what a full disk or a quota does to a writer): the save fails with one line
    naming the path and the cause, no 'Exception ignored' finaliser noise, the old file intact."""
    p = tmp_path / name
    tracevis3d.save(tracevis3d.synthetic(300, seed=2), p, format=fmt)
    before = p.read_bytes()
    r = subprocess.run([sys.executable, "-c", _SAVE_UNDER_LIMIT, str(p), fmt], capture_output=True, text=True,
                       cwd=REPO, timeout=300)
    assert r.returncode != 0
    assert f"{p}: cannot save: file too large" in r.stderr
    assert "Exception ignored" not in r.stderr and "ZipFile.__del__" not in r.stderr
    assert p.read_bytes() == before and sorted(x.name for x in tmp_path.iterdir()) == [name]


def _limited(limit: int):
    def set_limit():
        resource.setrlimit(resource.RLIMIT_FSIZE, (limit, resource.RLIM_INFINITY))
    return set_limit


def _cli(args, limit=None, timeout=600):
    return subprocess.run([sys.executable, "-m", "tracevis3d", *map(str, args)], capture_output=True, text=True,
                          cwd=REPO, timeout=timeout, preexec_fn=_limited(limit) if limit else None)


@pytest.mark.blender
def test_render_and_save_onto_a_full_disk_keep_the_old_files(tmp_path):
    """`render-icicle -o fig.png --save scene.blend` and `render-animation -o anim.mp4` under a
    file-size limit: exit 1, one line naming the path and the cause, the figure, the scene and the
    video of the run before unchanged, no temporary left."""
    trace = tmp_path / "t.tv3d.npz"
    tracevis3d.save(tracevis3d.synthetic(3000, threads=2, seed=4), trace)
    fig, blend = tmp_path / "fig.png", tmp_path / "scene.blend"
    r = _cli(["render-icicle", trace, "-o", fig, "--resolution", "480x270", "--save", blend])
    assert r.returncode == 0, r.stderr
    outputs.verify_png(str(fig))
    outputs.verify_blend(str(blend))
    old_fig, old_blend = fig.read_bytes(), blend.read_bytes()
    # a limit the PNG passes but the .blend does not: the figure is replaced, the scene is not
    limit = max(len(old_fig) * 2, 200_000)
    assert limit < len(old_blend)
    r = _cli(["render-icicle", trace, "-o", fig, "--resolution", "480x270", "--save", blend], limit=limit)
    assert r.returncode == 1
    lines = [ln for ln in r.stderr.splitlines() if ln.strip()]
    assert lines and lines[-1].startswith("tracevis3d: error: ") and str(blend) in lines[-1], r.stderr
    assert "file too large" in lines[-1] or "incomplete" in lines[-1], lines[-1]
    assert blend.read_bytes() == old_blend
    outputs.verify_png(str(fig))
    r = _cli(["render-icicle", trace, "-o", fig, "--resolution", "480x270"], limit=len(old_fig) // 2)
    assert r.returncode == 1 and str(fig) in r.stderr.splitlines()[-1]
    assert fig.read_bytes() == old_fig or outputs.verify_png(str(fig)) is None
    video = tmp_path / "anim.mp4"
    args = ["render-animation", trace, "-o", video, "--resolution", "320x180", "--seconds", "1", "--fps", "4"]
    r = _cli(args)
    assert r.returncode == 0, r.stderr
    outputs.verify_video(str(video))
    old_video = video.read_bytes()
    r = _cli(args, limit=len(old_video) // 2)
    assert r.returncode == 1 and str(video) in r.stderr.splitlines()[-1], r.stderr
    assert video.read_bytes() == old_video
    assert sorted(x.name for x in tmp_path.iterdir()) == ["anim.mp4", "fig.png", "scene.blend", "t.tv3d.npz"]


@pytest.mark.blender
def test_a_resolution_larger_than_the_memory_is_refused_before_rendering(tmp_path):
    """Issue 68, item 4: ``--resolution 16384x16384`` took 5 GB before failing; what a render
    needs is checked first, one line, exit 1, nothing allocated."""
    from tracevis3d.blender.render import RENDER_BYTES_PER_PIXEL, check_render_memory

    check_render_memory(1920, 1080, available=8 << 30)
    with pytest.raises(ValueError, match=r"resolution 16384x16384 is 268 megapixels, more than the 67 .* cycles"):
        check_render_memory(16384, 16384, available=64 << 30)
    with pytest.raises(ValueError, match=r"resolution 8192x8192 needs about 6.0 GiB to render .* choose a smaller"):
        check_render_memory(8192, 8192, available=4 << 30)
    check_render_memory(16384, 16384, available=64 << 30, engine="cycles")
    assert 8192 * 8192 * RENDER_BYTES_PER_PIXEL > 0.8 * (4 << 30)


def test_the_cli_refuses_a_resolution_it_cannot_render_before_loading(tmp_path):
    """The check runs before the trace loads or is laid out (the layout of 16384x16384 alone took
    a minute): the trace named does not even exist."""
    side = 16384
    r = _cli(["render-icicle", tmp_path / "missing.json", "-o", tmp_path / "f.png", "--resolution", f"{side}x{side}"],
             timeout=300)
    assert r.returncode == 1 and "megapixels" in r.stderr.splitlines()[-1] and "missing" not in r.stderr, r.stderr
