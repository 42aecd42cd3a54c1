"""What a recording holds, read from the file itself (not through TraceVis3D's readers): its threads,
samples, events, processes.  These are the numbers the format table, the README of the shipped
recordings and their manifest give, and the expected thread counts the tests hold a reader to
where the file says them (each summary's ``threads_rule`` says what it counts).

Small pure-Python parses, fine for the recordings here (at most tens of MB); not readers."""
from __future__ import annotations

import collections
import gzip
import json
import re


def read_bytes(path: str) -> bytes:
    """The file's bytes, gzip inflated."""
    with open(path, "rb") as f:
        data = f.read()
    return gzip.decompress(data) if data[:2] == b"\x1f\x8b" else data


# ----------------------------------------------------------------------------- protobuf wire format
def _varint(b: bytes, i: int) -> tuple:
    v = shift = 0
    while True:
        c = b[i]
        i += 1
        v |= (c & 0x7F) << shift
        if c < 0x80:
            return v, i
        shift += 7


def proto_fields(b: bytes):
    """(field number, wire type, value) of a protobuf message's fields: an int for varints and
    fixed widths, the bytes of length-delimited fields."""
    i, n = 0, len(b)
    while i < n:
        tag, i = _varint(b, i)
        num, wt = tag >> 3, tag & 7
        if wt == 0:
            v, i = _varint(b, i)
        elif wt == 1:
            v, i = int.from_bytes(b[i:i + 8], "little"), i + 8
        elif wt == 5:
            v, i = int.from_bytes(b[i:i + 4], "little"), i + 4
        elif wt == 2:
            ln, i = _varint(b, i)
            v, i = b[i:i + ln], i + ln
        else:
            raise ValueError(f"wire type {wt} at byte {i}")
        yield num, wt, v


# ----------------------------------------------------------------------------- per format
def summarize_chrome(path: str) -> dict:
    """Chrome Trace Event JSON: events by phase; threads = (pid, tid) with complete or begin events."""
    doc = json.loads(read_bytes(path))
    events = doc.get("traceEvents", []) if isinstance(doc, dict) else doc
    phases = collections.Counter(e.get("ph", "?") for e in events)
    slices = {(e.get("pid"), e.get("tid")) for e in events
              if e.get("ph") in ("X", "B") or (e.get("ph") in ("I", "i") and e.get("s", "t") == "t")}
    return {"events": len(events), "phases": dict(phases.most_common()), "threads": len(slices),
            "processes": len({e.get("pid") for e in events if e.get("ph") != "M"}),
            "threads_rule": "threads (pid, tid) with complete (X), begin (B) or thread-scoped instant events"}


def summarize_perfetto(path: str) -> dict:
    """A Perfetto trace: packets, track events, thread tracks that carry slices, flows.  Needs
    perfetto's protos (the ``perfetto`` package); the packet count only without them."""
    data = read_bytes(path)
    try:
        from perfetto.protos.perfetto.trace.perfetto_trace_pb2 import Trace
    except ImportError:
        return {"packets": sum(1 for num, _, _ in proto_fields(data) if num == 1),
                "threads_rule": "not counted: perfetto's protos are not installed"}
    t = Trace()
    t.ParseFromString(data)
    thread_of = {}          # track uuid -> (pid, tid) of thread tracks
    processes = set()
    for p in t.packet:
        if p.HasField("track_descriptor"):
            d = p.track_descriptor
            if d.HasField("thread"):
                thread_of[d.uuid] = (d.thread.pid, d.thread.tid)
            elif d.HasField("process"):
                processes.add(d.process.pid)
    kinds = collections.Counter()
    threads_with_slices = set()
    flows = 0
    default_track = {}      # packet sequence -> its events' track when they name none
    for p in t.packet:
        seq = p.trusted_packet_sequence_id
        if p.HasField("trace_packet_defaults") and p.trace_packet_defaults.HasField("track_event_defaults"):
            default_track[seq] = p.trace_packet_defaults.track_event_defaults.track_uuid
        if p.HasField("track_event"):
            e = p.track_event
            kinds[e.Type.Name(e.type)] += 1
            flows += len(e.flow_ids) + len(e.terminating_flow_ids)
            track = e.track_uuid if e.HasField("track_uuid") else default_track.get(seq, 0)
            if e.type in (e.TYPE_SLICE_BEGIN, e.TYPE_INSTANT) and track in thread_of:
                threads_with_slices.add(thread_of[track])
    return {"packets": len(t.packet), "track_events": dict(kinds.most_common()), "thread_tracks": len(thread_of),
            "threads": len(threads_with_slices), "processes": len(processes), "flow_ids": flows,
            "other_tracks": sum(1 for p in t.packet if p.HasField("track_descriptor")) - len(thread_of)
            - len(processes),
            "threads_rule": "thread tracks (pid, tid) with slices or instants on them"}


def summarize_gecko(path: str) -> dict:
    """A Gecko profile: threads with samples across the parent and its nested child processes."""
    doc = json.loads(read_bytes(path))
    rows = []

    def visit(profile):
        for t in profile.get("threads", ()):
            rows.append((t.get("processType", ""), t.get("name", ""), t.get("pid"), t.get("tid"),
                         len(t.get("samples", {}).get("data", ())), len(t.get("markers", {}).get("data", ()))))
        for child in profile.get("processes", ()):
            visit(child)

    visit(doc)
    sampled = [r for r in rows if r[4] > 0]
    return {"threads": len(sampled), "samples": sum(r[4] for r in rows), "markers": sum(r[5] for r in rows),
            "processes": 1 + _count_children(doc), "version": doc.get("meta", {}).get("version"),
            "thread_names": [f"{r[1]} ({r[0]})" for r in sampled],
            "threads_rule": "threads with samples, parent and child processes together"}


def _count_children(profile: dict) -> int:
    return sum(1 + _count_children(c) for c in profile.get("processes", ()))


def summarize_pprof(path: str) -> dict:
    """A pprof Profile: samples, sample types, locations, functions; one thread (pprof has none)."""
    data = read_bytes(path)
    strings, types, counts = [], [], collections.Counter()
    for num, _, v in proto_fields(data):
        counts[num] += 1
        if num == 6:
            strings.append(v.decode("utf-8", "replace"))
        elif num == 1:
            types.append({f: x for f, _, x in proto_fields(v)})
    names = [f"{strings[t.get(1, 0)]}/{strings[t.get(2, 0)]}" for t in types] if strings else []
    return {"samples": counts[2], "sample_types": names, "locations": counts[4], "functions": counts[5],
            "threads": 1, "threads_rule": "pprof has no threads: one"}


def summarize_cpuprofile(path: str) -> dict:
    doc = json.loads(read_bytes(path))
    return {"nodes": len(doc.get("nodes", ())), "samples": len(doc.get("samples", ())), "threads": 1,
            "threads_rule": "a .cpuprofile is one thread"}


def summarize_speedscope(path: str) -> dict:
    """speedscope JSON: one thread per profile with samples (sampled) or events (evented)."""
    doc = json.loads(read_bytes(path))
    profiles = doc.get("profiles", ())
    sizes = [len(p.get("samples", ())) if p.get("type") == "sampled" else len(p.get("events", ())) for p in profiles]
    return {"profiles": len(profiles), "kinds": sorted({p.get("type") for p in profiles}),
            "samples_or_events": sum(sizes), "frames": len(doc.get("shared", {}).get("frames", ())),
            "threads": sum(1 for s in sizes if s), "exporter": doc.get("exporter", ""),
            "thread_names": [p.get("name", "") for p in profiles],
            "threads_rule": "profiles with samples or events"}


_THREAD_FRAME = re.compile(r"^(?:process \d+:[^;]*;)?thread \((0x[0-9A-Fa-f]+|\d+)\)")
_AUSTIN_THREAD = re.compile(r"^P(\d+);T((?:\d+:)?(?:0x)?[0-9A-Fa-f]+);")


def summarize_collapsed(path: str) -> dict:
    """Collapsed stacks: lines (distinct stacks), samples (their counts' sum) and threads: the
    distinct thread ids of py-spy's leading ``thread (tid)`` frames (``--threads``), one without."""
    lines = [ln for ln in read_bytes(path).decode("utf-8", "replace").splitlines()
             if ln.strip() and not ln.startswith("#")]  # Austin's header and trailer: '# key: value'
    total = 0
    tids = set()
    for ln in lines:
        total += int(float(ln.rsplit(None, 1)[1]))
        m = _THREAD_FRAME.match(ln) or _AUSTIN_THREAD.match(ln)
        if m:
            tids.add(m.group(m.lastindex))
    return {"stacks": len(lines), "samples": total, "root_frames": len({ln.split(";", 1)[0] for ln in lines}),
            "threads": len(tids) or 1,
            "threads_rule": "distinct thread ids of py-spy's leading 'thread (tid)' frames (a thread's frame is "
                            "'thread (tid)' until py-spy knows its name, 'thread (tid): name' after) or of "
                            "Austin's 'P<pid>;T<iid>:<tid>' frames, one without"}


def summarize_callgrind(path: str) -> dict:
    text = read_bytes(path).decode("utf-8", "replace")
    events = re.search(r"^events:\s*(.*)$", text, re.M)
    summary = re.search(r"^(?:summary|totals):\s*(.*)$", text, re.M)
    return {"functions": len(set(re.findall(r"^fn=\((\d+)\)", text, re.M))),
            "calls_lines": len(re.findall(r"^calls=", text, re.M)),
            "events": events.group(1) if events else "", "total": summary.group(1) if summary else "",
            "threads": 1, "threads_rule": "one profile of the whole process (--separate-threads=no): one"}


_PERF_EVENT = re.compile(r"^(\S.*?)\s+(\d+)(?:/(\d+))?\s+(?:\[\d+\]\s+)?\d+\.\d+:\s")


def summarize_perf_script(path: str) -> dict:
    """perf script output: samples (event lines) and the threads (tids) they came from."""
    tids, samples, frames = set(), 0, 0
    for ln in read_bytes(path).decode("utf-8", "replace").splitlines():
        m = _PERF_EVENT.match(ln)
        if m:
            samples += 1
            tids.add(m.group(3) or m.group(2))
        elif ln.startswith(("\t", " ")) and ln.strip():
            frames += 1
    return {"samples": samples, "frames": frames, "threads": len(tids),
            "threads_rule": "distinct thread ids of the samples"}


SUMMARIZERS = {"chrome": summarize_chrome, "perfetto": summarize_perfetto, "gecko": summarize_gecko,
               "pprof": summarize_pprof, "cpuprofile": summarize_cpuprofile, "speedscope": summarize_speedscope,
               "collapsed": summarize_collapsed, "callgrind": summarize_callgrind,
               "perf-script": summarize_perf_script}


def summarize(path: str, fmt: str) -> dict:
    """The summary of ``path`` read as format ``fmt`` (a key of `tracevis3d.io.formats`)."""
    return SUMMARIZERS[fmt](path)
