"""Peer figure: a screenshot of speedscope (https://www.speedscope.app) showing a trace.

speedscope is the flame-chart viewer most users open Chrome Trace Event JSON in
today; the benchmark puts its figure beside TraceVis3D's.  This wrapper runs
``bench/peer/speedscope_shot.mjs`` (speedscope and puppeteer-core pinned in
``bench/peer/package.json`` + ``package-lock.json``) in Debian's Chromium,
headless, with nothing downloaded at run time but the npm packages (``npm ci``,
once, into ``bench/peer/node_modules``).

    from bench.peer_speedscope import screenshot
    info = screenshot("trace.json", "/tmp/peer.png")   # -> dict, see screenshot()

    .venv/bin/python bench/peer_speedscope.py TRACE -o out.png \
        [--view time-order|left-heavy|sandwich] [--profile INDEX|NAME] \
        [--width 1920] [--height 1080] [--theme light|dark] [--timeout 120]

Needs: node + npm (apt-get install -y nodejs npm) and Debian's Chromium at
/usr/bin/chromium (apt-get install -y chromium).
"""
from __future__ import annotations

import argparse
import json
import os
import pathlib
import shutil
import signal
import subprocess
import sys

PEER_DIR = pathlib.Path(__file__).resolve().parent / "peer"
SCRIPT = PEER_DIR / "speedscope_shot.mjs"
CHROMIUM = "/usr/bin/chromium"
VIEWS = ("time-order", "left-heavy", "sandwich")


class PeerError(RuntimeError):
    """speedscope could not be set up or did not render the trace."""


def _need(tool: str, install: str) -> str:
    path = shutil.which(tool)
    if not path:
        raise PeerError(f"{tool} not found: install it with `{install}`")
    return path


def ensure_installed(timeout: float = 600) -> None:
    """Check node and Chromium; run ``npm ci`` in bench/peer once if node_modules is missing."""
    _need("node", "apt-get install -y nodejs npm")
    if not os.access(CHROMIUM, os.X_OK):
        raise PeerError(f"{CHROMIUM} not found: install Debian's Chromium with `apt-get install -y chromium`")
    mods = PEER_DIR / "node_modules"
    if (mods / "speedscope" / "dist" / "release" / "index.html").is_file() and \
            (mods / "puppeteer-core" / "package.json").is_file():
        return
    npm = _need("npm", "apt-get install -y nodejs npm")
    env = dict(os.environ, PUPPETEER_SKIP_DOWNLOAD="1")  # puppeteer-core downloads nothing; belt and braces
    try:
        r = subprocess.run([npm, "ci", "--no-audit", "--no-fund"], cwd=PEER_DIR, env=env,
                           capture_output=True, text=True, timeout=timeout)
    except subprocess.TimeoutExpired:
        raise PeerError(f"`npm ci` in {PEER_DIR} timed out after {timeout:.0f}s") from None
    if r.returncode != 0:
        tail = " | ".join((r.stderr or r.stdout).strip().splitlines()[-3:])
        raise PeerError(f"`npm ci` in {PEER_DIR} failed (exit {r.returncode}): {tail}")


def screenshot(trace_path, png_path, width: int = 1920, height: int = 1080, view: str = "time-order",
               profile: int | str | None = None, timeout: float = 120, theme: str = "light") -> dict:
    """Render ``trace_path`` in speedscope and save a ``width`` x ``height`` PNG (device scale 1).

    view: "time-order" (speedscope's Time Order flame chart, its default), "left-heavy" or
        "sandwich".
    profile: which profile (thread) to show — speedscope shows one at a time: an index
        (0-based, in speedscope's order: sorted by pid, then tid; negative counts from the
        end) or a name (exact, else a unique case-insensitive substring of speedscope's
        profile name, e.g. "Dummy-7" or "tid 1234"). None: the one speedscope opens (0).
    timeout: seconds for the whole run (browser start to PNG), not counting ``npm ci``.

    Returns the script's JSON as a dict: ``times`` (ms from navigation start:
    ``page_load_ms``, ``trace_fetched_ms``, ``profile_parsed_ms``, ``first_render_ms``;
    ``parse_ms`` = parsed - fetched; ``speedscope_import_ms`` = speedscope's own
    console.time("import"), which spans download + parse; ``browser_launch_ms``;
    ``wall_ms`` = the whole script), ``profile`` (index, count, name, names), ``pixels``
    (non-background fraction of the screenshot), versions.  Raises PeerError on failure.
    """
    if view not in VIEWS:
        raise ValueError(f"view must be one of {VIEWS}, got {view!r}")
    trace_path = pathlib.Path(trace_path)
    if not trace_path.is_file():
        raise FileNotFoundError(trace_path)
    ensure_installed()
    cmd = [shutil.which("node") or "node", str(SCRIPT), str(trace_path.resolve()),
           str(pathlib.Path(png_path).resolve()), "--width", str(int(width)), "--height", str(int(height)),
           "--view", view, "--timeout", str(timeout), "--theme", theme]
    if profile is not None:
        cmd += ["--profile", str(profile)]
    # the script has its own timeout and always closes the browser; ours is a backstop:
    # SIGTERM first (the script cleans up on it), then SIGKILL.
    proc = subprocess.Popen(cmd, cwd=PEER_DIR, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    try:
        out, err = proc.communicate(timeout=timeout + 30)
    except subprocess.TimeoutExpired:
        proc.send_signal(signal.SIGTERM)
        try:
            out, err = proc.communicate(timeout=15)
        except subprocess.TimeoutExpired:
            proc.kill()
            out, err = proc.communicate()
        raise PeerError(f"speedscope_shot.mjs did not finish in {timeout + 30:.0f}s") from None
    if proc.returncode != 0:
        lines = [l for l in (err or "").strip().splitlines() if l.strip()]
        msg = next((l for l in lines if l.startswith("speedscope_shot: error:")), lines[-1] if lines else "")
        raise PeerError(msg.replace("speedscope_shot: error: ", "") or f"exit code {proc.returncode}")
    try:
        return json.loads(out.strip().splitlines()[-1])
    except (ValueError, IndexError):
        raise PeerError(f"speedscope_shot.mjs printed no JSON: {out[-200:]!r}") from None


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description="Screenshot of speedscope showing a trace (peer figure).")
    ap.add_argument("trace")
    ap.add_argument("-o", "--output", required=True, help="PNG path")
    ap.add_argument("--view", choices=VIEWS, default="time-order")
    ap.add_argument("--profile", default=None, help="profile (thread) index or name; default: the first")
    ap.add_argument("--width", type=int, default=1920)
    ap.add_argument("--height", type=int, default=1080)
    ap.add_argument("--theme", choices=("light", "dark"), default="light")
    ap.add_argument("--timeout", type=float, default=120)
    a = ap.parse_args(argv)
    try:
        info = screenshot(a.trace, a.output, width=a.width, height=a.height, view=a.view,
                          profile=a.profile, timeout=a.timeout, theme=a.theme)
    except (PeerError, FileNotFoundError) as e:
        print(f"peer_speedscope: error: {e}", file=sys.stderr)
        return 1
    print(json.dumps(info, indent=1))
    return 0


if __name__ == "__main__":
    sys.exit(main())
