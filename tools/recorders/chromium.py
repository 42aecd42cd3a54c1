"""Chromium tracing its own headless start-up and a page load (``--trace-startup``): the suite's
chromium_page (every category, V8's CPU profiler, Chrome JSON) and the format recordings
chromium_json / chromium_proto (DevTools' timeline categories, as Chrome JSON and as a Perfetto
protobuf trace): several processes (browser, GPU, network and storage services, renderers),
dozens of threads, async slices, flows between threads and processes."""
from __future__ import annotations

import os
import tempfile

from .common import (FORMAT_TIMEOUT, check_output, child_env, program_path, require_tool,
                     run_logged, run_tool, tool_version, write_record)


#: what Chromium traces for chromium_page: every default category, DevTools' timeline and V8's CPU
#: profiler (the page's JavaScript as sampled stacks: Profile/ProfileChunk events,
#: `tracevis3d.io.chrome_profile`)
CHROMIUM_CATEGORIES = "*,disabled-by-default-devtools.timeline,disabled-by-default-v8.cpu_profiler"
#: the page Chromium loads while it traces its own start-up (chromium_page): script, layout, canvas
#: frames, timers, a dedicated worker and promises
CHROMIUM_PAGE = '''\
<!doctype html><html><head><title>work</title>
<style>div.b{display:inline-block;width:20px;height:20px;margin:1px;background:#48c}</style></head>
<body><canvas id=c width=800 height=400></canvas><div id=grid></div>
<script>
function fib(n){return n<2?n:fib(n-1)+fib(n-2)}
function sortWork(){const a=[];for(let i=0;i<200000;i++)a.push(Math.random());a.sort();return a[0]}
function layoutWork(){const g=document.getElementById('grid');for(let i=0;i<3000;i++){const d=document.createElement('div');
  d.className='b';d.textContent=i%10;g.appendChild(d)}return g.offsetHeight}
function draw(t){const c=document.getElementById('c').getContext('2d');for(let i=0;i<2000;i++){
  c.fillStyle=`hsl(${(i+t)%360},70%,50%)`;c.fillRect((i*37)%800,(i*53)%400,10,10)}}
let frames=0;
function tick(t){draw(t|0);frames++;if(frames<60)requestAnimationFrame(tick)}
requestAnimationFrame(tick);
setTimeout(()=>{fib(27);sortWork()},50);
setTimeout(()=>{layoutWork()},120);
const w=new Worker(URL.createObjectURL(new Blob([`onmessage=e=>{function f(n){return n<2?n:f(n-1)+f(n-2)};postMessage(f(e.data))}`])));
w.onmessage=e=>{document.title='done '+e.data};w.postMessage(30);
Promise.all([1,2,3].map(k=>new Promise(r=>setTimeout(()=>r(fib(20+k)),30*k)))).then(v=>console.log(v));
</script></body></html>
'''


#: what the format recordings trace: DevTools' timeline (tasks, script, layout, paint, network
#: requests as async slices), V8's execution, IPC (mojo messages: flows between processes), the
#: navigation and start-up phases, the compositor's frames.  Leaving out "toplevel" and "loading"
#: keeps a start-up trace small enough to ship (~1.5-2 MB of JSON, ~150 kB gzipped); "*" gives
#: 8 MB of protobuf for the same run.
CHROMIUM_TIMELINE_CATEGORIES = ("devtools.timeline,v8.execute,blink.user_timing,rail,ipc,navigation,startup,"
                                "disabled-by-default-devtools.timeline.frame")
INSTALL_CHROMIUM = "Debian: apt-get install chromium"


def chromium_browser() -> str:
    """Chromium's command (Debian's ``chromium``, or ``chromium-browser``); `RecordingSkipped` if absent."""
    return require_tool(("chromium", "chromium-browser"), INSTALL_CHROMIUM)


def chromium_startup_command(browser: str, out: str, fmt: str, categories: str, page: str, work: str,
                             duration: int = 4, budget_ms: int = 3000) -> list:
    """Headless Chromium tracing ``categories`` from its start-up for ``duration`` seconds into
    ``out`` (``fmt`` "json" or "proto"), while it loads the local file ``page`` and takes a
    screenshot of it (on virtual time: ``budget_ms`` of the page's timers, then it quits)."""
    return [browser, "--headless=new", "--no-sandbox", "--disable-gpu", "--disable-background-networking",
            "--disable-component-update", "--disable-sync", "--no-first-run",
            "--user-data-dir=" + os.path.join(work, "profile"),
            "--trace-startup=" + categories, "--trace-startup-format=" + fmt,
            "--trace-startup-file=" + out, f"--trace-startup-duration={int(duration)}",
            f"--virtual-time-budget={int(budget_ms)}", "--screenshot=" + os.path.join(work, "page.png"),
            "file://" + page]


def run_chromium_spec(spec, argv: list, work: str, tmp: str, timeout: float) -> dict:
    """The suite's chromium_page: every default category and V8's CPU profiler, as Chrome JSON
    (it writes protobuf otherwise), while the browser loads ``argv[0]``."""
    browser = chromium_browser()
    cmd = chromium_startup_command(browser, tmp, "json", CHROMIUM_CATEGORIES, argv[0], work)
    rc, log, secs = run_logged(cmd, work, timeout, child_env())
    if not os.path.exists(tmp):
        raise RuntimeError(f"{spec.name}: {' '.join(cmd)} exited {rc}, no trace:\n{log[-3000:]}")
    return {"cmd": cmd, "log": log, "secs": secs}


def record_chromium(out_dir: str, fmt: str = "json", categories: str = CHROMIUM_TIMELINE_CATEGORIES,
                    duration: int = 2, name: str | None = None, timeout: float = FORMAT_TIMEOUT) -> str:
    """Chromium's start-up and `programs/work_page.html` traced as ``fmt`` ("json": Chrome
    Trace Event JSON, ``<name>.json``; "proto": a Perfetto trace, ``<name>.pftrace``); the path.
    Raises `RecordingSkipped` without Chromium, RuntimeError when it writes no trace."""
    if fmt not in ("json", "proto"):
        raise ValueError(f"fmt must be 'json' or 'proto', not {fmt!r}")
    browser = chromium_browser()
    name = name or f"chromium_{fmt}"
    out = os.path.join(out_dir, name + (".json" if fmt == "json" else ".pftrace"))
    os.makedirs(out_dir, exist_ok=True)
    if os.path.exists(out):
        os.remove(out)
    page = program_path("work_page.html")
    with tempfile.TemporaryDirectory(prefix="chromium-") as work:
        cmd = chromium_startup_command(browser, out, fmt, categories, page, work, duration, 1500)
        log, secs = run_tool(cmd, work, timeout, child_env(), outputs=[out])
    check_output(out, 100_000, f"Chromium's {fmt} trace of its start-up")
    with open(out, "rb") as f:
        head = f.read(64)
    if fmt == "json" and b"traceEvents" not in head:
        raise RuntimeError(f"{out}: Chromium wrote no Trace Event JSON (starts {head[:40]!r})")
    if fmt == "proto" and head[:1] != b"\x0a":
        raise RuntimeError(f"{out}: Chromium wrote no Perfetto trace (starts {head[:16]!r})")
    shown = [("<user-data-dir>" if a.startswith("--user-data-dir=") else
              "--screenshot=page.png" if a.startswith("--screenshot=") else
              "--trace-startup-file=" + os.path.basename(out) if a.startswith("--trace-startup-file=") else a)
             for a in cmd]
    write_record(out + ".record.json", {
        "name": name, "tool": "chromium", "version": tool_version([browser, "--version"]),
        "command": ["chromium"] + shown[1:-1] + ["file://tools/recorders/programs/work_page.html"],
        "program": "tools/recorders/programs/work_page.html", "seconds": round(secs, 2),
        "files": [os.path.basename(out)], "tool_log": log.strip()[-1500:]})
    return out


def record_chromium_json(out_dir: str, timeout: float = FORMAT_TIMEOUT) -> str:
    """Chromium's start-up as Chrome JSON (`record_chromium`)."""
    return record_chromium(out_dir, "json", timeout=timeout)


def record_chromium_proto(out_dir: str, timeout: float = FORMAT_TIMEOUT) -> str:
    """Chromium's start-up as a Perfetto protobuf trace (`record_chromium`; one second of
    tracing: the protobuf form carries its debug annotations in full and is ~1.3x the JSON's
    gzipped size)."""
    return record_chromium(out_dir, "proto", duration=1, timeout=timeout)

