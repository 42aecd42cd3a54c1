"""A Gecko profile recorded here, now, by Firefox (headless, the profiler started by its
environment variables on a page with a worker) against the naive reading
(tests/support/gecko_twins.py).  Without Firefox, or when it writes no profile here, the test
skips.  The shipped recordings and the Firefox Profiler's fixtures: tests/unit/test_firefox_format.py."""
import pathlib
import shutil
import subprocess

import pytest

from gecko_twins import check, naive_gecko

FIREFOX = pathlib.Path(__file__).resolve().parents[1] / "data" / "formats" / "firefox"


def test_firefox_live_recording_loads(tmp_path):
    exe = shutil.which("firefox-esr") or shutil.which("firefox")
    if not exe:
        pytest.skip("Firefox is not installed (apt-get install -y firefox-esr)")
    page = tmp_path / "worker.html"
    page.write_text((FIREFOX / "worker.html").read_text())
    out = tmp_path / "gecko.json"
    home = tmp_path / "home"
    home.mkdir()
    env = {"HOME": str(home), "PATH": "/usr/bin:/bin", "MOZ_PROFILER_STARTUP": "1",
           "MOZ_PROFILER_STARTUP_INTERVAL": "1", "MOZ_PROFILER_STARTUP_FILTERS": "DOM Worker",
           "MOZ_PROFILER_STARTUP_FEATURES": "js,stackwalk,nomarkerstacks", "MOZ_PROFILER_SHUTDOWN": str(out)}
    try:
        r = subprocess.run([exe, "--headless", "--screenshot", str(tmp_path / "s.png"), page.as_uri()], env=env,
                           capture_output=True, text=True, timeout=180)
    except subprocess.TimeoutExpired:
        pytest.skip("Firefox did not finish within 180 s here")
    if not out.is_file():
        pytest.skip(f"Firefox wrote no profile here (exit {r.returncode}): {r.stderr.strip()[-300:]}")
    tr = check(out, lambda d: naive_gecko(d, js_only=False))
    assert "DOM Worker" in tr.thread_names
