"""Hostile trace files, generated (issue 9): each class of the adversarial review,
at a size given by the caller, so a test or the benchmark can grow it until a
super-linear cost would show.

Every generator returns ``(data, options)``: the file's bytes and the keyword
options for `tracevis3d.load` (most are empty).  ``measure_case`` loads one in a
fresh process under an address-space limit and a wall-clock limit and reports
what happened, the load time and the peak RSS; it is what tests/test_hostile.py
and bench/bench_hostile.py use.
"""
from __future__ import annotations

import gzip
import json
import os
import pathlib
import resource
import struct
import subprocess
import sys
import threading
import time
import zlib

REPO = pathlib.Path(__file__).resolve().parents[2]


def _x(name, ts, dur, tid=1, **kw):
    ev = {"ph": "X", "name": name, "ts": ts, "dur": dur, "pid": 1, "tid": tid}
    ev.update(kw)
    return ev


def _dump(events) -> bytes:
    return json.dumps(events, separators=(",", ":")).encode()


# ------------------------------------------------------------------ item 1: names
def long_name(n: int):
    """One call whose name is ``n`` bytes that make naive kind rules backtrack
    ("ioioio...": every position starts an I/O-rule attempt)."""
    return _dump([_x("io" * (n // 2), 1, 1)]), {}


def many_long_names(n: int):
    """``n`` bytes of names, 10 KB each, built to be slow for each rule family."""
    pats = ["io", "queue", "thread", "future", "event", "os.", "<a "]
    evs = []
    k = 0
    while len(evs) * 10_000 < n:
        p = pats[k % len(pats)]
        evs.append(_x(f"{k}" + p * (10_000 // len(p)), k, 1))
        k += 1
    return _dump(evs), {}


def names_same_ends(n: int):
    """Many distinct names of equal length that differ only in the middle (a
    hash of the ends alone puts them all in one bucket)."""
    m = max(1, n // 90)
    evs = [_x("a" * 30 + f"{k:012d}" + "z" * 30, k, 1) for k in range(m)]
    return _dump(evs), {}


def colliding_tids(n: int):
    """Many threads whose tids differ only in high bits."""
    m = max(1, n // 60)
    evs = [_x("f", k, 1, tid=(k + 1) << 40) for k in range(m)]
    return _dump(evs), {}


# ------------------------------------------------------------- item 2: samples
_THREAD_NAME = {"ph": "M", "name": "thread_name", "pid": 1, "tid": 1, "args": {"name": "main"}}


def _frames_chain(depth: int) -> dict:
    return {str(k): ({"name": f"f{k % 7}", "parent": str(k - 1)} if k else {"name": "root"})
            for k in range(depth)}


def samples_deep_chain(n: int):
    """A frame chain as deep as the file allows, one sample at every frame
    (a per-frame stack cache costs depth² memory)."""
    depth = max(2, n // 60)
    samples = [{"ts": k, "pid": 1, "tid": 1, "sf": str(k)} for k in range(depth)]
    doc = {"traceEvents": [_THREAD_NAME], "stackFrames": _frames_chain(depth), "samples": samples}
    return json.dumps(doc, separators=(",", ":")).encode(), {}


def samples_repeat(n: int):
    """Samples alternating between a 1000-deep leaf and the root: each sample
    opens or closes 1000 calls, so the calls grow far faster than the file."""
    depth = 1000
    m = max(2, (n - 40 * depth) // 40)
    samples = [{"ts": k, "pid": 1, "tid": 1, "sf": str(depth - 1 if k % 2 else 0)} for k in range(m)]
    doc = {"traceEvents": [_THREAD_NAME], "stackFrames": _frames_chain(depth), "samples": samples}
    return json.dumps(doc, separators=(",", ":")).encode(), {}


def sync_calls_args(n: int):
    """Lock calls with args that name objects: Python work per call (objects)."""
    m = max(1, n // 110)
    evs = [_x("Lock.acquire lock#%d" % (k % 50), k, 1, args={"lock": f"L{k % 1000}", "self": "<_thread.lock "
              f"object at 0x{k:x}>"}) for k in range(m)]
    return _dump(evs), {}


# ------------------------------------------------------------ item 4: tree kernels
def unmatched_e_deep(n: int):
    """A stack ``n/70`` deep, then as many E events whose names match nothing."""
    m = max(1, n // 70)
    evs = [{"ph": "B", "name": "b", "ts": k, "pid": 1, "tid": 1} for k in range(m)]
    evs += [{"ph": "E", "name": "zz", "ts": m + k, "pid": 1, "tid": 1} for k in range(m)]
    return _dump(evs), {}


def pending_e(n: int):
    """Many unmatched E events at one timestamp, then many B events at the same
    timestamp that match none of them (each B looks at the held-back E list)."""
    m = max(1, n // 100)
    evs = [{"ph": "E", "name": f"e{k}", "ts": 5, "pid": 1, "tid": 1} for k in range(m)]
    evs += [{"ph": "B", "name": f"b{k}", "ts": 5, "pid": 1, "tid": 1} for k in range(m)]
    return _dump(evs), {}


def pending_e_matched(n: int):
    """As `pending_e`, but every B matches a held-back E (first-in first-out)."""
    m = max(1, n // 100)
    evs = [{"ph": "E", "name": f"e{k}", "ts": 5, "pid": 1, "tid": 1} for k in range(m)]
    evs += [{"ph": "B", "name": f"e{k}", "ts": 5, "pid": 1, "tid": 1} for k in range(m)]
    return _dump(evs), {}


def flow_deep_chain(n: int):
    """A chain of nested calls, and flow points late in the outermost call: the
    deepest call starting before them ended long ago, so a parent walk is deep."""
    m = max(2, n // 130)
    evs = [_x("c", k, 2 * m - 2 * k) for k in range(m)]
    evs += [{"ph": "s", "id": k, "name": "f", "cat": "c", "ts": 2 * m - 1, "pid": 1, "tid": 1}
            for k in range(m)]
    return _dump(evs), {}


# ------------------------------------------------------------- item 5: memory
def _gzip_repeat(head: bytes, unit: bytes, count: int, tail: bytes) -> bytes:
    """gzip of head + unit * count + tail, compressed in pieces (never held whole)."""
    c = zlib.compressobj(9, zlib.DEFLATED, 16 + zlib.MAX_WBITS)
    out = [c.compress(head)]
    block = unit * max(1, (1 << 20) // len(unit))
    per = (1 << 20) // len(unit) or 1
    left = count
    while left >= per:
        out.append(c.compress(block))
        left -= per
    out.append(c.compress(unit * left + tail))
    out.append(c.flush())
    return b"".join(out)


def empty_events_gz(n: int):
    """gzip of ``[{},{},...]``: ``n`` bytes inflate to ~1000 n bytes of empty events."""
    return _gzip_repeat(b"[", b"{},", n * 340, b"{}]"), {}


def x_events_gz(n: int):
    """gzip of identical small X events (a bomb that is a valid trace)."""
    ev = b'{"ph":"X","ts":1,"dur":0},'
    return _gzip_repeat(b"[", ev, n * 40, ev[:-1] + b"]"), {}


def newlines_error_gz(n: int):
    """gzip of many newlines then a syntax error: the error's line number must
    not cost memory per newline."""
    return _gzip_repeat(b"[", b"\n", n * 1000, b"x"), {}


def newlines_error(n: int):
    """``n`` newlines then a syntax error (plain): the line number of the error must
    not cost memory per newline."""
    return b"[" + b"\n" * n + b"x", {}


def whitespace_events(n: int):
    """One event, then ``n`` bytes of whitespace inside the event array."""
    return b'[{"ph":"X","name":"a","ts":1,"dur":1}' + b" " * n + b"]", {}


def tiny_events(n: int):
    """As many empty objects as ``n`` bytes hold (``{},``: 3 bytes each)."""
    return b"[" + b"{}," * (n // 3) + b"{}]", {}


# -------------------------------------------------------------- item 3: native
def native_bytes(tamper: str, n_calls: int = 200) -> bytes:
    """A valid native file of a small synthetic trace, then tampered with."""
    import io as _io
    import zipfile

    import numpy as np

    sys.path.insert(0, str(REPO))
    import tracevis3d

    t = tracevis3d.synthetic(n_calls, threads=2, seed=5)
    path = pathlib.Path(os.environ.get("TMPDIR", "/tmp")) / f"tv3d-native-{os.getpid()}-{tamper}.npz"
    tracevis3d.save(t, path)
    raw = path.read_bytes()
    path.unlink()
    if tamper == "none":
        return raw
    zin = zipfile.ZipFile(_io.BytesIO(raw))
    members = {i.filename: zin.read(i.filename) for i in zin.infolist()}
    arr = {k[:-4]: np.load(_io.BytesIO(v)) for k, v in members.items()}
    hdr = json.loads(arr["tracevis3d_header"].tobytes())
    comp = zipfile.ZIP_STORED
    if tamper == "end_index_out_of_range":
        arr["end_index"][3] = 10 ** 9
    elif tamper == "end_index_backwards":
        arr["end_index"][5] = 0
    elif tamper == "parent_forward":
        arr["parent"][3] = len(t) - 1
    elif tamper == "parent_out_of_range":
        arr["parent"][7] = -5
    elif tamper == "short_func":
        arr["func"] = arr["func"][:10]
    elif tamper == "func_out_of_range":
        arr["func"][0] = 10 ** 6
    elif tamper == "wrong_dtype":
        arr["start"] = arr["start"].astype(np.float32)
    elif tamper == "two_d":
        arr["depth"] = np.stack([arr["depth"], arr["depth"]], axis=1)
    elif tamper == "nan_time":
        arr["start"][4] = np.nan
    elif tamper == "flow_out_of_range":
        arr["flow_id"] = np.array([1], np.int64)
        arr["flow_from"] = np.array([0], np.int32)
        arr["flow_to"] = np.array([10 ** 6], np.int32)
    elif tamper == "args_bad":
        arr["args_call"] = np.array([0], np.int32)
        arr["args_ptr"] = np.array([0, 5], np.int64)
        arr["args_blob"] = np.frombuffer(b'{"a":', np.uint8).copy()
    elif tamper == "args_ptr_bad":
        arr["args_call"] = np.array([0], np.int32)
        arr["args_ptr"] = np.array([0, 10 ** 9], np.int64)
        arr["args_blob"] = np.zeros(3, np.uint8)
    elif tamper == "obj_ptr_bad":
        arr["obj_ptr"][5] = 10 ** 9
    elif tamper == "header_not_json":
        arr["tracevis3d_header"] = np.frombuffer(b"{not json", np.uint8)
    elif tamper == "header_list":
        arr["tracevis3d_header"] = np.frombuffer(b"[1, 2]", np.uint8)
    elif tamper == "header_version_str":
        hdr["version"] = "x"
    elif tamper == "header_no_tables":
        del hdr["tables"]
    elif tamper == "header_tables_wrong":
        hdr["tables"]["function_names"] = 5
    elif tamper == "header_names_short":
        hdr["tables"]["function_names"] = hdr["tables"]["function_names"][:1]
    elif tamper == "header_name_not_str":
        hdr["tables"]["thread_names"][0] = {"a": 1}
    elif tamper == "header_paths_wrong":
        hdr["function_paths"] = [5] * len(hdr["function_paths"])
    elif tamper == "header_meta_deep":
        raw_hdr = b'{"format":"tracevis3d","version":1,"n_calls":%d,"tables":%s,"function_paths":%s,"meta":%s}' % (
            len(t), json.dumps(hdr["tables"]).encode(), json.dumps(hdr["function_paths"]).encode(),
            b"[" * 100_000 + b"]" * 100_000)
        arr["tracevis3d_header"] = np.frombuffer(raw_hdr, np.uint8)
        hdr = None
    elif tamper == "header_meta_ref_missing":
        hdr["meta"] = {"x": {"__ndarray__": "nope"}}
    elif tamper == "header_meta_ref_header":
        hdr["meta"] = {"x": {"__ndarray__": 5}}
    elif tamper == "header_surrogate":
        hdr["tables"]["function_names"][0] = "\ud800"
    elif tamper == "missing_member":
        del arr["thread"]
    elif tamper == "deflate_bomb":
        arr["zz_bomb"] = np.zeros(1 << 30, np.uint8)  # 1 GiB of zeros, deflated to ~1 MB
        comp = zipfile.ZIP_DEFLATED
    elif tamper == "declared_huge":
        pass  # handled below: a .npy header declaring 2**40 elements
    else:
        raise ValueError(tamper)
    if hdr is not None and tamper != "header_not_json" and tamper != "header_list":
        arr["tracevis3d_header"] = np.frombuffer(json.dumps(hdr).encode(), np.uint8)
    out = _io.BytesIO()
    with zipfile.ZipFile(out, "w", compression=zipfile.ZIP_STORED) as zout:
        for k, v in arr.items():
            b = _io.BytesIO()
            np.save(b, v)
            data = b.getvalue()
            if tamper == "declared_huge" and k == "func":  # same header length: take spaces off the padding
                old, new = b"'shape': (%d,)" % len(v), b"'shape': (%d,)" % (1 << 40)
                end = data.index(b"\n")
                pad = len(new) - len(old)
                assert data[end - pad: end] == b" " * pad
                data = data[: end - pad].replace(old, new) + data[end:]
            zout.writestr(zipfile.ZipInfo(k + ".npy"), data,
                          compress_type=comp if k == "zz_bomb" else zipfile.ZIP_STORED)
    return out.getvalue()


NATIVE_TAMPERS = (
    "end_index_out_of_range", "end_index_backwards", "parent_forward", "parent_out_of_range", "short_func",
    "func_out_of_range", "wrong_dtype", "two_d", "nan_time", "flow_out_of_range", "args_bad", "args_ptr_bad",
    "obj_ptr_bad", "header_not_json", "header_list", "header_version_str", "header_no_tables",
    "header_tables_wrong", "header_names_short", "header_name_not_str", "header_paths_wrong",
    "header_meta_deep", "header_meta_ref_missing", "header_meta_ref_header", "header_surrogate",
    "missing_member", "deflate_bomb", "declared_huge",
)


# ------------------------------------------------------------- item 7: gzip
def gzip_variants(body: bytes) -> dict:
    """The gzip oddities of the review, each around ``body``."""
    g = gzip.compress(body)
    half = len(body) // 2
    two = gzip.compress(body[:half]) + gzip.compress(body[half:])
    crc = bytearray(g)
    crc[-8] ^= 0xFF  # the CRC32 of the trailer
    return {
        "multi_member": two,
        "crc_error": bytes(crc),
        "trailing_garbage": g + b"garbage!",
        "no_trailer": g[:-8],
        "cut_in_deflate": g[: len(g) * 2 // 3],
    }


# ---------------------------------------------------------- the guarded runner
_CHILD = r"""
import json, os, resource, sys, time, warnings
sys.path.insert(0, os.environ["TV3D_REPO"])
warnings.simplefilter("ignore")
import tracevis3d
from tracevis3d import TraceFormatError
tracevis3d.load(os.environ["TV3D_WARM"])  # numba kernels from the cache, not timed
opts = json.loads(os.environ["TV3D_OPTS"])
t0 = time.perf_counter()
out = {}
try:
    tr = tracevis3d.load(os.environ["TV3D_FILE"], **opts)
    tr.check()
    out["outcome"] = "ok"
    out["calls"] = len(tr)
    out["repairs"] = {k: v["count"] for k, v in tr.meta.get("repairs", {}).items()}
except TraceFormatError as e:
    out["outcome"] = "error"
    out["message"] = str(e)[:2000]
except MemoryError:
    out["outcome"] = "MemoryError"
except BaseException as e:
    out["outcome"] = type(e).__name__
    out["message"] = str(e)[:2000]
out["seconds"] = time.perf_counter() - t0
# the peak of this process's own memory: ru_maxrss survives exec on Linux, so a child
# forked from a large parent (a test session that rendered in Blender) would report the
# parent's peak; VmHWM belongs to the address space exec made
try:
    with open("/proc/self/status") as st:
        out["peak_mb"] = next(int(ln.split()[1]) for ln in st if ln.startswith("VmHWM:")) / 1024
except (OSError, StopIteration, ValueError):
    out["peak_mb"] = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
print("TV3D-RESULT " + json.dumps(out))
"""

_WARM = b'[{"ph":"X","name":"a","ts":1,"dur":3},{"ph":"B","name":"b","ts":1},{"ph":"E","ts":2}]'


def measure_case(data: bytes, options: dict | None = None, *, workdir, timeout: float = 60.0,
                 max_address_space: int = 3 << 30, repo=REPO, name: str = "case") -> dict:
    """Load ``data`` in a fresh process (``repo`` on its path) limited to
    ``max_address_space`` bytes of address space and ``timeout`` seconds.

    Returns a dict: outcome ("ok", "error" for a TraceFormatError, an exception
    name, "timeout", or "signal N" for a crash), seconds (the load alone), peak_mb
    (peak RSS of the process), message, calls, repairs.
    """
    workdir = pathlib.Path(workdir)
    f = workdir / f"{name}.bin"
    f.write_bytes(data)
    warm = workdir / "warm.json"
    if not warm.exists():
        warm.write_bytes(_WARM)
    env = dict(os.environ, TV3D_REPO=str(repo), TV3D_FILE=str(f), TV3D_WARM=str(warm),
               TV3D_OPTS=json.dumps(options or {}))

    def limit():
        resource.setrlimit(resource.RLIMIT_AS, (max_address_space, max_address_space))

    t0 = time.perf_counter()
    with open(workdir / f"{name}.out", "w+b") as fo, open(workdir / f"{name}.err", "w+b") as fe:
        p = subprocess.Popen([sys.executable, "-c", _CHILD], env=env, stdout=fo, stderr=fe,
                             preexec_fn=limit)
        timed_out = []

        def kill():
            timed_out.append(True)
            p.kill()

        timer = threading.Timer(timeout, kill)
        timer.start()
        try:
            _, wstatus, ru = os.wait4(p.pid, 0)  # the child's own peak RSS, even if it crashed
        finally:
            timer.cancel()
        p.returncode = os.waitstatus_to_exitcode(wstatus)
        fo.seek(0)
        fe.seek(0)
        out_b, err_b = fo.read(), fe.read()
    wall = time.perf_counter() - t0
    res = {"outcome": None, "seconds": None, "peak_mb": ru.ru_maxrss / 1024, "message": "", "wall": wall}
    for line in out_b.decode("utf-8", "replace").splitlines():
        if line.startswith("TV3D-RESULT "):
            res.update(json.loads(line[len("TV3D-RESULT "):]))
    if res["outcome"] is None:
        if timed_out:
            res["outcome"] = "timeout"
            res["seconds"] = timeout
        elif p.returncode < 0:
            res["outcome"] = f"signal {-p.returncode}"
        else:
            res["outcome"] = f"exit {p.returncode}"
        res["message"] = err_b.decode("utf-8", "replace")[-2000:]
        if res["seconds"] is None:
            res["seconds"] = wall
    res["stderr"] = err_b.decode("utf-8", "replace")[-4000:]
    for suffix in (".out", ".err"):
        (workdir / f"{name}{suffix}").unlink()
    f.unlink()
    return res


# ------------------------------------------------------------------ V8 profiles (io.chrome_profile)
def _v8_chain(depth: int, first: int = 2) -> list:
    nodes = [{"id": 1, "callFrame": {"functionName": "(root)"}}]
    nodes += [{"id": k, "parent": k - 1 if k > first else 1, "callFrame": {"functionName": f"f{k % 7}", "url": "x.js"}}
              for k in range(first, first + depth)]
    return nodes


def profile_chunks_swing(n: int):
    """A V8 profile whose samples swing between a 1000-deep leaf and a top-level frame, in
    chunks of 100 samples (as V8 writes them) up to ``n`` bytes: each swing closes and opens
    1000 calls; bounded by the samples' call budget (sample_bytes_per_call)."""
    head = [_x("host", 0, 10),
            {"ph": "P", "name": "Profile", "id": 1, "pid": 1, "tid": 1, "ts": 0, "args": {"data": {"startTime": 0}}},
            {"ph": "P", "name": "ProfileChunk", "id": 1, "pid": 1, "tid": 2, "ts": 0,
             "args": {"data": {"cpuProfile": {"nodes": _v8_chain(1000)}, "timeDeltas": []}}}]
    chunk = {"ph": "P", "name": "ProfileChunk", "id": 1, "pid": 1, "tid": 2, "ts": 0,
             "args": {"data": {"cpuProfile": {"samples": [1001, 2] * 50}, "timeDeltas": [7] * 100}}}
    unit = json.dumps(chunk, separators=(",", ":")).encode()
    body = _dump(head)[:-1]
    count = max(1, (n - len(body)) // (len(unit) + 1))
    return body + b"," + b",".join([unit] * count) + b"]", {}


def profile_ids_flood(n: int):
    """Profile events each with an id of its own, as many as ``n`` bytes hold: each would be a
    profile of its own (a few tables); at most MAX_PROFILES are kept."""
    unit = b'{"ph":"P","name":"Profile","id":%d,"pid":1,"tid":1,"ts":0,"args":{"data":{"startTime":0}}}'
    count = max(1, n // (len(unit) + 4))
    return b"[" + _dump([_x("host", 0, 10)])[1:-1] + b"," + b",".join(unit % k for k in range(count)) + b"]", {}


def cpuprofile_chain(n: int):
    """A V8 .cpuprofile (children lists) with a chain as deep as ``n`` bytes of nodes allow,
    sampled at its leaf and at its root in turn."""
    depth = max(10, n // 160)
    nodes = [{"id": k, "callFrame": {"functionName": f"f{k % 13}", "url": "file:///a.js", "lineNumber": k},
              "children": [k + 1] if k < depth else []} for k in range(1, depth + 1)]
    samples = [depth, 2] * 200
    return json.dumps({"nodes": nodes, "startTime": 0, "endTime": 1, "samples": samples,
                       "timeDeltas": [3] * len(samples)}).encode(), {}


CASES = {
    "profile_chunks_swing": profile_chunks_swing,
    "profile_ids_flood": profile_ids_flood,
    "cpuprofile_chain": cpuprofile_chain,
    "long_name": long_name,
    "many_long_names": many_long_names,
    "names_same_ends": names_same_ends,
    "colliding_tids": colliding_tids,
    "sync_calls_args": sync_calls_args,
    "samples_deep_chain": samples_deep_chain,
    "samples_repeat": samples_repeat,
    "unmatched_e_deep": unmatched_e_deep,
    "pending_e": pending_e,
    "pending_e_matched": pending_e_matched,
    "flow_deep_chain": flow_deep_chain,
    "empty_events_gz": empty_events_gz,
    "x_events_gz": x_events_gz,
    "newlines_error_gz": newlines_error_gz,
    "newlines_error": newlines_error,
    "whitespace_events": whitespace_events,
    "tiny_events": tiny_events,
}



# ------------------------------------------------------------------ issue 20: compact files
def _compact_parts(n_calls: int = 200, trace=None):
    """(header, {section: stored bytes}) of a valid compact file of ``trace`` (default: a small
    synthetic one)."""
    import tempfile

    import tracevis3d
    from tracevis3d.io import compact

    t = tracevis3d.synthetic(n_calls, threads=2, seed=7) if trace is None else trace
    fd, tmp = tempfile.mkstemp(suffix=".tv3c")
    os.close(fd)
    try:
        tracevis3d.save(t, tmp, format="compact")
        data = pathlib.Path(tmp).read_bytes()
    finally:
        os.remove(tmp)
    n0 = len(compact.MAGIC) + 20
    _, hs, _ = struct.unpack("<IQQ", data[len(compact.MAGIC):n0])
    header = json.loads(zlib.decompress(data[n0:n0 + hs]))
    blobs, at = {}, n0 + hs
    for sec in header["sections"]:
        blobs[sec["name"]] = data[at: at + sec["stored"]]
        at += sec["stored"]
    return header, blobs


def _compact_put(header, blobs, name, values, zigzag=False):
    import numpy as np

    from tracevis3d.io import compact

    w = compact._Writer()
    w.ints(name, np.asarray(values, np.int64), zigzag=zigzag)
    w.finish()
    header["sections"] = [w.sections[0] if sec["name"] == name else sec for sec in header["sections"]]
    blobs[name] = w.blobs[0]


def _compact_bytes(header, blobs, hraw=None) -> bytes:
    from tracevis3d.io import compact

    raw = json.dumps(header).encode()
    hz = zlib.compress(raw, 9)
    return (compact.MAGIC + struct.pack("<IQQ", compact.VERSION, len(hz), len(raw) if hraw is None else hraw)
            + hz + b"".join(blobs[sec["name"]] for sec in header["sections"]))


def _compact_dag(k: int, fan: int, n_calls: int):
    header, blobs = _compact_parts()
    header.update(n_calls=n_calls, n_nodes=k, n_edges=fan * (k - 1))
    _compact_put(header, blobs, "node_func", [0] * k)
    _compact_put(header, blobs, "node_nchild", [0] + [fan] * (k - 1))
    _compact_put(header, blobs, "node_children", [1] * (fan * (k - 1)))
    _compact_put(header, blobs, "roots", [k - 1], zigzag=True)
    _compact_put(header, blobs, "roots_per_thread", [1] + [0] * (header["n_threads"] - 1))
    return _compact_bytes(header, blobs), {}


def compact_dag_bomb(levels: int):
    """A DAG whose node k has two children k-1: 2^levels - 1 calls in under a kilobyte."""
    return _compact_dag(levels, 2, (1 << levels) - 1)


def compact_deep_chain(depth: int):
    """A chain of ``depth`` distinct nodes: one call per level, a few bytes per 10 K levels."""
    return _compact_dag(depth, 1, depth)


def compact_raw0(mb: int):
    """A section that declares 0 raw bytes over a zlib stream of ``mb`` MB of zeros."""
    header, blobs = _compact_parts()
    bomb = zlib.compress(bytes(mb << 20), 9)
    for sec in header["sections"]:
        if sec["name"] == "args_blob":
            sec.update(raw=0, stored=len(bomb), crc=zlib.crc32(bomb))
    blobs["args_blob"] = bomb
    return _compact_bytes(header, blobs), {}


def compact_meta(items: int):
    """A header whose metadata holds ``items`` empty lists (3 bytes of JSON each, ~1000x zlib)."""
    header, blobs = _compact_parts()
    header["meta"]["pile"] = [[]] * items
    return _compact_bytes(header, blobs), {}


def compact_wrap(n_calls: int):
    """node_nchild summing to 2^64 + n_edges: numpy's int64 sum says n_edges (was a SIGSEGV)."""
    import numpy as np

    header, blobs = _compact_parts(n_calls)
    v = np.zeros(header["n_nodes"], np.int64)
    v[:4] = 1 << 62
    v[0] += header["n_edges"]
    _compact_put(header, blobs, "node_nchild", v)
    return _compact_bytes(header, blobs), {}


COMPACT_CASES = {
    "compact_dag_bomb": compact_dag_bomb,
    "compact_deep_chain": compact_deep_chain,
    "compact_raw0": compact_raw0,
    "compact_meta": compact_meta,
    "compact_wrap": compact_wrap,
}

__all__ = ["CASES", "COMPACT_CASES", "NATIVE_TAMPERS", "native_bytes", "gzip_variants", "measure_case", "zlib",
           "struct"]
