"""Submit a TraceVis3D animation to a Flamenco v3 Manager through its REST API (stdlib only).

    python tools/flamenco/submit.py --manager http://flamenco:8080 \
        --blend /shared/anim/growth.blend --frames 1-300 --fps 30 \
        --output-root /shared/render [--chunk-size 30] [--type tracevis3d-animation] [--dry-run]

The .blend is the one ``tracevis3d render-animation … --save growth.blend`` wrote: it needs
no add-on and no trace file.  ``--blend`` and ``--output-root`` are paths as the workers
see them (a shared folder).  ``--type simple-blender-render`` submits to Flamenco's stock
job type instead (it renders the frames the .blend's own output settings name; give
``--format PNG`` and the frame pattern through ``--output-root``).

What it does: ``GET /api/v3/jobs/type/{type}`` (is the job type installed? its etag), then
``POST /api/v3/jobs`` with a SubmittedJob (name, type, type_etag, priority, submitter
platform, settings, metadata); prints the new job's id.  Exit 0 on success, 1 when the
Manager refuses or cannot be reached (one line), 2 for bad arguments.
"""
from __future__ import annotations

import argparse
import json
import os
import platform
import sys
import urllib.error
import urllib.request


def job_body(args, etag: str | None) -> dict:
    """The SubmittedJob of ``args`` (the JSON body of ``POST /api/v3/jobs``)."""
    stem = os.path.splitext(os.path.basename(args.blend))[0]
    if args.type == "simple-blender-render":
        settings = {
            "blendfile": args.blend, "frames": args.frames, "chunk_size": args.chunk_size, "fps": args.fps,
            "format": args.format, "image_file_extension": ".png",
            "render_output_root": args.output_root,
            "add_path_components": 0,
            "render_output_path": f"{args.output_root.rstrip('/')}/{stem}/frame_######",
        }
    else:
        settings = {"blendfile": args.blend, "frames": args.frames, "chunk_size": args.chunk_size,
                    "fps": args.fps, "render_output_root": args.output_root, "make_video": not args.no_video}
    body = {
        "name": args.name or f"TraceVis3D {stem}",
        "type": args.type,
        "priority": args.priority,
        "submitter_platform": {"Linux": "linux", "Darwin": "darwin", "Windows": "windows"}.get(
            platform.system(), platform.system().lower()),
        "settings": settings,
        "metadata": {"project": "TraceVis3D", "user.name": os.environ.get("USER", "")},
    }
    if etag:
        body["type_etag"] = etag
    return body


def strict_json(body: dict, indent=None) -> str:
    """``body`` as strict JSON: a number JSON cannot hold (nan, inf) is an error, never ``NaN``."""
    return json.dumps(body, allow_nan=False, indent=indent)


def _request(url: str, data: dict | None = None, timeout: float = 30.0) -> dict:
    req = urllib.request.Request(url, method="POST" if data is not None else "GET",
                                 data=None if data is None else strict_json(data).encode(),
                                 headers={"Accept": "application/json", "Content-Type": "application/json"})
    with urllib.request.urlopen(req, timeout=timeout) as r:
        return json.loads(r.read().decode() or "{}")


#: what a Flamenco Manager accepts and Blender can render: job priority (the Manager's 0-100),
#: scene frame numbers (Blender's frame range), frames per task, frames per second
PRIORITY_RANGE = (0, 100)
MAX_FRAME = 1_048_574
MAX_CHUNK = 10_000
FPS_RANGE = (0.01, 1000.0)


def _frames(word: str) -> str:
    parts = [p.strip() for p in word.split(",")]
    for p in parts:
        a, _, b = p.partition("-")
        if not a.isdigit() or (b and not b.isdigit()) or (b and int(b) < int(a)):
            raise argparse.ArgumentTypeError(f"frames must look like 1-300 or 1-100,201-300, got {word!r}")
        if int(b or a) > MAX_FRAME:
            raise argparse.ArgumentTypeError(f"frame {int(b or a)} is past Blender's last frame {MAX_FRAME}")
    return ",".join(parts)


def _fps(word: str) -> float:
    try:
        v = float(word)
    except ValueError:
        raise argparse.ArgumentTypeError(f"--fps must be a number, got {word!r}") from None
    if not FPS_RANGE[0] <= v <= FPS_RANGE[1]:  # (also refuses nan and inf: JSON has no such numbers)
        raise argparse.ArgumentTypeError(f"--fps must be a finite number in {FPS_RANGE[0]}-{FPS_RANGE[1]:g}, "
                                         f"got {word!r}")
    return v


def _int_in(lo: int, hi: int, what: str):
    def parse_int(word: str) -> int:
        try:
            v = int(word)
        except ValueError:
            raise argparse.ArgumentTypeError(f"{what} must be an integer, got {word!r}") from None
        if not lo <= v <= hi:
            raise argparse.ArgumentTypeError(f"{what} must be in {lo}-{hi}, got {word}")
        return v
    return parse_int


def parse(argv=None):
    ap = argparse.ArgumentParser(description="Submit a TraceVis3D animation .blend to a Flamenco v3 Manager.")
    ap.add_argument("--manager", default=os.environ.get("FLAMENCO_MANAGER", "http://localhost:8080"),
                    help="the Manager's URL (default: $FLAMENCO_MANAGER or http://localhost:8080)")
    ap.add_argument("--blend", required=True, help="the saved .blend, as the workers see it")
    ap.add_argument("--frames", required=True, type=_frames, help="scene frames, e.g. 1-300")
    ap.add_argument("--fps", type=_fps, default=30.0, help="frames per second of the video (default 30)")
    ap.add_argument("--chunk-size", type=_int_in(1, MAX_CHUNK, "--chunk-size"), default=30,
                    help=f"frames per render task, 1-{MAX_CHUNK} (default 30)")
    ap.add_argument("--output-root", required=True, help="folder for the frames and the video, as workers see it")
    ap.add_argument("--type", default="tracevis3d-animation",
                    help="job type: tracevis3d-animation (ours) or simple-blender-render (stock)")
    ap.add_argument("--format", default="PNG", help="simple-blender-render: image format (default PNG)")
    ap.add_argument("--name", help="job name (default: TraceVis3D <blend name>)")
    ap.add_argument("--priority", type=_int_in(*PRIORITY_RANGE, "--priority"), default=50,
                    help=f"job priority, {PRIORITY_RANGE[0]}-{PRIORITY_RANGE[1]} (default 50)")
    ap.add_argument("--no-video", action="store_true", help="tracevis3d-animation: frames only, no MP4")
    ap.add_argument("--dry-run", action="store_true", help="print the job's JSON, submit nothing")
    return ap.parse_args(argv)


def main(argv=None) -> int:
    args = parse(argv)
    base = args.manager.rstrip("/")
    if args.dry_run:
        print(strict_json(job_body(args, None), indent=2))
        return 0
    try:
        etag = _request(f"{base}/api/v3/jobs/type/{args.type}").get("etag")
    except urllib.error.HTTPError as e:
        sys.stderr.write(f"submit: the Manager at {base} has no job type {args.type!r} (HTTP {e.code}); "
                         "see docs/animation.md to install tools/flamenco/tracevis3d_animation.js\n")
        return 1
    except (urllib.error.URLError, OSError) as e:
        sys.stderr.write(f"submit: cannot reach the Manager at {base}: {getattr(e, 'reason', e)}\n")
        return 1
    try:
        job = _request(f"{base}/api/v3/jobs", job_body(args, etag))
    except urllib.error.HTTPError as e:
        detail = " ".join(e.read().decode(errors="replace").split())[:300]
        sys.stderr.write(f"submit: the Manager refused the job (HTTP {e.code}): {detail}\n")
        return 1
    except (urllib.error.URLError, OSError) as e:
        sys.stderr.write(f"submit: cannot reach the Manager at {base}: {getattr(e, 'reason', e)}\n")
        return 1
    print(job.get("id", json.dumps(job)))
    return 0


if __name__ == "__main__":
    sys.exit(main())
