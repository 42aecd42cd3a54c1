"""The job API (`tracevis3d.jobs`, `tracevis3d.blender.tasks`) on real bpy, headless.

The same jobs the extension's operators drive from a modal timer are polled here from a
loop, as ``blender --background`` scripts do (timers never fire there): a 1M-call trace
imported and built with the longest single step measured; a cancel in the middle leaves
no objects, data blocks or properties; a second job while one runs is refused (`Busy`) or
queued, never run beside it.
"""
import threading
import time

import pytest

import tracevis3d
from tracevis3d.jobs import Busy, Job, JobQueue

bpy = pytest.importorskip("bpy")
pytestmark = pytest.mark.blender

from tracevis3d.blender import session, tasks  # noqa: E402

ID_COLLECTIONS = ("objects", "meshes", "pointclouds", "materials", "node_groups", "curves", "cameras",
                  "lights", "worlds", "collections", "images")


def snapshot() -> dict:
    """Every data block's name per kind, the scene's custom properties and camera."""
    scene = bpy.context.scene
    out = {k: sorted(i.name for i in getattr(bpy.data, k)) for k in ID_COLLECTIONS}
    out["scene_props"] = sorted(scene.keys())
    out["camera"] = scene.camera.name if scene.camera else None
    return out


def drive(job, interval=0.005):
    """Poll ``job`` to its end like a script; (longest gap between two loop turns, s)."""
    last, worst = time.perf_counter(), 0.0
    while job.poll(timeout=interval):
        now = time.perf_counter()
        worst, last = max(worst, now - last), now
    return worst


@pytest.fixture(scope="module")
def trace_1m(tmp_path_factory):
    """The 1M-call synthetic trace, saved natively (loaded through the import job)."""
    path = tmp_path_factory.mktemp("jobs") / "synthetic_1m.tv3d.npz"
    tracevis3d.save(tracevis3d.synthetic(1_000_000, threads=4, seed=1), path)
    return path


@pytest.fixture
def empty_scene():
    bpy.ops.wm.read_factory_settings(use_empty=True)
    session.clear_cache()
    yield bpy.context.scene
    tasks.QUEUE.cancel_all()
    session.clear_cache()


@pytest.mark.slow
def test_import_and_build_1m_calls_through_jobs(empty_scene, trace_1m):
    job = tasks.import_job(trace_1m, scene=empty_scene, params={})
    texts = []
    job.listeners.append(lambda j: texts.append(j.text))
    gap = drive(job)
    assert job.state == "done", job.error
    assert len(job.result["trace"]) == 1_000_000
    built = job.result["build"]
    coll = bpy.data.collections["TraceVis3D"]
    assert built["collection"] == "TraceVis3D" and len(coll.objects) > 5
    assert "TraceVis3D (building)" not in bpy.data.collections
    assert empty_scene.camera is not None and empty_scene.camera.name == "TV3D_camera"
    assert empty_scene.get("tracevis3d_build")
    assert any(t.startswith("loaded 1,000,000 calls") for t in texts), texts
    assert any(t.startswith("writing labels") or t.endswith("labels") for t in texts), texts
    print(f"\n1M import+build: longest main-thread step {job.longest_step * 1000:.0f} ms "
          f"({job.longest_text!r}); longest loop gap {gap * 1000:.0f} ms")
    assert job.longest_step < 1.0, (job.longest_step, job.longest_text)  # chunked: far below this


def test_rebuild_replaces_the_scene_and_keeps_names(empty_scene, tmp_path):
    path = tmp_path / "small.tv3d.npz"
    tracevis3d.save(tracevis3d.synthetic(2000, threads=2, seed=3), path)
    for color_by in ("function", "depth"):
        job = tasks.import_job(path, scene=empty_scene, params={"color_by": color_by})
        drive(job)
        assert job.state == "done", job.error
    names = sorted(o.name for o in bpy.data.collections["TraceVis3D"].objects)
    assert "TV3D_camera" in names and not [n for n in names if "." in n], names
    assert not [g.name for g in bpy.data.node_groups if "." in g.name]
    assert [c.name for c in bpy.data.collections] == ["TraceVis3D"]


def _cancel_when(job, predicate):
    """Poll until ``predicate(job)``, then cancel; poll until the job has ended."""
    while job.poll(timeout=0.005):
        if predicate(job):
            job.cancel()
            break
    drive(job)


@pytest.mark.parametrize("moment", ["writing boxes", "layout in the worker"])
def test_cancel_in_the_middle_leaves_nothing(empty_scene, tmp_path, moment):
    path = tmp_path / "mid.tv3d.npz"
    tracevis3d.save(tracevis3d.synthetic(50_000, threads=2, seed=2), path)
    before = snapshot()
    job = tasks.import_job(path, scene=empty_scene, params={"cluster_px": 0.0})
    if moment == "writing boxes":
        _cancel_when(job, lambda j: j.text.startswith("writing clusters") or j.text.startswith("writing axis"))
    else:
        # ("preparing kernels (…); layout of …" when the layout's kernels are not cached yet)
        _cancel_when(job, lambda j: "layout of" in j.text and j._work is not None)
    assert job.state == "cancelled"
    assert snapshot() == before
    # the next job runs normally after a cancel
    job = tasks.import_job(path, scene=empty_scene, params={})
    drive(job)
    assert job.state == "done", job.error


def test_a_failed_build_leaves_nothing(empty_scene, tmp_path):
    path = tmp_path / "t.tv3d.npz"
    tracevis3d.save(tracevis3d.synthetic(1000, threads=1, seed=4), path)
    before = snapshot()
    job = tasks.import_job(path, scene=empty_scene, params={"threads": ["no-such-thread"]})
    drive(job)
    assert job.state == "failed" and "no-such-thread" in str(job.error)
    assert snapshot() == before


def _slow(seconds, release):
    release.wait(seconds)
    return "slow done"


def _steps_slow(job, release):
    job.report(0.1, "working")
    out = yield job.off_main(_slow, 30, release)
    return out


def test_a_second_job_is_refused_or_queued_never_run_beside():
    queue = JobQueue()
    release = threading.Event()
    first = queue.submit(Job("first", _steps_slow, release))
    queue.poll()
    assert first.state == "running" and first.text == "working"
    second = Job("second", _steps_slow, release)
    with pytest.raises(Busy, match=r"'first' is still running \(working\).*cancel"):
        queue.submit(second)
    queue.submit(second, queue=True)
    for _ in range(5):
        queue.poll(timeout=0.01)
    assert first.state == "running" and second.state == "pending"  # waits, not beside
    release.set()
    while queue.poll(timeout=0.01):
        assert not (first.state == "running" and second.state == "running")
    assert first.result == second.result == "slow done"
    assert first.state == second.state == "done"


def test_cancel_while_a_worker_runs_waits_for_it_before_the_next_job():
    queue = JobQueue()
    release = threading.Event()
    first = queue.submit(Job("first", _steps_slow, release))
    queue.poll()
    first.cancel()
    assert first.state == "cancelling" and queue.busy()  # its worker still runs
    with pytest.raises(Busy):
        queue.submit(Job("second", _steps_slow, release))
    release.set()
    while queue.poll(timeout=0.01):
        pass
    assert first.state == "cancelled" and first.result is None and not queue.busy()


def test_errors_in_a_worker_fail_the_job_with_the_message():
    def boom():
        raise ValueError("trace.json: bad thing at byte 12")

    def steps(job):
        yield job.off_main(boom)

    job = Job("x", steps)
    with pytest.raises(ValueError, match="byte 12"):
        job.run(interval=0.01)
    assert job.state == "failed"


def test_compare_job_loads_both_runs_and_compares(tmp_path):
    a, b = tmp_path / "a.tv3d.npz", tmp_path / "b.tv3d.npz"
    run = tracevis3d.synthetic(3000, threads=1, seed=5)
    tracevis3d.save(run, a)
    tracevis3d.save(tracevis3d.perturb(run, seed=6), b)
    session.clear_cache()
    job = tasks.compare_job(a, b, tau=0.3)
    texts = []
    job.listeners.append(lambda j: texts.append(j.text))
    cmp = job.run(interval=0.01)
    direct = tracevis3d.compare(tracevis3d.load(a), tracevis3d.load(b), tau=0.3)
    assert cmp.n_pairs_total == direct.n_pairs_total > 0
    assert any("comparing 3,000 with" in t for t in texts), texts  # (after "preparing kernels" when cold)
    assert texts[-1].startswith("compared: ") and "call pairs above τ=0.3" in texts[-1]
    # merged stacks (the panel's and the command line's "Merge stacks"): the same as comparing
    # `tracevis3d.merge` of both, kept apart from the timed comparison of the same files
    job = tasks.compare_job(a, b, tau=0.3, merge=True)
    texts.clear()
    job.listeners.append(lambda j: texts.append(j.text))
    merged = job.run(interval=0.01)
    direct = tracevis3d.compare(tracevis3d.merge(tracevis3d.load(a)), tracevis3d.merge(tracevis3d.load(b)), tau=0.3)
    assert merged.n_pairs_total == direct.n_pairs_total > 0 and merged.a.meta.get("merged")
    assert merged is not cmp and any(t.startswith("merged stacks: ") for t in texts), texts
    assert tasks.compare_job(a, b, tau=0.3, merge=True).run(interval=0.01) is merged  # kept
    timed = tasks.compare_job(a, b, tau=0.3).run(interval=0.01)  # never the merged one for the same files
    assert not timed.a.meta.get("merged") and timed.n_pairs_total == cmp.n_pairs_total
    bad = tmp_path / "bad.json"
    bad.write_text("not json")
    job = tasks.compare_job(a, bad)
    with pytest.raises(tracevis3d.TraceFormatError, match="bad.json: not a trace in any format"):
        job.run(interval=0.01)
