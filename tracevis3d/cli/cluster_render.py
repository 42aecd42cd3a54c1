"""The command line's side of rendering on Dask workers (`tracevis3d.cluster`): the options,
the session opened before the long work (an unreachable scheduler is one line, exit 1, before
any trace is read), and an animation's frames rendered by the workers and written here."""
from __future__ import annotations

import contextlib
import os
import shutil
import tempfile
import time

from .common import CLIError, progress


def add_cluster_options(r, what: str) -> None:
    """``--scheduler``, ``--workers`` (and ``--chunk`` for frames) of parser ``r``, from
    `tracevis3d.params.cluster.CLUSTER_SCHEMA`."""
    from ..params.cli import add_options
    from ..params.cluster import CLUSTER_SCHEMA, FIGURES_CLUSTER_SCHEMA

    add_options(r, (), [CLUSTER_SCHEMA if what == "frames" else FIGURES_CLUSTER_SCHEMA], required=())


def cluster_spec(args) -> str | None:
    """The scheduler the options name (None: render here); CLIError 2 when they are wrong."""
    scheduler, workers = getattr(args, "scheduler", None), getattr(args, "workers", None)
    if scheduler and workers is not None:
        raise CLIError("--scheduler and --workers: give one (--workers N is --scheduler local:N)", 2)
    if workers is not None:
        if not 1 <= workers <= 256:
            raise CLIError(f"--workers {workers}: 1-256 worker processes", 2)
        scheduler = f"local:{workers}"
    if getattr(args, "chunk", None) is not None and args.chunk < 1:
        raise CLIError(f"--chunk {args.chunk}: a task renders at least one frame", 2)
    if scheduler:
        from ..cluster import parse_scheduler

        try:
            parse_scheduler(scheduler)
        except ValueError as e:
            raise CLIError(str(e), 2) from None
    return scheduler


def open_cluster(spec: str, stack: contextlib.ExitStack, args=None):
    """The `cluster.Session` on ``spec`` with its rendering workers found (closed with
    ``stack``), each peer waited for as ``args`` say (``--connect-timeout``, ...); CLIError 1
    (one line naming the address) when it cannot render."""
    from ..cluster import ClusterError, Deadlines, connected, render_workers

    t = time.perf_counter()
    try:
        session = stack.enter_context(connected(spec, deadlines=Deadlines.of(args or {})))
        good = render_workers(session)
    except ClusterError as e:
        raise CLIError(str(e), 1) from None
    versions = sorted({f"bpy {r['bpy']}" for r in good.values()})
    progress(0.02, f"cluster {session.address}: {len(good)} worker(s) rendering ({', '.join(versions)}), "
                    f"ready in {time.perf_counter() - t:.1f} s")
    return session


def _write_png(path: str, data: bytes) -> None:
    from ..io.atomic import replaced_whole
    from ..io.outputs import verify_png

    with replaced_whole(path, verify=verify_png, suffix=".png", what="cannot write the frame") as tmp:
        with open(tmp, "wb") as f:
            f.write(data)


def render_frames_on_cluster(session, scene, out: str, video: bool, frames: tuple, args) -> str:
    """Frames a..b of the animated ``scene`` rendered by the session's workers (`cluster_frames_steps`,
    the steps the panel's Render Animation runs as a job), polled here to the end.  The output path."""
    from ..jobs import Job

    job = Job("render animation", cluster_frames_steps, session, scene, out, video, frames, args.engine,
              args.resolution, args.samples, args.device, getattr(args, "chunk", None))
    return job.run(interval=0.05)


def _note(job, frac: float, text: str) -> None:
    """A step's progress: the job's (the panel shows it) and a line on stderr (the command line)."""
    job.report(frac, text)
    progress(frac, text)


def cluster_frames_steps(job, session, scene, out: str, video: bool, frames: tuple, engine: str, resolution,
                         samples, device: str, chunk=None):
    """Job steps (`tracevis3d.jobs`): frames a..b of the animated ``scene`` (its output already
    set up for ``out``) rendered by the session's workers from a saved copy of the scene, written
    here as ``frame_NNNN.png`` (each whole: `io.atomic`) into ``out``, or, for a video, into a
    hidden folder beside it and encoded by `blender.render.encode_video`.  The main thread only
    saves the scene, writes the frames that arrived and reports; waiting for the workers is off
    the main thread in short slices, so a panel stays live.  The job's text is the progress:
    frames done / total, frames per second, each worker's share.  Returns the output path."""
    from ..blender.anim_render import pack_fonts, setup_animation_output
    from ..blender.cluster_worker import render_chunk
    from ..blender.render import encode_video, save_blend
    from ..cluster import ClusterError, Progress, TaskRun, frame_chunks, ship_file

    a, b = frames
    folder = tempfile.mkdtemp(prefix=".tv3d-frames-", dir=os.path.dirname(out)) if video else out
    work = tempfile.mkdtemp(prefix="tv3d-cluster-")
    run = None
    try:
        if video:  # the workers render PNG frames: the video is encoded here from them
            setup_animation_output(folder, scene, engine, resolution, samples, device)
        pack_fonts()
        blend = os.path.join(work, "animation.blend")
        if not save_blend(blend, scene):
            raise CLIError(f"could not save the scene for the workers ({blend})", 1)
        try:
            payload, digest = yield job.off_main(ship_file, session, blend)
        except ClusterError as e:  # the workers did not take the scene in time
            raise CLIError(str(e), 1) from None
        chunks = frame_chunks(a, b, len(session.workers), chunk)
        _note(job, 0.6, f"{b - a + 1} frames in {len(chunks)} tasks to {len(session.workers)} worker(s) "
                        f"of {session.address} ({os.path.getsize(blend) / 2**20:.1f} MiB scene "
                        f"{'shared as a path' if session.local else 'sent to the workers'})")
        prog = Progress(b - a + 1, "frames", 0.6, 0.97)
        job.progress = prog  # the panel draws each worker's share from it
        t = time.perf_counter()
        run = yield job.off_main(TaskRun, session, render_chunk, [(payload, digest, c0, c1) for c0, c1 in chunks])
        while run.pending:
            try:
                finished = yield job.off_main(run.wait, 0.25)
            except ClusterError as e:  # no chunk finished within --task-timeout: the rest cancelled below
                raise CLIError(str(e), 1) from None
            for i, res, why in finished:
                if why is not None:
                    raise CLIError(f"frames {chunks[i][0]}-{chunks[i][1]} failed on the cluster {session.address}: "
                                   f"{why}", 1)
                for k, png in zip(res["frames"], res["pngs"]):
                    _write_png(os.path.join(folder, f"frame_{k:04d}.png"), png)
                prog.add(len(res["frames"]), res.get("worker", "?"))
                job.report(prog.lo + (prog.hi - prog.lo) * prog.done / max(prog.total, 1), prog.line())
        import resource

        ru = resource.getrusage(resource.RUSAGE_SELF)
        _note(job, 0.97, f"rendered {prog.done} frames at {prog.rate():.2f} frames/s in "
                         f"{time.perf_counter() - t:.1f} s; per worker: {prog.shares()}; "
                         f"this process: {ru.ru_utime + ru.ru_stime:.1f} s CPU")
        if not video:
            return out
        files = [os.path.join(folder, f"frame_{k:04d}.png") for k in range(a, b + 1)]
        encode_video(files, out, scene.render.fps / scene.render.fps_base, resolution)
        _note(job, 1.0, f"encoded {out}")
        return out
    finally:
        if run is not None and run.pending:  # cancelled or failed: the workers stop what is left
            run.cancel()
        shutil.rmtree(work, ignore_errors=True)
        if video:
            shutil.rmtree(folder, ignore_errors=True)


def _open_session(spec: str, stack: contextlib.ExitStack, options=None):
    from ..cluster import Deadlines, connected, render_workers

    session = stack.enter_context(connected(spec, deadlines=Deadlines.of(options or {})))
    render_workers(session)
    return session


def panel_frames_steps(job, spec: str, scene, out: str, engine: str, samples, device: str, chunk=None,
                       options=None):
    """Job steps of the panel's Render Animation on the scheduler ``spec`` (``local:N`` or an
    address): the session opened off the main thread (a local cluster's processes start there),
    the scene's frames rendered by `cluster_frames_steps` into ``out`` (set up already: a
    folder, or a video by its extension), the session closed off the main thread too.
    ``options``: the panel's cluster options (its deadlines: ``connect_timeout``, ...).  A
    cluster that cannot render fails the job with the one line of `cluster.ClusterError`."""
    from ..blender.render import VIDEO_FORMATS
    from ..cluster import ClusterError

    stack = contextlib.ExitStack()
    job.on_cleanup(stack.close)  # cancelled or failed: the client closed, a local cluster stopped
    job.report(0.02, f"connecting to {spec}")
    t = time.perf_counter()
    try:
        session = yield job.off_main(_open_session, spec, stack, options)
    except ClusterError as e:
        raise ValueError(str(e)) from None  # a user error: reported as its one line
    job.report(0.05, f"cluster {session.address}: {len(session.workers)} worker(s) rendering, ready in "
                     f"{time.perf_counter() - t:.1f} s")
    r = scene.render
    video = os.path.splitext(out)[1].lower() in VIDEO_FORMATS
    try:
        path = yield from cluster_frames_steps(job, session, scene, out, video, (scene.frame_start, scene.frame_end),
                                               engine, (r.resolution_x, r.resolution_y), samples, device, chunk)
    except CLIError as e:
        raise ValueError(str(e)) from None
    yield job.off_main(stack.close)
    return path
