"""Record the critical path's test and figure trace: examples/threads_pipeline.py under VizTracer
with ``--log_func_args``, trimmed to stay small (see README.md).

    .venv/bin/python tests/data/critical_path/record.py            # writes threads_pipeline.json.gz here
"""
from __future__ import annotations

import gzip
import os
import pathlib
import subprocess
import sys
import tempfile

import orjson

HERE = pathlib.Path(__file__).resolve().parent
REPO = HERE.parents[2]
ARGS = ["--docs", "9", "--batch", "3"]
#: the standard library's synchronisation code: its calls keep their args (the ``self`` reprs that
#: name the lock, condition, queue, event, future or thread a call acts on)
SYNC_FILES = ("threading.py", "queue.py", "concurrent/futures/", "<frozen importlib._bootstrap>")


def trim(doc: dict) -> dict:
    """The recording without VizTracer's copies of the source files and with args only on the
    standard library's synchronisation calls (the rest, every ``StemCache.stem(word)``, made the
    file five times larger)."""
    doc.pop("file_info", None)
    for ev in doc["traceEvents"]:
        if ev.get("ph") == "X" and "args" in ev and not any(f in ev.get("name", "") for f in SYNC_FILES):
            del ev["args"]
    return doc


def main() -> int:
    with tempfile.TemporaryDirectory() as d:
        raw = os.path.join(d, "raw.json")
        env = dict(os.environ, PYTHONHASHSEED="0")
        env.pop("PYTHONPATH", None)
        subprocess.run([sys.executable, "-m", "viztracer", "--quiet", "--tracer_entries", "1000000",
                        "--log_func_args", "-o", raw, "--", str(REPO / "examples" / "threads_pipeline.py"), *ARGS],
                       check=True, env=env, cwd=d)
        with open(raw, "rb") as f:
            doc = trim(orjson.loads(f.read()))
    out = HERE / "threads_pipeline.json.gz"
    with gzip.open(out, "wb", compresslevel=9) as f:
        f.write(orjson.dumps(doc))
    print(f"{out}: {out.stat().st_size:,} bytes")
    return 0


if __name__ == "__main__":
    sys.exit(main())
