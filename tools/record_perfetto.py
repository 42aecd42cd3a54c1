#!/usr/bin/env python3
"""Perfetto protobuf traces for the tests and the benchmark of `tracevis3d.io.perfetto`.

    .venv/bin/python tools/record_perfetto.py chromium OUT.pftrace [--json OUT.json]
    .venv/bin/python tools/record_perfetto.py sdk OUT.pftrace --slices 1000000 --threads 8

Two sources:

``record_chromium``
    Chromium tracing its own headless start-up and a small page (``--trace-startup`` with
    ``--trace-startup-format=proto``; ``json`` for the JSON trace of the same kind of run).
    What the browser writes: one packet sequence per thread and process, interned names and
    categories, the incremental clock 64 (µs deltas, ClockSnapshot per sequence), thread-time
    counters on every event, flows between posted and run tasks, async tracks.

``sdk_like_trace``
    A trace built with ``perfetto_trace_pb2`` shaped like the Perfetto SDK's output: per thread
    one ``trusted_packet_sequence_id`` that starts with ``SEQ_INCREMENTAL_STATE_CLEARED`` and
    ``TracePacketDefaults`` (the thread's track, the sequence's clock), process and thread
    ``TrackDescriptor`` packets, slices as ``TYPE_SLICE_BEGIN``/``TYPE_SLICE_END`` with names and
    categories interned on first use (``interned_data``), counters on counter tracks, flows
    (``flow_ids`` / ``terminating_flow_ids``), debug annotations, instants.  ``clock`` picks how the
    times are written: "incremental" (clock 64 deltas in ns, as the SDK), "absolute" (BOOTTIME ns
    on every packet), "legacy" (a ThreadDescriptor packet's ``reference_timestamp_us`` and the
    events' ``timestamp_delta_us``, Chrome before 2020).

Both need the ``perfetto`` package (its ``perfetto_trace_pb2``) only here: the reader does not.
"""
from __future__ import annotations

import argparse
import os
import random
import shutil
import subprocess
import sys
import tempfile

#: Chromium's trace categories for the small recorded trace (the default set plus V8's and
#: Blink's timeline ones: slices, flows, counters and async tracks in a ~2 s page load)
CHROMIUM_CATEGORIES = "toplevel,toplevel.flow,blink,v8,cc,gpu,viz,renderer,renderer.scheduler,loading,navigation," \
                      "disabled-by-default-devtools.timeline,benchmark"
CHROMIUM_PAGE = """<!doctype html><html><head><title>work</title></head>
<body><canvas id=c width=300 height=150></canvas><div id=d></div>
<script>
function fib(n){return n<2?n:fib(n-1)+fib(n-2)}
function draw(t){const c=document.getElementById('c').getContext('2d');for(let i=0;i<300;i++){
  c.fillStyle=`hsl(${(i+t)%360},70%,50%)`;c.fillRect((i*37)%300,(i*53)%150,10,10)}}
let frames=0;function tick(t){draw(t|0);frames++;if(frames<20)requestAnimationFrame(tick)}
requestAnimationFrame(tick);
setTimeout(()=>{fib(24);const d=document.getElementById('d');for(let i=0;i<300;i++){
  const e=document.createElement('span');e.textContent=i;d.appendChild(e)}},40);
performance.mark('work-start');setTimeout(()=>performance.measure('work','work-start'),80);
</script></body></html>
"""


def chromium_path() -> str | None:
    """The Chromium binary, or None when it is not installed."""
    return shutil.which("chromium") or shutil.which("chromium-browser") or shutil.which("google-chrome")


def record_chromium(out: str, fmt: str = "proto", categories: str = CHROMIUM_CATEGORIES, duration: int = 2,
                    timeout: float = 120.0) -> str:
    """Record Chromium's headless start-up and `CHROMIUM_PAGE` into ``out`` (``fmt``: "proto" or
    "json"); returns ``out``.  Raises RuntimeError when the browser is missing or wrote nothing."""
    browser = chromium_path()
    if browser is None:
        raise RuntimeError("chromium is not installed (Debian: apt-get install chromium)")
    work = tempfile.mkdtemp(prefix="tv3d-chromium-")
    try:
        page = os.path.join(work, "page.html")
        with open(page, "w") as f:
            f.write(CHROMIUM_PAGE)
        if os.path.exists(out):
            os.remove(out)
        cmd = [browser, "--headless=new", "--no-sandbox", "--disable-gpu", "--disable-background-networking",
               "--disable-component-update", "--disable-sync", "--no-first-run", "--disable-extensions",
               "--user-data-dir=" + os.path.join(work, "profile"), "--trace-startup=" + categories,
               "--trace-startup-format=" + fmt, "--trace-startup-file=" + os.path.abspath(out),
               f"--trace-startup-duration={duration}", "--virtual-time-budget=1500",
               "--screenshot=" + os.path.join(work, "page.png"), "file://" + page]
        env = dict(os.environ)
        env.pop("PYTHONPATH", None)
        p = subprocess.run(cmd, cwd=work, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, timeout=timeout, env=env)
        if not os.path.exists(out) or os.path.getsize(out) == 0:
            raise RuntimeError(f"{' '.join(cmd)} exited {p.returncode} and wrote no trace:\n"
                               f"{p.stdout.decode('utf-8', 'replace')[-2000:]}")
        return out
    finally:
        shutil.rmtree(work, ignore_errors=True)


# ------------------------------------------------------------------------ the SDK-shaped writer
BOOTTIME = 6
INCREMENTAL_CLOCK = 64
SEQ_CLEARED = 1
SEQ_NEEDS = 2
MONOTONIC_LAG = 777_000  # ns: MONOTONIC behind BOOTTIME in the writer's clock snapshot


def _thread_timeline(rng: random.Random, n: int, t0: int, max_depth: int, n_names: int):
    """``n`` nested slices of one thread as events (ts ns, kind "B"/"E", name index), in time
    order: a random walk that opens a slice (below ``max_depth``) or closes the innermost one."""
    ev = []
    stack = []
    t = t0
    opened = 0
    while opened < n or stack:
        t += rng.randint(1, 40) * 1000
        if opened < n and (not stack or (len(stack) < max_depth and rng.random() < 0.55)):
            name = rng.randrange(n_names) if rng.random() < 0.7 else rng.randrange(min(n_names, 8))
            ev.append((t, "B", name))
            stack.append(name)
            opened += 1
        else:
            stack.pop()
            ev.append((t, "E", -1))
    return ev


def sdk_like_trace(n_slices: int = 1000, threads: int = 4, processes: int = 2, max_depth: int = 12,
                   n_names: int = 200, counters: int = 2, counter_every: int = 50, flows: int = 100,
                   args_every: int = 20, instants: int = 20, clock: str = "incremental", seed: int = 1,
                   t0: int = 5_000_000_000_000) -> bytes:
    """A Perfetto trace (bytes) shaped like the Perfetto SDK's output; see the module docstring.

    ``n_slices`` slices in all over ``threads`` threads (spread over ``processes`` processes), up to
    ``max_depth`` deep, named from ``n_names`` names; ``counters`` counter tracks (the first
    integer, the second double; one sample every ``counter_every`` events on each thread's
    sequence); ``flows`` flows from a slice to a later slice of another thread; debug annotations
    on every ``args_every``-th slice; ``instants`` thread instants per thread."""
    from perfetto.protos.perfetto.trace import perfetto_trace_pb2 as pb

    rng = random.Random(seed)
    trace = pb.Trace()
    add = trace.packet.add
    # the tracing service's clock snapshot: the trace clock is BOOTTIME
    pk = add()
    pk.trusted_packet_sequence_id = 1
    cs = pk.clock_snapshot
    cs.primary_trace_clock = BOOTTIME
    c = cs.clocks.add()
    c.clock_id, c.timestamp = BOOTTIME, t0
    c = cs.clocks.add()
    c.clock_id, c.timestamp = 3, t0 - MONOTONIC_LAG
    per_thread = max(1, n_slices // max(threads, 1))
    timelines = []
    for k in range(threads):
        n = per_thread if k < threads - 1 else n_slices - per_thread * (threads - 1)
        timelines.append(_thread_timeline(rng, max(n, 0), t0 + 1000 * k, max_depth, n_names))
    # flows: from the k-th begin of one thread to a later begin of the next thread
    flow_out: dict = {}
    flow_in: dict = {}
    begins = [[i for i, e in enumerate(tl) if e[1] == "B"] for tl in timelines]
    if threads > 1:
        for f in range(flows):
            a = f % threads
            b = (a + 1) % threads
            if not begins[a] or not begins[b]:
                continue
            i = begins[a][rng.randrange(len(begins[a]))]
            ta = timelines[a][i][0]
            later = [j for j in begins[b][::max(1, len(begins[b]) // 200)] if timelines[b][j][0] > ta]
            if not later:
                continue
            j = later[rng.randrange(len(later))]
            fid = 1000 + f
            flow_out.setdefault((a, i), []).append(fid)
            flow_in.setdefault((b, j), []).append(fid)
    counter_uuids = [900 + c for c in range(counters)]
    for k, tl in enumerate(timelines):
        seq = 10 + k
        pid = 100 + k % max(processes, 1)
        tid = 1000 + k
        p_uuid = 50 + k % max(processes, 1)
        t_uuid = 200 + k
        first_ts = tl[0][0] if tl else t0
        pk = add()
        pk.trusted_packet_sequence_id = seq
        pk.sequence_flags = SEQ_CLEARED
        pk.previous_packet_dropped = 1
        pk.first_packet_on_sequence = True
        if clock == "incremental":
            pk.trace_packet_defaults.timestamp_clock_id = INCREMENTAL_CLOCK
        if clock != "legacy":
            pk.trace_packet_defaults.track_event_defaults.track_uuid = t_uuid
        if clock == "incremental":
            cs = pk.clock_snapshot
            c = cs.clocks.add()
            c.clock_id, c.timestamp = BOOTTIME, first_ts - 5000
            c = cs.clocks.add()
            c.clock_id, c.timestamp, c.is_incremental = INCREMENTAL_CLOCK, first_ts - 5000, True
        last = first_ts - 5000

        def stamp(p, ts):
            nonlocal last
            if clock == "incremental":
                p.timestamp = ts - last
            elif clock == "absolute":
                p.timestamp = ts
            last = ts

        pk = add()
        pk.trusted_packet_sequence_id = seq
        pk.sequence_flags = SEQ_NEEDS
        stamp(pk, last)
        d = pk.track_descriptor
        d.uuid = p_uuid
        d.process.pid = pid
        d.process.process_name = f"proc{pid}"
        pk = add()
        pk.trusted_packet_sequence_id = seq
        pk.sequence_flags = SEQ_NEEDS
        stamp(pk, last)
        d = pk.track_descriptor
        d.uuid = t_uuid
        d.parent_uuid = p_uuid
        d.thread.pid, d.thread.tid, d.thread.thread_name = pid, tid, f"worker-{k}"
        if clock == "legacy":
            pk = add()
            pk.trusted_packet_sequence_id = seq
            pk.sequence_flags = SEQ_NEEDS
            td = pk.thread_descriptor
            td.pid, td.tid, td.reference_timestamp_us = pid, tid, (last - MONOTONIC_LAG) // 1000
        if k == 0:
            for ci, cu in enumerate(counter_uuids):
                pk = add()
                pk.trusted_packet_sequence_id = seq
                pk.sequence_flags = SEQ_NEEDS
                stamp(pk, last)
                d = pk.track_descriptor
                d.uuid = cu
                d.parent_uuid = p_uuid
                d.name = f"counter{ci}"
                d.counter.unit = 3 if ci == 0 else 2  # bytes, count
        interned_names: set = set()
        interned_cats: set = set()
        interned_dnames: set = set()
        n_begin = 0
        last_us = (last - MONOTONIC_LAG) // 1000
        inst_at = set(rng.sample(range(len(tl)), min(instants, len(tl)))) if tl else set()
        for i, (ts, kind, name) in enumerate(tl):
            pk = add()
            pk.trusted_packet_sequence_id = seq
            pk.sequence_flags = SEQ_NEEDS
            if clock == "legacy":  # µs on MONOTONIC (trace processor's reading of these fields)
                us = (ts - MONOTONIC_LAG) // 1000
                pk.track_event.timestamp_delta_us = us - last_us
                last_us = us
            else:
                stamp(pk, ts)
            te = pk.track_event
            if kind == "B":
                te.type = 1
                te.name_iid = name + 1
                cat = name % 3 + 1
                te.category_iids.append(cat)
                if name not in interned_names:
                    interned_names.add(name)
                    en = pk.interned_data.event_names.add()
                    en.iid, en.name = name + 1, f"func_{name}"
                if cat not in interned_cats:
                    interned_cats.add(cat)
                    ec = pk.interned_data.event_categories.add()
                    ec.iid, ec.name = cat, ("cat_a", "cat_b", "cat_c")[cat - 1]
                if args_every and n_begin % args_every == 0:
                    da = te.debug_annotations.add()
                    if 1 not in interned_dnames:
                        interned_dnames.add(1)
                        dn = pk.interned_data.debug_annotation_names.add()
                        dn.iid, dn.name = 1, "count"
                    da.name_iid, da.int_value = 1, n_begin
                    da = te.debug_annotations.add()
                    da.name, da.string_value = "label", f"item \"{n_begin}\""
                    da = te.debug_annotations.add()
                    da.name, da.double_value = "ratio", n_begin / 7.0
                    da = te.debug_annotations.add()
                    da.name = "nested"
                    e1 = da.dict_entries.add()
                    e1.name, e1.bool_value = "ok", True
                    e2 = da.dict_entries.add()
                    e2.name = "list"
                    for v in (1, 2):
                        e2.array_values.add().uint_value = v
                for fid in flow_out.get((k, i), ()):
                    te.flow_ids.append(fid)
                for fid in flow_in.get((k, i), ()):
                    te.terminating_flow_ids.append(fid)
                n_begin += 1
            else:
                te.type = 2
            if counters and i % counter_every == 0:
                ci = (i // counter_every) % counters
                pk = add()
                pk.trusted_packet_sequence_id = seq
                pk.sequence_flags = SEQ_NEEDS
                if clock == "legacy":
                    pk.track_event.timestamp_absolute_us = (ts - MONOTONIC_LAG) // 1000
                else:
                    stamp(pk, ts)
                ce = pk.track_event
                ce.type = 4
                ce.track_uuid = counter_uuids[ci]
                if ci % 2 == 0:
                    ce.counter_value = (i * 37) % 100_000
                else:
                    ce.double_counter_value = ((i * 13) % 1000) / 8.0
            if i in inst_at:
                pk = add()
                pk.trusted_packet_sequence_id = seq
                pk.sequence_flags = SEQ_NEEDS
                if clock == "legacy":
                    pk.track_event.timestamp_absolute_us = (ts - MONOTONIC_LAG) // 1000
                else:
                    stamp(pk, ts)
                ie = pk.track_event
                ie.type = 3
                ie.name = "mark"
    return trace.SerializeToString()


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    sub = ap.add_subparsers(dest="what", required=True)
    c = sub.add_parser("chromium", help="record Chromium's start-up and a page (proto, and JSON with --json)")
    c.add_argument("out")
    c.add_argument("--json", help="also record a JSON trace of the same kind of run here")
    c.add_argument("--categories", default=CHROMIUM_CATEGORIES)
    c.add_argument("--duration", type=int, default=2)
    s = sub.add_parser("sdk", help="write an SDK-shaped trace with perfetto_trace_pb2")
    s.add_argument("out")
    s.add_argument("--slices", type=int, default=100_000)
    s.add_argument("--threads", type=int, default=8)
    s.add_argument("--clock", choices=("incremental", "absolute", "legacy"), default="incremental")
    s.add_argument("--seed", type=int, default=1)
    a = ap.parse_args(argv)
    if a.what == "chromium":
        record_chromium(a.out, "proto", a.categories, a.duration)
        print(f"{a.out}: {os.path.getsize(a.out)} bytes")
        if a.json:
            record_chromium(a.json, "json", a.categories, a.duration)
            print(f"{a.json}: {os.path.getsize(a.json)} bytes")
    else:
        data = sdk_like_trace(a.slices, threads=a.threads, clock=a.clock, seed=a.seed,
                              counter_every=200, flows=max(10, a.slices // 1000), args_every=0)
        with open(a.out, "wb") as f:
            f.write(data)
        print(f"{a.out}: {len(data)} bytes")
    return 0


if __name__ == "__main__":
    sys.exit(main())
