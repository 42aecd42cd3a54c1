"""The recordings of other tools' formats: which recorder writes which files in which format, recording
them all (`record_formats`), and shipping the small ones to tests/data/formats/recorded/ (`ship`:
gzipped, with manifest.json and README.md).

    .venv/bin/python tools/record_traces.py --formats all            # -> build/traces/formats/
    .venv/bin/python tools/record_traces.py --formats perf,uftrace --ship
"""
from __future__ import annotations

import gzip
import json
import os
import sys
import warnings
from dataclasses import dataclass
from typing import Callable

from .chromium import record_chromium_json, record_chromium_proto
from .common import (DEFAULT_FORMATS_OUT, FORMAT_TIMEOUT, REPO, SHIPPED_DIR, RecordingSkipped, fmt_bytes,
                     write_record)
from .firefox import record_firefox, record_firefox_workers
from .go_pprof import record_go_pprof
from .native import record_callgrind, record_perf, record_uftrace
from .node import record_node_cpuprofile
from .python_samplers import record_pyinstrument, record_pyspy_raw, record_pyspy_speedscope
from .summaries import summarize
from .third_party import record_austin_memory, record_austin_wall, record_xdebug, record_yappi

#: the most a shipped file may weigh (tests/data stays small)
SHIP_MAX_BYTES = 200_000


@dataclass(frozen=True)
class FormatRecording:
    """One recorder of the format suite and the files it writes."""

    name: str
    #: the folder of its shipped files under tests/data/formats/recorded/
    tool: str
    #: ``record(out_dir, timeout=...) -> path``
    record: Callable
    #: (file name, format key of `tracevis3d.io.formats`) of every file it writes
    files: tuple
    doc: str
    #: recorded only when asked for by name (its tool comes from apt), not by ``--formats all``
    opt_in: bool = False


FORMAT_SUITE = (
    FormatRecording("chromium_json", "chromium", record_chromium_json, (("chromium_json.json", "chrome"),),
                    "headless Chromium's start-up and a page (--trace-startup, JSON): processes, dozens of threads, "
                    "async slices, flows"),
    FormatRecording("chromium_proto", "chromium", record_chromium_proto, (("chromium_proto.pftrace", "perfetto"),),
                    "the same as a Perfetto protobuf trace (--trace-startup-format=proto)"),
    FormatRecording("firefox_gecko", "firefox", record_firefox, (("firefox_gecko.json", "gecko"),),
                    "Firefox ESR's start-up and the page, Gecko profiler from start-up (main threads and workers)"),
    FormatRecording("firefox_workers", "firefox", record_firefox_workers, (("firefox_workers.json", "gecko"),),
                    "the same, the Web Workers' threads only (small)"),
    FormatRecording("go_pprof", "go", record_go_pprof, (("go_cpu.pb.gz", "pprof"), ("go_heap.pb.gz", "pprof")),
                    "Go's runtime/pprof: CPU and heap profiles of six labelled goroutines"),
    FormatRecording("node_cpuprofile", "node", record_node_cpuprofile,
                    (("node.cpuprofile", "cpuprofile"), ("node_worker.cpuprofile", "cpuprofile")),
                    "node --cpu-prof: the main thread's and a worker thread's V8 CPU profiles"),
    FormatRecording("callgrind", "valgrind", record_callgrind, (("callgrind.out", "callgrind"),),
                    "valgrind --tool=callgrind on a small C program (3 threads)"),
    FormatRecording("perf", "perf", record_perf, (("perf.script.txt", "perf-script"),),
                    "perf record -g + perf script on the C program"),
    FormatRecording("pyspy_speedscope", "py-spy", record_pyspy_speedscope,
                    (("pyspy.speedscope.json", "speedscope"),), "py-spy --format speedscope on a Python program"),
    FormatRecording("pyspy_raw", "py-spy", record_pyspy_raw, (("pyspy.collapsed.txt", "collapsed"),),
                    "py-spy --format raw (collapsed stacks) on the Python program"),
    FormatRecording("pyinstrument", "pyinstrument", record_pyinstrument,
                    (("pyinstrument.speedscope.json", "speedscope"),), "pyinstrument -r speedscope on the program"),
    FormatRecording("uftrace", "uftrace", record_uftrace, (("uftrace.json", "chrome"),),
                    "uftrace record (-pg) + uftrace dump --chrome on the C program"),
    FormatRecording("yappi", "yappi", record_yappi, (("yappi.callgrind", "callgrind"),),
                    "yappi -c wall -f callgrind on the Python program (its threads summed in one profile)"),
    FormatRecording("austin_wall", "austin", record_austin_wall, (("austin.wall.txt", "collapsed"),),
                    "Austin 3 (collapsed stacks, P<pid>;T<iid>:<tid> frames) on the Python program, wall time"),
    FormatRecording("austin_memory", "austin", record_austin_memory, (("austin.memory.txt", "collapsed"),),
                    "Austin 3's memory mode (-m) on the Python program"),
    FormatRecording("xdebug", "xdebug", record_xdebug, (("xdebug.cachegrind.out", "callgrind"),),
                    "Xdebug's profiler (callgrind format) on a PHP program: recursion, classes, closures, an include",
                    opt_in=True),
)
FORMAT_NAMES = [r.name for r in FORMAT_SUITE]
#: what ``--formats all`` records: all but the opt-in recordings (their tools come from apt)
FORMAT_NAMES_ALL = [r.name for r in FORMAT_SUITE if not r.opt_in]


def by_name(name: str) -> FormatRecording:
    for r in FORMAT_SUITE:
        if r.name == name:
            return r
    raise KeyError(f"unknown format recording {name!r}; known: {', '.join(FORMAT_NAMES)}")


def sniffed_format(path: str) -> str:
    """The key of the format `tracevis3d.io.formats.detect` gives the file's first bytes (gzip
    inflated), '' when none."""
    if REPO not in sys.path:
        sys.path.insert(0, REPO)
    from tracevis3d.io.formats import HEAD_BYTES, Head, detect

    with open(path, "rb") as f:
        data = f.read(HEAD_BYTES + 1)
    if data[:2] == b"\x1f\x8b":
        with gzip.open(path, "rb") as f:
            data = f.read(HEAD_BYTES + 1)
    fmt = detect(Head(data, whole=len(data) <= HEAD_BYTES, name=os.path.basename(path)))
    return fmt.key if fmt else ""


def load_counts(path: str) -> dict:
    """Calls and threads of ``path`` loaded by tracevis3d, {"reader": "missing: ..."} when the
    format's reader module does not exist yet, {"reader": "error: ..."} when it refuses the file."""
    if REPO not in sys.path:
        sys.path.insert(0, REPO)
    import tracevis3d

    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            t = tracevis3d.load(path)
    except ModuleNotFoundError as e:
        if (e.name or "").startswith("tracevis3d.io."):
            return {"reader": f"missing: {e.name}"}
        raise
    except Exception as e:  # a reader's refusal is a finding of the table, not a crash of the recorder
        return {"reader": f"error: {type(e).__name__}: {str(e)[:300]}"}
    return {"reader": "ok", "calls": len(t), "reader_threads": t.n_threads, "reader_format": t.meta.get("format")}


def record_one(rec: FormatRecording, out_dir: str, timeout: float = FORMAT_TIMEOUT, load: bool = True) -> dict:
    """Record ``rec`` into ``out_dir`` and describe each file it wrote (summary, sniffed format, and
    what the reader makes of it when ``load``); the record, also written to ``<file>.record.json``.
    A recorder that cannot run here gives {"skipped": why}; one that fails raises RuntimeError."""
    try:
        main = rec.record(out_dir, timeout=timeout)
    except RecordingSkipped as e:
        return {"name": rec.name, "tool": rec.tool, "skipped": str(e)}
    record_path = main + ".record.json"
    with open(record_path, encoding="utf-8") as f:
        record = json.load(f)
    described = []
    for file_name, fmt in rec.files:
        path = os.path.join(out_dir, file_name)
        item = {"file": file_name, "format": fmt, "bytes": os.path.getsize(path), "sniffed": sniffed_format(path),
                "summary": summarize(path, fmt)}
        if load:
            item.update(load_counts(path))
        described.append(item)
    record.update(name=rec.name, tool_dir=rec.tool, doc=rec.doc, described=described)
    return write_record(record_path, record)


def record_formats(names: list, out_dir: str = DEFAULT_FORMATS_OUT, timeout: float = FORMAT_TIMEOUT,
                   load: bool = True) -> list:
    """Record every format recording of ``names``; one record per name (failures as
    {"failed": message}), in `FORMAT_SUITE`'s order."""
    rows = []
    for rec in FORMAT_SUITE:
        if rec.name not in names:
            continue
        print(f"record_traces: recording {rec.name} ({rec.doc})", file=sys.stderr, flush=True)
        try:
            row = record_one(rec, out_dir, timeout, load)
        except (RuntimeError, OSError, ValueError) as e:
            print(f"record_traces: FAILED {rec.name}: {e}", file=sys.stderr)
            row = {"name": rec.name, "tool": rec.tool, "failed": str(e).splitlines()[0][:300]}
        if row.get("skipped"):
            print(f"record_traces: skip {rec.name}: {row['skipped']}", file=sys.stderr)
        rows.append(row)
    return rows


def _contents(item: dict) -> str:
    """A file's contents in a few words: threads, samples or events, calls when read."""
    s = item["summary"]
    parts = [f"{s['threads']} thread{'s' if s['threads'] != 1 else ''}"]
    if item.get("reader_threads") not in (None, s["threads"]):
        parts[0] += f" (the reader: {item['reader_threads']})"
    for key in ("samples", "samples_or_events", "events", "track_events", "stacks", "functions"):
        v = s.get(key)
        v = sum(v.values()) if isinstance(v, dict) else v
        if isinstance(v, int):
            parts.append(f"{v:,} {key.replace('_', ' ')}")
            break
    if s.get("processes", 1) > 1:
        parts.append(f"{s['processes']} processes")
    if "calls" in item:
        parts.append(f"{item['calls']:,} calls read")
    return ", ".join(parts)


def print_formats_table(rows: list, file=sys.stdout) -> None:
    """One line per file: recording, file, format (sniffed), size, seconds, contents."""
    head = f"{'recording':<17} {'file':<30} {'format':<12} {'sniffed':<12} {'size':>8} {'rec s':>6}  contents"
    print(head, file=file)
    print("-" * len(head), file=file)
    for r in rows:
        if "described" not in r:
            why = r.get("skipped") and f"SKIPPED: {r['skipped']}" or f"FAILED: {r.get('failed')}"
            print(f"{r['name']:<17} {'-':<30} {'-':<12} {'-':<12} {'-':>8} {'-':>6}  {why}", file=file)
            continue
        for item in r["described"]:
            note = "" if item.get("reader", "ok") == "ok" else f"; reader {item['reader']}"
            print(f"{r['name']:<17} {item['file']:<30} {item['format']:<12} {item['sniffed'] or '-':<12} "
                  f"{fmt_bytes(item['bytes']):>8} {r.get('seconds', 0):>6.1f}  {_contents(item)}{note}", file=file)


def _gzip_to(src: str, dst: str) -> int:
    """``src`` gzipped (level 9, no name or time in the header: the same bytes on every run) into
    ``dst``, or copied when it is gzip already; the size written."""
    with open(src, "rb") as f:
        data = f.read()
    if data[:2] != b"\x1f\x8b":
        data = gzip.compress(data, compresslevel=9, mtime=0)
    os.makedirs(os.path.dirname(dst), exist_ok=True)
    with replaced_whole(dst) as tmp, open(tmp, "wb") as f:  # a shipped file replaced whole or not at all
        f.write(data)
    return len(data)


def replaced_whole(path):
    """`tracevis3d.io.atomic.replaced_whole` (this checkout's): a shipped file or manifest is
    replaced whole or not at all."""
    if REPO not in sys.path:
        sys.path.insert(0, REPO)
    from tracevis3d.io.atomic import replaced_whole as whole

    return whole(path)


def ship(rows: list, out_dir: str = DEFAULT_FORMATS_OUT, dest: str = SHIPPED_DIR) -> list:
    """Copy the files of the recorded ``rows`` that are at most `SHIP_MAX_BYTES` gzipped to
    ``dest/<tool>/<file>[.gz]`` and update ``dest/manifest.json`` and ``dest/README.md``; the
    files shipped and those left out (with why) as (relative path or file, bytes, note)."""
    manifest_path = os.path.join(dest, "manifest.json")
    entries = {}
    if os.path.exists(manifest_path):
        with open(manifest_path, encoding="utf-8") as f:
            entries = {e["file"]: e for e in json.load(f)["recordings"]}
    report = []
    for r in rows:
        for item in r.get("described", ()):
            name = item["file"] if item["file"].endswith(".gz") else item["file"] + ".gz"
            rel = f"{r['tool_dir']}/{name}"
            dst = os.path.join(dest, rel)
            size = _gzip_to(os.path.join(out_dir, item["file"]), dst)
            if size > SHIP_MAX_BYTES:
                os.remove(dst)
                report.append((item["file"], size, f"not shipped: {size:,} bytes gzipped > {SHIP_MAX_BYTES:,}"))
                continue
            if item.get("reader") == "ok" and item["reader_threads"] != item["summary"]["threads"]:
                print(f"ship: {rel}: the reader makes {item['reader_threads']} threads, the file has "
                      f"{item['summary']['threads']} ({item['summary']['threads_rule']})", file=sys.stderr)
            entries[rel] = {
                "file": rel, "format": item["format"], "tool": r["tool"], "version": r.get("version", ""),
                "recording": r["name"], "doc": r["doc"], "command": r.get("command", []),
                "program": r.get("program", ""), "bytes": size,
                "threads": item["summary"]["threads"], "threads_rule": item["summary"]["threads_rule"],
                "reader_at_recording": {k: item[k] for k in ("reader", "calls", "reader_threads") if k in item},
                "summary": item["summary"]}
            report.append((rel, size, "shipped"))
    os.makedirs(dest, exist_ok=True)
    with replaced_whole(manifest_path) as tmp, open(tmp, "w", encoding="utf-8") as f:
        json.dump({"recordings": [entries[k] for k in sorted(entries)]}, f, indent=1)
        f.write("\n")
    with replaced_whole(os.path.join(dest, "README.md")) as tmp, open(tmp, "w", encoding="utf-8") as f:
        f.write(readme_text([entries[k] for k in sorted(entries)]))
    return report


README_HEAD = """# Recorded traces of other tools

Real recordings made on this project's machines by `tools/record_traces.py --formats ... --ship`
(`tools/recorders/format_suite.py`): each tool run as its users run it, on a small program of
this project's (sources in `tools/recorders/programs/`, under the project's licence).  Every file
is gzipped (pprof's files are gzip already); `manifest.json` lists the same with the tool's
version, the command, the format key (`tracevis3d.io.formats`), the expected thread count (read
from the file's own structure by `tools/recorders/summaries.py`; `threads_rule` says what it
counts) and what TraceVis3D's reader made of the file when it was recorded.
`tests/test_recorded_formats.py` checks each file: it decompresses, is sniffed as its format and,
where the reader exists, loads with calls and that many threads.

**Licence.**  The data are recordings made for this project (no third-party content beyond the
names of the recorded programs' functions, the browsers' own functions and file paths of this
machine); they are distributed under the project's licence.  The programs recorded are the
project's own (`tools/recorders/programs/`).  Chromium and Firefox are recorded running their own
start-up code and `tools/recorders/programs/work_page.html`.

Recorded again with `.venv/bin/python tools/record_traces.py --formats all --ship` (needs the
tools: chromium, firefox-esr, golang-go, nodejs, valgrind, linux-perf, uftrace, gcc from apt;
py-spy and pyinstrument from pip); a file over 200 kB gzipped is not shipped.

| file | tool (version) | format | contents | size |
|---|---|---|---|---|
"""


def readme_text(entries: list) -> str:
    """The README of the shipped recordings: a table of the files, then each file's command."""
    out = [README_HEAD]
    for e in entries:
        out.append(f"| `{e['file']}` | {e['tool']} ({e['version']}) | {e['format']} | "
                   f"{_contents({'summary': e['summary'], **_calls(e)})} | "
                   f"{fmt_bytes(e['bytes'])} |\n")
    out.append("\n## How each was recorded\n")
    for e in entries:
        out.append(f"\n**`{e['file']}`**: {e['doc']}.  Program: `{e['program']}`.  Threads expected: "
                   f"{e['threads']} ({e['threads_rule']}).\n\n    {' '.join(e['command'])}\n")
    return "".join(out)


def _calls(e: dict) -> dict:
    return {"calls": e["reader_at_recording"]["calls"]} if "calls" in e.get("reader_at_recording", {}) else {}
