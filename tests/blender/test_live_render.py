"""Headless ``render-live`` of a real trace replayed through the protocol (two real
processes, a real socket): the frames show the icicle growing; plus the Blender view's
append path in-process (instances appended, never rebuilt)."""
import os
import subprocess
import sys
import threading

import numpy as np
import pytest

bpy = pytest.importorskip("bpy")
pytestmark = pytest.mark.blender

import tracevis3d  # noqa: E402
from live_helpers import drain, free_endpoint  # noqa: E402
from tracevis3d.layout.colour import WAIT_RGB  # noqa: E402
from tracevis3d.layout.palette import linear_to_srgb  # noqa: E402

REPO = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
ENV = {**os.environ, "PYTHONPATH": REPO}


def _pixels(path):
    im = bpy.data.images.load(str(path))
    try:
        a = np.array(im.pixels[:], np.float32).reshape(im.size[1], im.size[0], 4)[::-1, :, :3]
    finally:
        bpy.data.images.remove(im)
    return a


def test_render_live_frames_show_the_icicle_growing(realdata, tmp_path):
    ep = free_endpoint()
    src = realdata / "viztracer-examples" / "multithread.json"
    frames = tmp_path / "frames"
    viewer = subprocess.Popen([sys.executable, "-m", "tracevis3d", "render-live", ep, "-o", str(frames),
                               "--seconds", "3", "--fps", "2", "--until-end", "--window", "2600",
                               "--resolution", "320x180"],
                              env=ENV, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    # 2.4 ms of recorded time played over ~2.4 s, started once the viewer subscribed
    player = subprocess.run([sys.executable, "-m", "tracevis3d", "replay", str(src), ep, "--speed", "0.001",
                             "--wait", "60"], env=ENV, capture_output=True, text=True, timeout=120)
    out, err = viewer.communicate(timeout=120)
    assert player.returncode == 0, player.stderr
    assert viewer.returncode == 0, err
    assert "582 calls, 5 threads" in out and "0 bad msgs" in out
    paths = sorted(frames.glob("frame_*.png"))
    assert len(paths) >= 6
    imgs = [_pixels(p) for p in paths]
    drawn = [int((a.min(axis=2) < 0.85).sum()) for a in imgs]
    # it grows (the camera zooms out when a lane appears or lanes get more levels, so not
    # strictly frame by frame)
    assert drawn[-1] >= 0.75 * max(drawn) and drawn[-1] > 2 * min(d for d in drawn if d > 0), drawn
    # the main thread's join() waits are drawn in the reserved wait red
    red = np.asarray(linear_to_srgb(np.asarray(WAIT_RGB)))
    last = imgs[-1]
    assert (np.abs(last - red).max(axis=2) < 0.08).sum() > 50
    # the last frame has colours other than red and grey (function modules)
    sat = last.max(axis=2) - last.min(axis=2)
    assert (sat > 0.25).sum() > 500


def _grow_while_replaying(trace, sess, view, speed=0.0, max_messages=100, wait=0.05):
    """Replay ``trace`` into ``sess`` from a thread (``speed`` as `replay`'s), updating
    ``view`` after every poll (None: only polling), until BYE."""
    from tracevis3d.live import replay

    th = threading.Thread(target=replay, args=(trace, sess.endpoint), kwargs=dict(speed=speed))
    th.start()
    while not any(s.ended for s in sess.sessions.values()):
        sess.poll_once(max_messages=max_messages, wait=wait)
        if view is not None:
            view.update(sess)
    th.join()


def test_live_view_appends_instances_without_rebuilding():
    from tracevis3d.blender.live_view import CHUNK, LiveView
    from tracevis3d.layout.live import LiveParams
    from tracevis3d.live import LiveSession, replay

    want = tracevis3d.synthetic(3000, threads=2, seed=7)
    with LiveSession("tcp://127.0.0.1:*") as sess:
        view = LiveView(LiveParams(window_us=want.span, resolution=(320, 180)))
        th = threading.Thread(target=replay, args=(want, sess.endpoint), kwargs=dict(speed=want.span / 0.5e6))
        th.start()
        objects = None
        while th.is_alive():
            sess.poll_once(max_messages=20, wait=0.02)
            view.update(sess)
            names = {o.name for o in view.coll.objects}
            objects = objects or names
            assert objects <= names  # the same objects, appended into
        th.join()
        drain(sess)
        view.update(sess)
        t = sess.trace
        assert view.n == len(t) == len(want) and len(view.chunks) == 1
        pos = np.zeros(CHUNK * 3, np.float32)
        view.chunks[0].ob.data.attributes["position"].data.foreach_get("vector", pos)
        sc = np.zeros(CHUNK * 3, np.float32)
        view.chunks[0].ob.data.attributes["tv_scale"].data.foreach_get("vector", sc)
        pos, sc = pos.reshape(-1, 3), sc.reshape(-1, 3)
        # instance of each call: box from start to end in the fixed frame (closed calls)
        order = np.concatenate([view.inst[ti][: view.inst_n[ti]] for ti in range(len(view.inst))])
        # calls narrower than a pixel are drawn by clusters alone: no instance (given back,
        # taken again by later calls), so the scene holds fewer instances than calls
        small = order < 0
        assert small.sum() == view.stats["clustered_calls"] == view.n_merged
        assert len(np.unique(order[~small])) == (~small).sum()  # an instance draws one call
        assert view.n_slots < len(t) and view.stats["instances"] == (~small).sum()
        unused = np.setdiff1d(np.arange(CHUNK), order[~small])
        assert (sc[unused] == 0).all()  # the room left and the instances given back are invisible
        shown = ~small
        x0 = pos[order, 0] - sc[order, 0] / 2
        x1 = pos[order, 0] + sc[order, 0] / 2
        st = view.layout.scale_t
        assert shown.sum() > 50  # at 320 px most of the 3000 calls are narrower than a pixel
        assert np.allclose(x0[shown], t.start[shown] * st, atol=1e-4 * want.span * st)
        assert np.allclose(x1[shown], np.maximum(t.end * st, x0 + 1e-5)[shown], atol=1e-4 * want.span * st)
        # every clustered call lies inside a cluster box of its lane (same z, x within)
        if small.any():
            k = view.n_clusters
            cp = np.zeros(CHUNK * 3, np.float32)
            cs = np.zeros(CHUNK * 3, np.float32)
            view.clusters.chunks[0].ob.data.attributes["position"].data.foreach_get("vector", cp)
            view.clusters.chunks[0].ob.data.attributes["tv_scale"].data.foreach_get("vector", cs)
            cp, cs = cp.reshape(-1, 3)[:k], cs.reshape(-1, 3)[:k]
            lane = t.thread.astype(np.int64)
            call_z = view.layout.level_z(lane, np.minimum(t.depth, view.layout.levels_of(lane) - 1))[0]
            for i in np.flatnonzero(small)[:200]:
                inside = ((np.abs(cp[:, 2] - call_z[i]) < 1e-4)
                          & (cp[:, 0] - cs[:, 0] / 2 <= t.start[i] * st + 1e-4)
                          & (t.end[i] * st <= cp[:, 0] + cs[:, 0] / 2 + 1e-4))
                assert inside.any(), i
        view.remove()


def test_live_labels_name_the_widest_shallow_calls():
    from tracevis3d.blender.live_view import LiveView
    from tracevis3d.layout.live import LiveParams
    from tracevis3d.live import LiveSession

    want = tracevis3d.synthetic(2000, threads=2, seed=9)
    with LiveSession("tcp://127.0.0.1:*") as sess:
        view = LiveView(LiveParams(window_us=want.span, resolution=(1920, 1080)))
        _grow_while_replaying(want, sess, view)
        view.update(sess, force_labels=True)
        shown = [o for o in view.labels.pool if not o.hide_render]
        assert 0 < len(shown) <= 40
        px = view.cam_ob.data.ortho_scale / 1920
        assert min(o.data.size for o in shown) >= 14 * px - 1e-9  # names at 14 px or more, as in the icicle
        assert all(o.get("tv3d_kind") == "call" and o.get("call_index", -1) >= 0 for o in shown)
        roots = want.roots()
        widest = want.function_names[want.func[roots[np.argmax(want.duration[roots])]]]
        from tracevis3d.layout.icicle import short_name

        bodies = [o.data.body for o in shown]
        assert any(short_name(widest).endswith(b.lstrip("…")) for b in bodies), (bodies, widest)
        view.remove()


def test_a_short_live_run_ends_in_colour_and_names_read_on_dark_boxes():
    """A run shorter than the re-ranking interval (2 s) used to end all grey: the only
    ranking came at the first update, when no call had area yet.  The modules get their
    colours as soon as calls cover area (and on a forced update), and a name on a dark box
    (a module's deep shade, the red of waits) is written in light text, as in the icicle."""
    from tracevis3d.blender.live_view import LiveView
    from tracevis3d.layout.labels import contrast_text_material
    from tracevis3d.layout.live import LiveParams
    from tracevis3d.live import LiveSession

    want = tracevis3d.synthetic(2000, threads=2, seed=9)
    with LiveSession("tcp://127.0.0.1:*") as sess:
        view = LiveView(LiveParams(window_us=want.span, resolution=(1920, 1080)))
        assert view.layout.p.recolour_seconds >= 1.0  # the default: the run is shorter
        _grow_while_replaying(want, sess, view)
        view.update(sess, force_labels=True)
        colouring = view.layout.colouring
        assert colouring.ranked and colouring.slot_module, "no module has its colour"
        shown = [o for o in view.labels.pool if not o.hide_render]
        assert shown
        for o in shown:
            i = int(o["call_index"])
            f = [int(th.func[i]) for th in sess.threads if i < th.n and th.func[i] >= 0]
            slots = {int(x) for x in view.layout.call_slots(np.array(f), sess.fkind[np.array(f)], sess.fnames,
                                                            sess.ffiles, sess.flines)}
            want_mats = {("TV3D_live_text_light" if m == "TV3D_text_light" else "TV3D_live_text")
                         for m in contrast_text_material(colouring.rgb[sorted(slots)])}
            assert o.data.materials[0].name in want_mats, (o.data.body, o.data.materials[0].name, want_mats)
        view.remove()


def test_live_view_has_a_title_and_a_time_axis():
    """The live scene says what it shows (program, threads, calls, now) and where in time:
    tick labels at a 1-2-5 step inside the window in view, all in one unit, that move on."""
    from tracevis3d.blender.live_view import LiveView
    from tracevis3d.layout.live import LiveParams
    from tracevis3d.live import LiveSession

    want = tracevis3d.synthetic(2000, threads=2, seed=9)
    with LiveSession("tcp://127.0.0.1:*") as sess:
        view = LiveView(LiveParams(window_us=want.span / 2, resolution=(1280, 720)))
        _grow_while_replaying(want, sess, view)
        view.update(sess)
        title = view.title_ob.data.body
        assert title.startswith("live · ") and "2 threads" in title and f"{sess.n_calls:,} calls" in title
        ticks = [o for k, o in view.texts.items() if k.startswith("tick_") and not o.hide_render]
        assert 3 <= len(ticks) <= 12
        units = {o.data.body.split()[-1] for o in ticks}
        assert len(units) == 1 and units <= {"ns", "µs", "ms", "s"}, units
        t0, t1 = view.layout.view_window(max(s.now for s in sess.sessions.values()))
        xs = sorted(o.location.x for o in ticks)
        st = view.layout.scale_t
        assert t0 * st - 1e-6 <= xs[0] and xs[-1] <= t1 * st + 1e-6  # inside the window in view
        gaps = np.diff(xs)
        assert np.allclose(gaps, gaps[0], rtol=1e-6)  # one step
        view.remove()
    # a window the calls fill an eighth of: the step grows until the labels keep a gap
    # ("50 ms100 ms150 ms" was read: a PyTorch profile replayed at a tenth of its pace)
    from tracevis3d.layout.text import text_width

    with LiveSession("tcp://127.0.0.1:*") as sess:
        view = LiveView(LiveParams(window_us=8 * want.span, resolution=(960, 540)))
        _grow_while_replaying(want, sess, view)
        view.update(sess)
        ticks = sorted((o for k, o in view.texts.items() if k.startswith("tick_") and o.data.body),
                       key=lambda o: o.location.x)
        assert len(ticks) >= 2
        for a, b in zip(ticks, ticks[1:]):
            half = 0.5 * (text_width(a.data.body) * a.data.size + text_width(b.data.body) * b.data.size)
            assert b.location.x - a.location.x >= half + 0.5 * a.data.size, (a.data.body, b.data.body)
        view.remove()


def test_live_still_has_a_legend_of_the_ranked_modules_and_the_calls_inside_the_content(tmp_path):
    """The live scene's heads-up display is the shared stage: a title row, a legend column
    whose swatches are the colours of the modules covering the most area, and the calls
    framed into the rest of the image (nothing of them under the legend)."""
    from tracevis3d.blender.live_view import LiveView
    from tracevis3d.blender.render import render_figure
    from tracevis3d.layout.live import LiveParams
    from tracevis3d.layout.live_colour import FIRST_MODULE
    from tracevis3d.live import LiveSession

    for ob in [o for o in bpy.context.scene.objects if o.name in ("Cube", "Light", "Camera")]:
        bpy.data.objects.remove(ob, do_unlink=True)  # the start-up scene (render-live removes it too)
    want = tracevis3d.synthetic(4000, threads=3, seed=5)
    res = (960, 540)
    with LiveSession("tcp://127.0.0.1:*") as sess:
        view = LiveView(LiveParams(window_us=want.span, resolution=res, follow=False, recolour_seconds=0.0))
        _grow_while_replaying(want, sess, view)
        sess.poll_once(max_messages=10 ** 6)
        view.update(sess, force_labels=True)
        rows = view.layout.colouring.legend_rows()
        assert rows[0][2] == "heading" and rows[1][1] == FIRST_MODULE
        # the first legend row is the module with the most area (summed widths of its calls)
        ft_modules = [n.rsplit(".", 2)[0] for n in want.function_names]
        area = {}
        for f, d in zip(want.func, want.duration):
            area[ft_modules[f]] = area.get(ft_modules[f], 0.0) + d
        assert rows[1][0] == max(area, key=area.get), (rows[:3], sorted(area.items(), key=lambda x: -x[1])[:3])
        path = tmp_path / "live.png"
        render_figure(str(path), resolution=res, scene=view.scene)
        img = _pixels(path)
        slots = np.asarray(linear_to_srgb(view.layout.slot_rgb))
        legend_x = int(view._plan.legend_x)
        swatch = np.abs(img - slots[FIRST_MODULE]).max(axis=2) < 0.06
        assert swatch[:, legend_x:].sum() > 20       # its swatch in the legend column, exact
        # its boxes among the calls: shaded (cushion, light), so matched by chromaticity to
        # the nearest slot colour
        sat = img.max(axis=2) - img.min(axis=2)
        chroma = img / np.maximum(img.max(axis=2, keepdims=True), 1e-6)
        slot_chroma = slots / np.maximum(slots.max(axis=1, keepdims=True), 1e-6)
        nearest = np.argmin(((chroma[:, :, None, :] - slot_chroma[None, None]) ** 2).sum(axis=3), axis=2)
        assert ((nearest == FIRST_MODULE) & (sat > 0.15))[:, : legend_x - 10].sum() > 500
        ys, xs = np.nonzero(sat > 0.2)
        in_legend = xs >= legend_x - 2
        # right of the legend's left edge only the swatches (a few small squares)
        assert in_legend.sum() < 0.05 * len(xs)
        dark = img.max(axis=2) < 0.45
        assert dark[: int(0.08 * res[1])].sum() > 100  # the title row
        view.remove()


def test_render_live_writes_a_video(tmp_path):
    """``render-live -o x.mp4``: the frames encoded by Blender's FFmpeg, at the frame rate and
    size asked, and nothing else left behind."""
    trace = tracevis3d.synthetic(3000, threads=2, seed=4)
    src = tmp_path / "t.json"
    from tracevis3d.io.chrome_writer import save_chrome

    save_chrome(trace, str(src))
    ep = free_endpoint()
    out = tmp_path / "live.mp4"
    viewer = subprocess.Popen([sys.executable, "-m", "tracevis3d", "render-live", ep, "-o", str(out),
                               "--seconds", "1.5", "--fps", "4", "--until-end", "--resolution", "320x180"],
                              env=ENV, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    player = subprocess.run([sys.executable, "-m", "tracevis3d", "replay", str(src), ep, "--speed",
                             str(trace.span / 1e6), "--wait", "60"], env=ENV, capture_output=True, text=True,
                            timeout=120)
    stdout, err = viewer.communicate(timeout=180)
    assert player.returncode == 0, player.stderr
    assert viewer.returncode == 0, err
    assert "Video append" not in stdout + err  # Blender's encoder log is filtered
    n = int(stdout.split(" frames in ")[0].split()[-1])
    assert n >= 6 and out.is_file() and sorted(p.name for p in tmp_path.iterdir()) == ["live.mp4", "t.json"]
    clip = bpy.data.movieclips.load(str(out))
    try:
        assert clip.frame_duration == n and tuple(clip.size) == (320, 180) and abs(clip.fps - 4) < 1e-6
    finally:
        bpy.data.movieclips.remove(clip)


def test_live_levels_hold_names_when_the_width_sets_the_scale():
    """A narrow content rectangle (a wide legend, few lanes) makes the time window's width set
    the scale: the levels grow so a full level still holds a name (docutils in a thread pool
    once showed no name at all)."""
    from tracevis3d.layout.budget import level_px
    from tracevis3d.layout.live import NAME_EM, LiveLayout, LiveParams

    lay = LiveLayout(LiveParams(resolution=(1920, 1080)))
    lay.content_rect = (30.0, 30.0, 1400.0, 1050.0)
    assert lay.need_levels(np.array([3, 3]))
    tpx = lay.label_px()
    world_per_px = lay.p.time_length / (1370.0 - NAME_EM * tpx)  # the width fills the rectangle
    level_on_screen = lay.h * np.cos(np.radians(lay.p.elevation)) / world_per_px
    assert level_on_screen >= level_px(tpx)
    assert not lay.need_levels(np.array([3, 3]))  # nothing changed: no relayout
    lay.content_rect = (30.0, 30.0, 700.0, 1050.0)  # narrower still: taller levels, a relayout
    h0 = lay.h
    assert lay.need_levels(np.array([3, 3])) and lay.h > h0


def test_live_view_keeps_a_trail_and_brings_the_run_back_when_it_stops_following():
    """Following now, the calls that ended a window before the view give their boxes back
    (the scene holds what can be seen, not every call); with follow off (the whole run in
    view) the next update gives every call wider than a pixel its box again."""
    from tracevis3d.blender.live_view import LiveView
    from tracevis3d.layout.live import LiveParams
    from tracevis3d.live import LiveSession

    want = tracevis3d.synthetic(20_000, threads=2, seed=7)
    with LiveSession("tcp://127.0.0.1:*") as sess:
        view = LiveView(LiveParams(window_us=want.span / 20, resolution=(320, 180), cluster_seconds=0.0))
        _grow_while_replaying(want, sess, view, speed=want.span / 1e6, max_messages=20, wait=0.02)
        drain(sess)
        # twice: a cluster pass freezes what started before the previous pass's "now", so the
        # trail's cut reaches the run's end a pass after the last events (a loaded machine
        # updates the view fewer times while the replay runs)
        view.update(sess)
        view.update(sess)
        t = sess.trace
        assert len(t) == len(want)
        inst = np.concatenate([view.inst[ti][: view.inst_n[ti]] for ti in range(len(view.inst))])
        cut = view._retired_t
        assert cut > 0.5 * want.span and view.stats["retired_calls"] > 0
        assert (inst[(t.end < cut)] < 0).all()  # nothing that ended before the trail has a box
        in_use = view.n_slots - view.free.shape[0]
        assert in_use == (inst >= 0).sum() < 0.2 * len(t)
        assert view.stats["clustered_calls"] + view.stats["retired_calls"] + in_use == len(t)
        for ti, T in enumerate(sess.threads):  # the label candidates before the cut are forgotten
            c = view.labels.cand[ti][: view.labels.cand_n[ti]]
            assert ((T.endi[c] < 0) | (T.end[c] >= cut)).all()

        view.layout.p.follow = False
        view.update(sess)
        inst = np.concatenate([view.inst[ti][: view.inst_n[ti]] for ti in range(len(view.inst))])
        px = view.cam_ob.data.ortho_scale / max(view.layout.p.resolution)
        wide = (t.end - t.start) * view.layout.scale_t >= 1.01 * px
        assert view.stats["retired_calls"] == 0 and wide.sum() > 0
        assert (inst[wide] >= 0).all()  # the whole run is in view: every wide call has its box
        assert view.stats["clustered_calls"] == (inst < 0).sum()
        view.remove()


def test_live_fold_rules_and_label_size():
    """``fold``: auto draws each lane's runtime-infrastructure levels thin (`lead_of`), none
    draws none thin, ranges ``A:B`` draw those levels thin in every lane; a thin level
    never holds a name (`level_thickness` < 1), and the levels below keep ``max_levels``
    full levels.  ``label_px`` sets the call names' size as in the static views."""
    from tracevis3d.layout.live import SQUEEZED, LiveLayout, LiveParams

    deepest, lead = np.array([30, 30]), np.array([3, 0])
    auto = LiveLayout(LiveParams(resolution=(1920, 1080), max_levels=8))
    auto.need_levels(deepest, lead)
    assert auto.lead_of([0, 1]).tolist() == [3, 0]
    assert auto.level_thickness(0, np.arange(12)).tolist() == [SQUEEZED] * 3 + [1.0] * 8 + [SQUEEZED]
    assert auto.level_thickness(1, np.arange(9)).tolist() == [1.0] * 8 + [SQUEEZED]
    assert auto.levels_of(0) >= 3 + 8  # max_levels below the lead
    none = LiveLayout(LiveParams(resolution=(1920, 1080), max_levels=8, fold="none"))
    none.need_levels(deepest, lead)
    assert none.lead_of([0, 1]).tolist() == [0, 0]
    assert none.level_thickness(0, np.arange(9)).tolist() == [1.0] * 8 + [SQUEEZED]
    ranged = LiveLayout(LiveParams(resolution=(1920, 1080), max_levels=8, fold="1:2,5:5"))
    ranged.need_levels(deepest, lead)
    th = ranged.level_thickness(1, np.arange(12)).tolist()
    assert th == [1.0, SQUEEZED, SQUEEZED, 1.0, 1.0, SQUEEZED, 1.0, 1.0, 1.0, 1.0, 1.0, SQUEEZED], th
    off = ranged.level_offset(1, np.arange(13))  # offsets add up the thicknesses
    assert np.allclose(np.diff(off), ranged.level_thickness(1, np.arange(12)))
    big = LiveLayout(LiveParams(resolution=(1920, 1080), label_px=24.0))
    assert big.label_px() == 24.0 and LiveLayout(LiveParams(resolution=(3840, 2160), label_px=24.0)).label_px() == 48.0


def test_live_hide_and_highlight_as_calls_arrive():
    """``hide``: the calls of hidden functions get no box and their children are drawn a
    level up per hidden ancestor (the brute-force count below); ``highlight``: calls of
    other functions take the pale colour, the legend says so."""
    from tracevis3d.blender.live_view import CHUNK, LiveView
    from tracevis3d.layout.colour import PALE_RGB
    from tracevis3d.layout.live import LiveParams
    from tracevis3d.live import LiveSession

    want = tracevis3d.synthetic(3000, threads=2, seed=7)
    params = LiveParams(window_us=want.span, resolution=(640, 360), fold="none", hide=[r"select_item$"],
                        hide_modules=["api.token"], highlight=["PathRegistry"], cluster_seconds=0.0)
    with LiveSession("tcp://127.0.0.1:*") as sess:
        view = LiveView(params)
        _grow_while_replaying(want, sess, view, speed=want.span / 0.5e6, max_messages=20, wait=0.02)
        drain(sess)
        view.update(sess, force_labels=True)
        t = sess.trace
        names = t.function_names
        from tracevis3d.analysis.filters import function_mask

        hidden_f = function_mask(t, params.hide, params.hide_modules)  # the static views' rule
        assert {names[f].rsplit(".", 1)[-1] for f in np.flatnonzero(hidden_f)} >= {"select_item"}
        hidden = hidden_f[t.func]
        assert hidden.sum() > 50
        drawn = np.zeros(len(t), np.int64)  # brute force: ancestors not hidden
        for i in range(len(t)):
            p = int(t.parent[i])
            while p >= 0:
                drawn[i] += not hidden[p]
                p = int(t.parent[p])
        order = np.concatenate([view.inst[ti][: view.inst_n[ti]] for ti in range(len(view.inst))])
        assert (order[hidden] < 0).all()  # no box for a hidden call
        assert np.array_equal(np.concatenate([view.drawn.of(ti, T)[: T.n] for ti, T in enumerate(sess.threads)]),
                              drawn)
        pos = np.zeros(CHUNK * 3, np.float32)
        col = np.zeros(CHUNK * 4, np.float32)
        view.chunks[0].ob.data.attributes["position"].data.foreach_get("vector", pos)
        view.chunks[0].ob.data.attributes["tv_color"].data.foreach_get("color", col)
        pos, col = pos.reshape(-1, 3), col.reshape(-1, 4)
        shown = np.flatnonzero(order >= 0)
        assert shown.size > 50
        lane = np.concatenate([view.layout.lanes.lane_of(ti, np.arange(T.n)) for ti, T in enumerate(sess.threads)])
        z = view.layout.level_z(lane, np.minimum(drawn, view.layout.levels_of(lane) - 1))[0]
        assert np.allclose(pos[order[shown], 2], z[shown], atol=1e-4)
        lit = np.array(["PathRegistry" in n for n in names])[t.func]
        pale = shown[~lit[shown]]
        kept = shown[lit[shown]]
        assert pale.size and kept.size
        is_pale = np.isclose(col[order, :3], np.asarray(PALE_RGB, np.float32), atol=1e-3).all(axis=1)
        assert is_pale[pale].all() and not is_pale[kept].any()
        rows = view.layout.legend_rows()
        assert any(r[0].startswith("pale: not matching PathRegistry") for r in rows), rows
        view.remove()


def test_a_forced_update_clusters_even_when_it_recoloured():
    """A figure rendered after one update (the whole run at once: a render, `render-live`'s
    frames) is clustered though that update also coloured and laid out every box: a run
    whose every update was busy kept one instance per call, and a replay of 2·10^6 calls
    rendered blank."""
    from tracevis3d.blender.live_view import LiveView
    from tracevis3d.layout.live import LiveParams
    from tracevis3d.live import LiveSession

    want = tracevis3d.synthetic(20_000, threads=2, seed=7)
    with LiveSession("tcp://127.0.0.1:*") as sess:
        view = LiveView(LiveParams(window_us=want.span, resolution=(640, 360)))
        _grow_while_replaying(want, sess, None, max_messages=200, wait=0.02)
        drain(sess)
        st = view.update(sess, force_labels=True)
        assert st.get("recolours", 0) + st.get("relayouts", 0) > 0  # the update was busy
        assert st.get("clustered_calls", 0) > 0 and st["instances"] < len(want)
        view.remove()


def test_live_lanes_fit_the_frame_or_thin_down():
    """`LiveLayout.fit_full_levels` never claims a fit that is not one (shallow lanes, none
    deeper than its full levels, once passed unchecked); many lanes thin their gaps
    (`lane_gap`) and squeezed levels before the full levels go."""
    from tracevis3d.layout.budget import level_px
    from tracevis3d.layout.live import LANE_GAP, MIN_LANE_GAP, SQUEEZE_FLOOR, LiveLayout, LiveParams, lane_gap

    lay = LiveLayout(LiveParams(resolution=(1920, 1080)))
    room = 1080 / level_px(lay.label_px())  # more than the content rectangle holds
    for n, levels in ((60, 4), (30, 3), (12, 16), (3, 16), (200, 2)):
        k, s = lay.fit_full_levels(np.full(n, levels))
        own = np.full(n, float(levels))
        need = (np.minimum(own, k) + s * np.maximum(own - k, 0) + lane_gap(n)).sum()
        assert need <= room or (k, s) == (1, SQUEEZE_FLOOR), (n, levels, k, s, need, room)
    assert lane_gap(2) == LANE_GAP and lane_gap(4096) == MIN_LANE_GAP
    assert len({lane_gap(n) for n in range(1, 5000)}) <= 3  # at most two relayouts for the gap


def test_live_threads_title_and_labels_options():
    """``threads`` keeps the threads named or numbered (as they arrive: the others get no
    box, lane or name); ``title`` replaces the automatic title; ``max_labels`` and
    ``show_labels`` bound the call names."""
    from tracevis3d.blender.live_view import LiveView
    from tracevis3d.layout.live import LiveParams
    from tracevis3d.live import LiveSession

    want = tracevis3d.synthetic(6000, threads=3, seed=11)
    keep = want.thread_names[2]
    for params, most in ((dict(threads=[0, keep], title="My run", max_labels=2), 2),
                         (dict(show_labels=False), 0)):
        with LiveSession("tcp://127.0.0.1:*") as sess:
            view = LiveView(LiveParams(window_us=want.span, resolution=(960, 540), **params))
            _grow_while_replaying(want, sess, view, max_messages=200, wait=0.02)
            drain(sess)
            view.update(sess, force_labels=True)
            names = [ob for ob in view.labels.pool if not ob.hide_render]
            assert len(names) <= most and (most == 0 or names), (params, len(names))
            if "threads" in params:
                shown = {ti for ti, T in enumerate(sess.threads) if view.inst_n[ti] if ti < len(view.inst_n)}
                assert shown == {0, 2}, shown
                assert view.layout.lanes.n_lanes == 2
                assert view.title_ob.data.body == "My run"
                lane_names = {ob.data.body for ob in view.lane_labels[:2]}
                assert lane_names == {sess.threads[0].name, keep}, lane_names
            view.remove()
