"""The Flamenco files (issue 23): our job type compiles to chunked blender-render tasks and a
frames-to-video task (run by node with stand-ins for Flamenco's ``author``, ``path`` and
``frameChunker``), and submit.py posts a SubmittedJob to ``/api/v3/jobs`` (a local HTTP
server plays the Manager)."""
import http.server
import json
import pathlib
import shutil
import subprocess
import sys
import threading

import pytest

ROOT = pathlib.Path(__file__).resolve().parents[2]
JOB_TYPE = ROOT / "tools" / "flamenco" / "tracevis3d_animation.js"
SUBMIT = ROOT / "tools" / "flamenco" / "submit.py"

HARNESS = r"""
const fs = require("fs");
const nodePath = require("path");
global.print = () => {};
global.path = { join: (...p) => nodePath.posix.join(...p), stem: (p) => nodePath.posix.parse(p).name };
global.formatTimestampLocal = () => "2026-01-01_120000";
global.frameChunker = (frames, size) => {
  const out = [];
  for (const part of frames.split(",")) {
    const [a, b] = part.trim().split("-").map(Number);
    for (let s = a; s <= (b || a); s += size) {
      const e = Math.min(s + size - 1, b || a);
      out.push(s === e ? `${s}` : `${s}-${e}`);
    }
  }
  return out;
};
global.author = {
  Task: (name, type) => ({ name, type, commands: [], deps: [],
    addCommand(c) { this.commands.push(c); }, addDependency(t) { this.deps.push(t.name); } }),
  Command: (name, params) => ({ name, params }),
};
eval(fs.readFileSync(process.argv[2], "utf8") + "\nglobal.JOB_TYPE = JOB_TYPE; global.compileJob = compileJob;");
const job = { name: "t", created: new Date(), settings: JSON.parse(process.argv[3]), tasks: [],
              addTask(t) { this.tasks.push(t); } };
compileJob(job);
console.log(JSON.stringify({ settings: JOB_TYPE.settings.map((s) => s.key), tasks: job.tasks }));
"""


@pytest.mark.skipif(shutil.which("node") is None, reason="node is not installed")
def test_job_type_compiles_chunks_then_a_video(tmp_path):
    harness = tmp_path / "harness.js"
    harness.write_text(HARNESS)
    settings = {"blendfile": "/shared/growth.blend", "frames": "1-100", "chunk_size": 30, "fps": 30,
                "render_output_root": "/shared/out", "make_video": True}
    r = subprocess.run(["node", str(harness), str(JOB_TYPE), json.dumps(settings)], capture_output=True,
                       text=True, timeout=60)
    assert r.returncode == 0, r.stderr
    out = json.loads(r.stdout)
    assert {"blendfile", "frames", "chunk_size", "fps", "render_output_root"} <= set(out["settings"])
    tasks = out["tasks"]
    renders = [t for t in tasks if t["type"] == "blender"]
    assert [t["name"] for t in renders] == ["render-1-30", "render-31-60", "render-61-90", "render-91-100"]
    cmd = renders[1]["commands"][0]
    assert cmd["name"] == "blender-render" and cmd["params"]["blendfile"] == "/shared/growth.blend"
    args = cmd["params"]["args"]
    assert args[args.index("--render-frame") + 1] == "31..60"
    assert args[args.index("--render-output") + 1].endswith("/frame_####")
    video = tasks[-1]
    assert video["commands"][0]["name"] == "frames-to-video"
    assert video["deps"] == [t["name"] for t in renders]
    assert video["commands"][0]["params"]["inputGlob"].endswith("frame_*.png")


def test_submit_posts_a_job_to_the_manager():
    seen = {}

    class Manager(http.server.BaseHTTPRequestHandler):
        def log_message(self, *a):
            pass

        def _json(self, obj, code=200):
            body = json.dumps(obj).encode()
            self.send_response(code)
            self.send_header("Content-Type", "application/json")
            self.send_header("Content-Length", str(len(body)))
            self.end_headers()
            self.wfile.write(body)

        def do_GET(self):
            seen["get"] = self.path
            self._json({"name": "tracevis3d-animation", "etag": "abc123"})

        def do_POST(self):
            seen["post"] = self.path
            seen["body"] = json.loads(self.rfile.read(int(self.headers["Content-Length"])))
            self._json({"id": "job-0001", **seen["body"]})

    server = http.server.HTTPServer(("127.0.0.1", 0), Manager)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        r = subprocess.run([sys.executable, str(SUBMIT), "--manager", f"http://127.0.0.1:{server.server_port}",
                            "--blend", "/shared/growth.blend", "--frames", "1-300", "--fps", "30",
                            "--output-root", "/shared/out"], capture_output=True, text=True, timeout=60)
    finally:
        server.shutdown()
    assert r.returncode == 0, r.stderr
    assert r.stdout.strip() == "job-0001"
    assert seen["get"] == "/api/v3/jobs/type/tracevis3d-animation"
    assert seen["post"] == "/api/v3/jobs"
    body = seen["body"]
    assert body["type"] == "tracevis3d-animation" and body["type_etag"] == "abc123"
    assert body["settings"]["frames"] == "1-300" and body["settings"]["blendfile"] == "/shared/growth.blend"
    assert body["submitter_platform"]


def test_submit_without_a_manager_is_one_line():
    r = subprocess.run([sys.executable, str(SUBMIT), "--manager", "http://127.0.0.1:9", "--blend", "/x.blend",
                        "--frames", "1-10", "--output-root", "/o"], capture_output=True, text=True, timeout=60)
    assert r.returncode == 1
    assert len(r.stderr.strip().splitlines()) == 1 and "cannot reach" in r.stderr


@pytest.mark.parametrize("arg, value, says", [
    ("--fps", "nan", "finite number"), ("--fps", "inf", "finite number"), ("--fps", "-1", "finite number"),
    ("--priority", str(-10 ** 23), "must be in 0-100"), ("--priority", "101", "must be in 0-100"),
    ("--chunk-size", "0", "must be in 1-"), ("--chunk-size", "1e9", "must be an integer"),
    ("--frames", "1-99999999", "past Blender's last frame"),
])
def test_submit_refuses_numbers_the_manager_cannot_take(arg, value, says):
    """Every number submit.py sends is finite and in the Manager's range (issue 68): ``--fps nan``
    once sent a body that was not JSON (``NaN``), ``--priority -10^23`` was accepted."""
    r = subprocess.run([sys.executable, str(SUBMIT), "--blend", "/x.blend", "--frames", "1-10", "--output-root", "/o",
                        "--dry-run", arg, value], capture_output=True, text=True, timeout=60)
    assert r.returncode == 2 and says in r.stderr.strip().splitlines()[-1], r.stderr


def test_submit_writes_strict_json():
    r = subprocess.run([sys.executable, str(SUBMIT), "--blend", "/x.blend", "--frames", "1-10", "--output-root", "/o",
                        "--dry-run", "--fps", "23.976"], capture_output=True, text=True, timeout=60)
    assert r.returncode == 0
    body = json.loads(r.stdout, parse_constant=lambda c: pytest.fail(f"not strict JSON: {c}"))
    assert body["settings"]["fps"] == 23.976 and body["priority"] == 50
    import importlib.util

    spec = importlib.util.spec_from_file_location("flamenco_submit", SUBMIT)
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    with pytest.raises(ValueError):
        mod.strict_json({"fps": float("nan")})


def test_job_type_python_expression_switches_a_video_blend_to_png_frames():
    """The ``--python-expr`` every render task runs: a .blend saved to write an MP4 writes PNG frames."""
    import re

    bpy = pytest.importorskip("bpy")
    js = JOB_TYPE.read_text()
    body = js[js.index("const AS_PNG = ["):js.index('].join("\\n")')]
    code = "\n".join(re.findall(r'^  "(.*)",$', body, re.M))
    bpy.ops.wm.read_factory_settings(use_empty=True)
    im = bpy.context.scene.render.image_settings
    im.media_type, im.file_format = "VIDEO", "FFMPEG"
    exec(compile(code, "AS_PNG", "exec"), {})
    assert (im.media_type, im.file_format, bpy.context.scene.render.use_file_extension) == ("IMAGE", "PNG", True)
