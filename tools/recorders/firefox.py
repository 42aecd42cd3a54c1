"""Firefox (ESR, headless) profiled by its Gecko profiler from start-up: ``MOZ_PROFILER_STARTUP=1``
and ``MOZ_PROFILER_SHUTDOWN=<file>`` write the Gecko profile (JSON: the parent process's threads,
its child processes' profiles nested under ``processes``) when the browser quits, here after
``--screenshot`` of `programs/work_page.html` (a Web Worker, sorting, JSON, DOM building).

The profile of the main threads is large (~5 MB of JSON, ~0.8 MB gzipped: every process's start-up
records thousands of "Preference Read" markers); ``threads="DOM Worker"`` profiles the Web
Workers only (the page's worker in the content process and one of the parent process): ~60 kB
gzipped, the one shipped for the tests.
"""
from __future__ import annotations

import json
import os
import tempfile

from .common import (FORMAT_TIMEOUT, child_env, program_path, require_tool, run_tool, tool_version,
                     write_record)

INSTALL_FIREFOX = "Debian: apt-get install firefox-esr"
#: sampled every 2 ms, JavaScript frames and native stack walking, CPU use per thread
GECKO_FEATURES = "js,stackwalk,cpu"
#: the preferences of the profile the browser starts with: one content process for the page (no
#: process per site, none started ahead), no first-run pages
USER_PREFS = {
    "fission.autostart": False,
    "dom.ipc.processCount": 1,
    "dom.ipc.processPrelaunch.enabled": False,
    "browser.shell.checkDefaultBrowser": False,
    "browser.startup.homepage_override.mstone": "ignore",
    "datareporting.policy.dataSubmissionEnabled": False,
    "toolkit.telemetry.reportingpolicy.firstRun": False,
}


def _gecko_threads(profile: dict) -> list:
    """(process type, thread name, samples) of every thread of a Gecko profile and its nested
    child processes' profiles."""
    out = []
    for t in profile.get("threads", ()):
        out.append((t.get("processType", ""), t.get("name", ""), len(t.get("samples", {}).get("data", ()))))
    for child in profile.get("processes", ()):
        out += _gecko_threads(child)
    return out


def record_firefox(out_dir: str, threads: str = "GeckoMain,DOM Worker", features: str = GECKO_FEATURES,
                   interval_ms: int = 2, name: str = "firefox_gecko", timeout: float = FORMAT_TIMEOUT) -> str:
    """Firefox's start-up and `programs/work_page.html` profiled by the Gecko profiler (the
    threads whose names contain one of ``threads``, comma-separated) into ``<name>.json``; the path.
    Raises `RecordingSkipped` without Firefox, RuntimeError when it writes no profile."""
    browser = require_tool(("firefox-esr", "firefox"), INSTALL_FIREFOX)
    os.makedirs(out_dir, exist_ok=True)
    out = os.path.join(out_dir, name + ".json")
    if os.path.exists(out):
        os.remove(out)
    env = child_env(MOZ_PROFILER_STARTUP=1, MOZ_PROFILER_SHUTDOWN=out, MOZ_PROFILER_STARTUP_FEATURES=features,
                    MOZ_PROFILER_STARTUP_INTERVAL=interval_ms, MOZ_PROFILER_STARTUP_FILTERS=threads)
    with tempfile.TemporaryDirectory(prefix="firefox-") as work:
        profile_dir = os.path.join(work, "profile")
        os.makedirs(profile_dir)
        with open(os.path.join(profile_dir, "user.js"), "w") as f:
            f.writelines(f"user_pref({json.dumps(k)}, {json.dumps(v)});\n" for k, v in USER_PREFS.items())
        cmd = [browser, "--headless", "--no-remote", "--profile", profile_dir,
               "--screenshot", os.path.join(work, "page.png"), "file://" + program_path("work_page.html")]
        log, secs = run_tool(cmd, work, timeout, env, outputs=[out])
    try:
        with open(out, encoding="utf-8") as f:
            profile = json.load(f)
    except ValueError as e:
        raise RuntimeError(f"{out}: Firefox's profile is not JSON: {e}") from None
    sampled = [t for t in _gecko_threads(profile) if t[2] > 0]
    if not sampled or "meta" not in profile:
        raise RuntimeError(f"{out}: a Gecko profile with no sampled thread (threads {threads!r})")
    write_record(out + ".record.json", {
        "name": name, "tool": "firefox", "version": tool_version([browser, "--version"]),
        "command": [f"MOZ_PROFILER_STARTUP=1 MOZ_PROFILER_SHUTDOWN={name}.json "
                    f"MOZ_PROFILER_STARTUP_FEATURES={features} MOZ_PROFILER_STARTUP_INTERVAL={interval_ms} "
                    f"MOZ_PROFILER_STARTUP_FILTERS='{threads}'",
                    "firefox-esr", "--headless", "--no-remote", "--profile", "<profile with user.js>",
                    "--screenshot", "page.png", "file://tools/recorders/programs/work_page.html"],
        "user_prefs": USER_PREFS, "program": "tools/recorders/programs/work_page.html",
        "seconds": round(secs, 2), "files": [os.path.basename(out)], "tool_log": log.strip()[-1500:]})
    return out


def record_firefox_workers(out_dir: str, timeout: float = FORMAT_TIMEOUT) -> str:
    """`record_firefox` of the Web Workers' threads only (small enough to ship)."""
    return record_firefox(out_dir, threads="DOM Worker", name="firefox_workers", timeout=timeout)
