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
Manager refuses, cannot be reached, does not answer within ``--timeout`` seconds (each request
whole, however slowly its bytes come) or answers something that is not Flamenco's answer (a
status other than 200, a content type other than JSON, more than 1 MiB, JSON that is not the
object Flamenco sends: one line naming the Manager, the request and what was wrong), 2 for bad
arguments (``--frames`` as ASCII digits in closed ranges, at most `MAX_FRAMES` frames in all).
"""
from __future__ import annotations

import argparse
import json
import os
import platform
import re
import sys
import urllib.error
import urllib.parse
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


#: the most bytes read of a Manager's answer (Flamenco's are a few kB) and of an error's body
MAX_ANSWER = 1 << 20
MAX_ERROR_BODY = 64 << 10


class ManagerError(Exception):
    """A Manager that cannot be reached, refuses, or answers badly: the one line to print."""


def _fetch(req, timeout: float) -> tuple:
    """(status, content type, body bytes) of ``req`` (urllib; an HTTP error status raises
    `urllib.error.HTTPError`), the body read up to `MAX_ANSWER` + 1 bytes."""
    with urllib.request.urlopen(req, timeout=timeout) as r:
        return r.status, r.headers.get("Content-Type", ""), r.read(MAX_ANSWER + 1)


def _within(seconds: float, fn, *args):
    """``fn(*args)`` in a thread of its own, waited for at most ``seconds`` (a socket's timeout
    bounds each read, not a whole answer dripped a byte at a time); TimeoutError when late."""
    import threading

    box = {}

    def run():
        try:
            box["value"] = fn(*args)
        except BaseException as e:  # handed to the caller
            box["error"] = e

    t = threading.Thread(target=run, daemon=True)
    t.start()
    t.join(seconds)
    if t.is_alive():
        raise TimeoutError()
    if "error" in box:
        raise box["error"]
    return box["value"]


def _request(base: str, path: str, data: dict | None = None, timeout: float = 30.0) -> dict:
    """The JSON object the Manager at ``base`` answers ``path`` with (POST ``data`` when given),
    within ``timeout`` seconds in all; `ManagerError` (one line naming the Manager and the
    request) for anything else.  An HTTP error status raises `urllib.error.HTTPError` (the caller
    says what it means)."""
    import http.client

    method = "POST" if data is not None else "GET"
    what = f"{method} {path}"
    req = urllib.request.Request(base + path, method=method, data=None if data is None else strict_json(data).encode(),
                                 headers={"Accept": "application/json", "Content-Type": "application/json"})
    try:
        status, ctype, body = _within(timeout, _fetch, req, timeout)
    except TimeoutError:
        raise ManagerError(f"the Manager at {base} did not answer {what} within {timeout:g} s (--timeout)") from None
    except urllib.error.HTTPError:
        raise
    except (urllib.error.URLError, OSError) as e:
        raise ManagerError(f"cannot reach the Manager at {base} ({what}): "
                           f"{' '.join(str(getattr(e, 'reason', e)).split())}") from None
    except (http.client.HTTPException, ValueError) as e:  # not HTTP at all (a garbled status line, ...)
        raise ManagerError(f"the Manager at {base} answered {what} with something that is not HTTP "
                           f"({type(e).__name__}: {' '.join(str(e).split())[:120]})") from None
    bad = f"the Manager at {base} answered {what} with"
    if status != 200:
        raise ManagerError(f"{bad} HTTP {status}, not 200")
    if ctype.split(";")[0].strip().lower() != "application/json":
        raise ManagerError(f"{bad} content type {ctype[:60] or '(none)'!r}, not application/json (is it a "
                           f"Flamenco Manager?)")
    if len(body) > MAX_ANSWER:
        raise ManagerError(f"{bad} more than {MAX_ANSWER:,} bytes")
    try:
        doc = json.loads(body.decode("utf-8"))
    except (UnicodeDecodeError, ValueError, RecursionError) as e:
        raise ManagerError(f"{bad} text that is not JSON ({' '.join(str(e).split())[:120]})") from None
    if not isinstance(doc, dict):
        raise ManagerError(f"{bad} a JSON {type(doc).__name__}, not the object Flamenco sends")
    return doc


def _text_field(doc: dict, key: str, where: str, required: bool) -> str | None:
    """``doc[key]`` when it is a short one-line string; `ManagerError` (``where``: the Manager and
    the request) else."""
    v = doc.get(key)
    if v is None and not required:
        return None
    if not isinstance(v, str) or not v or len(v) > 200 or not v.isprintable():
        shown = json.dumps(v)[:60] if v is not None else "none"
        raise ManagerError(f"{where} without the {key} Flamenco gives (a short text): {key} is {shown}")
    return v


#: what a Flamenco Manager accepts and Blender can render: job priority (the Manager's 0-100),
#: scene frame numbers (Blender's frame range), frames per task, frames per second
PRIORITY_RANGE = (0, 100)
MAX_FRAME = 1_048_574
MAX_CHUNK = 10_000
FPS_RANGE = (0.01, 1000.0)
#: frames of one job in all (Blender's whole frame range), and ranges in its --frames
MAX_FRAMES = MAX_FRAME + 1
MAX_RANGES = 1000
#: seconds for each request to the Manager, whole
TIMEOUT_RANGE = (1.0, 3600.0)
_RANGE = re.compile(r"([0-9]{1,12})(?:-([0-9]{1,12}))?")


def _frames(word: str) -> str:
    """``--frames``: frames and closed ranges of ASCII digits (``1-300``, ``1-100,201-300``), each
    ascending, none past Blender's last frame, none twice, at most `MAX_FRAMES` in all; written
    back as plain ASCII.  (``str.isdigit`` takes ``١٢``, ``²`` and ``1-`` was taken open.)"""
    parts = [p.strip() for p in word.split(",")]
    if len(parts) > MAX_RANGES:
        raise argparse.ArgumentTypeError(f"frames: at most {MAX_RANGES} ranges, got {len(parts)}")
    ranges, out = [], []
    for p in parts:
        m = _RANGE.fullmatch(p)
        if m is None:
            raise argparse.ArgumentTypeError(f"frames must look like 1-300 or 1-100,201-300 (ASCII digits, closed "
                                             f"ranges), got {word[:80]!r}")
        a = int(m.group(1))
        b = int(m.group(2)) if m.group(2) is not None else a
        if b < a:
            raise argparse.ArgumentTypeError(f"frames {a}-{b}: a range goes up")
        if b > MAX_FRAME:
            raise argparse.ArgumentTypeError(f"frame {b} is past Blender's last frame {MAX_FRAME}")
        ranges.append((a, b))
        out.append(f"{a}-{b}" if m.group(2) is not None else f"{a}")
    ranges.sort()
    for (a0, b0), (a1, b1) in zip(ranges, ranges[1:]):
        if a1 <= b0:
            raise argparse.ArgumentTypeError(f"frames {a0}-{b0} and {a1}-{b1} overlap: each frame once")
    total = sum(b - a + 1 for a, b in ranges)
    if total > MAX_FRAMES:
        raise argparse.ArgumentTypeError(f"frames: {total:,} in all, at most {MAX_FRAMES:,}")
    return ",".join(out)


def _timeout(word: str) -> float:
    try:
        v = float(word)
    except ValueError:
        raise argparse.ArgumentTypeError(f"--timeout must be a number of seconds, got {word!r}") from None
    if not TIMEOUT_RANGE[0] <= v <= TIMEOUT_RANGE[1]:
        raise argparse.ArgumentTypeError(f"--timeout must be {TIMEOUT_RANGE[0]:g}-{TIMEOUT_RANGE[1]:g} s, got {word!r}")
    return v


def _manager(word: str) -> str:
    u = urllib.parse.urlsplit(word.strip())
    if u.scheme not in ("http", "https") or not u.hostname:
        raise argparse.ArgumentTypeError(f"--manager must be an http:// or https:// URL, got {word[:80]!r}")
    try:
        u.port  # noqa: B018 - raises on a port that is not a number 0-65535
    except ValueError:
        raise argparse.ArgumentTypeError(f"--manager {word[:80]!r}: the port is not a number 0-65535") from None
    return word.strip()


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
    ap.add_argument("--manager", type=_manager, default=os.environ.get("FLAMENCO_MANAGER", "http://localhost:8080"),
                    help="the Manager's URL (default: $FLAMENCO_MANAGER or http://localhost:8080)")
    ap.add_argument("--timeout", type=_timeout, default=30.0,
                    help=f"seconds the Manager has to answer each request, whole, {TIMEOUT_RANGE[0]:g}-"
                         f"{TIMEOUT_RANGE[1]:g} (default 30)")
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


def _error_body(e: urllib.error.HTTPError) -> str:
    """An HTTP error's body as one short line (at most `MAX_ERROR_BODY` bytes read)."""
    try:
        return " ".join(e.read(MAX_ERROR_BODY).decode(errors="replace").split())[:300]
    except (OSError, ValueError):
        return ""


def main(argv=None) -> int:
    args = parse(argv)
    base = args.manager.rstrip("/")
    if args.dry_run:
        print(strict_json(job_body(args, None), indent=2))
        return 0
    type_path = f"/api/v3/jobs/type/{urllib.parse.quote(args.type, safe='')}"
    try:
        kind = _request(base, type_path, timeout=args.timeout)
        etag = _text_field(kind, "etag", f"the Manager at {base} answered GET {type_path}", required=False)
    except urllib.error.HTTPError as e:
        sys.stderr.write(f"submit: the Manager at {base} has no job type {args.type!r} (HTTP {e.code}); "
                         "see docs/animation.md to install tools/flamenco/tracevis3d_animation.js\n")
        return 1
    except ManagerError as e:
        sys.stderr.write(f"submit: {e}\n")
        return 1
    try:
        job = _request(base, "/api/v3/jobs", job_body(args, etag), timeout=args.timeout)
        job_id = _text_field(job, "id", f"the Manager at {base} answered POST /api/v3/jobs", required=True)
    except urllib.error.HTTPError as e:
        sys.stderr.write(f"submit: the Manager at {base} refused the job (HTTP {e.code}): {_error_body(e)}\n")
        return 1
    except ManagerError as e:
        sys.stderr.write(f"submit: {e}\n")
        return 1
    print(job_id)
    return 0


if __name__ == "__main__":
    sys.exit(main())
