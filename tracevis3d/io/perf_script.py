"""``perf script`` text (Linux perf) → one merged `Trace`, one lane per thread.

``perf record -g`` then ``perf script`` writes one event per sample: an event line
(``comm pid/tid [cpu] time: period event:``, fields as ``-F`` chose them) and the call chain,
one ``address symbol+offset (dso)`` line per frame, leaf first, then a blank line.
`tracevis3d.kernels.textscan.perf_scan` reads it the way speedscope's
``linux-tools-perf.ts`` does:

- one lane per (comm, pid, tid): a thread that changes its name (``exec``) or a forked
  child is a lane of its own, as speedscope makes a profile of each;
- only the events of one type are kept: the first type in the file (speedscope's choice),
  or the one named by the option ``event=`` ("cycles", "cpu-clock:ppp", ...); the others
  are counted in ``meta["perf_events"]``;
- events without a time are skipped (speedscope skips them too), counted as a repair;
- a frame is (symbol, dso): the symbol as perf wrote it, its ``+0x..`` offset dropped, not
  demangled (Rust ``_R...``/C++ ``_Z...`` names stay as written; `tracevis3d.names` reads
  them); ``[unknown]`` symbols become ``??? (dso)``, one frame per dso, as speedscope names
  them; the dso is the frame's file.

x is samples: each event counts 1, as FlameGraph's ``stackcollapse-perf.pl`` counts them
(speedscope weighs a sample by the time to its neighbours instead: its Left Heavy view is
in seconds; the period column is not used by either).  ``meta["x_unit"] = "samples"``.

Without a pid column (perf's default prints the thread id only) a lane's ``pid`` is 0 and
its process name empty; with ``pid/tid`` the process is named by its main thread's comm.
Lines that are neither comments, event lines nor frames are skipped (repair
``perf_line``); stacks deeper than ``max_stack_depth`` keep their root side
(``stack_deep``).
"""
from __future__ import annotations

import numpy as np

from ..model import TraceFormatError
from .collapsed import Repairs, decode_spans, frame_table, lane_tables, text_buffer
from .limits import DEFAULT_LIMITS
from .lanes import OTHER_LANES, cap_lane_ids
from .stacks import StackProfile, merged_trace

__all__ = ["load_perf_script"]


def load_perf_script(data, *, source: str = "<bytes>", limits=None, kind_rules=None, warn: bool = True,
                     event: str | None = None, **_common):
    """Load ``perf script`` output (``data``: its bytes) as one merged trace (module
    docstring).  ``event``: the event type to show (default: the first in the file)."""
    import os

    from ..kernels.gamma import process_hash_seed
    from ..kernels.perf_scan import FLOODED, perf_scan

    lim = limits if limits is not None else DEFAULT_LIMITS
    rep = Repairs()
    n_input = len(data) if not isinstance(data, np.ndarray) else data.nbytes
    buf, _ = text_buffer(data, source, rep)
    want = np.frombuffer(str(event).encode("utf-8") if event else b"", np.uint8)  # (read-only either way: one type)
    seed = process_hash_seed()
    res = perf_scan(buf, 0, buf.size, seed, int(lim.max_stack_depth), want)
    if res[0] == FLOODED:  # keys built to collide under this process's seed: once more under another
        res = perf_scan(buf, 0, buf.size, np.uint64(int.from_bytes(os.urandom(8), "little")),
                        int(lim.max_stack_depth), want)
        if res[0] == FLOODED:
            raise TraceFormatError(f"{source}: its names collide in every hash table (a file built to be slow?)")
    _, (t_off, t_len, t_pid, t_tid), (s_off, s_len, d_off, d_len, f_line), (e_off, e_len, e_cnt), \
        (n_parent, n_frame, n_thread), (s_thread, s_node), counts = res
    n_lines, n_events = int(counts[0]), int(counts[1])
    ev_names = decode_spans(buf, e_off, e_len, lambda k: "an event name", rep)
    chosen = int(counts[9])
    if event and chosen < 0:
        raise TraceFormatError(f"{source}: no {event!r} events; its events: "
                               f"{', '.join(f'{n} ({c})' for n, c in zip(ev_names, e_cnt.tolist())) or 'none'}")
    if not s_thread.size:
        if not n_events:
            raise TraceFormatError(f"{source}: no perf script event line ('comm tid time: event:') in its "
                                   f"{n_lines} lines")
        raise TraceFormatError(f"{source}: none of its {n_events} events has a time (line {int(counts[3])}): "
                               f"nothing to show")
    rep.add("perf_event_time", int(counts[2]), f"line {int(counts[3])}",
            "an event line without a time: the event skipped")
    rep.add("perf_line", int(counts[4]), f"line {int(counts[5])}",
            "a line that is neither an event line, a frame nor a comment: skipped")
    rep.add("stack_deep", int(counts[6]), f"the event before line {int(counts[7])}",
            f"a call chain deeper than {lim.max_stack_depth} frames: its leaf side cut "
            f"(max_stack_depth= to allow more)")
    where = (lambda k: f"line {int(f_line[k])}")
    syms = decode_spans(buf, s_off, s_len, where, rep)
    dsos = decode_spans(buf, d_off, d_len, where, rep)
    names = [f"??? ({d})" if s == "[unknown]" else s for s, d in zip(syms, dsos)]
    comms = decode_spans(buf, t_off, t_len, lambda k: f"thread {k}", rep)
    frames = frame_table(names, lim, files=dsos)
    # lanes: threads in order of first appearance (their ids are)
    order = list(range(len(comms)))
    order, n_thread, s_thread = cap_lane_ids(order, n_thread, s_thread, lim, rep)  # past max_lanes_read: one lane
    tables = lane_tables(order, n_thread, n_parent, n_frame, s_thread, s_node)
    main_comm = {int(p): c for c, p, t in zip(comms, t_pid.tolist(), t_tid.tolist()) if p >= 0 and p == t}
    profiles = []
    for k, (sp, sf, ss, _) in zip(order, tables):
        if k == len(comms):
            profiles.append(StackProfile(thread_name=OTHER_LANES, stack_parent=sp, stack_frame=sf, sample_stack=ss))
            continue
        pid, tid = int(t_pid[k]), int(t_tid[k])
        if not ss.size:
            continue
        profiles.append(StackProfile(thread_name=comms[k], stack_parent=sp, stack_frame=sf, sample_stack=ss,
                                     process_name=main_comm.get(pid, comms[k]) if pid >= 0 else "",
                                     pid=max(pid, 0), tid=max(tid, 0)))
    others = {n: int(c) for i, (n, c) in enumerate(zip(ev_names, e_cnt.tolist())) if i != chosen}
    meta = {"perf_event": ev_names[chosen] if chosen >= 0 else "",
            "perf_events": {n: int(c) for n, c in zip(ev_names, e_cnt.tolist())},
            "skipped": {"other_events": sum(others.values())} if others else {}}
    trace = merged_trace(frames, profiles, unit="samples", source=source, fmt="perf-script", limits=lim,
                         input_bytes=n_input, kind_rules=kind_rules, meta=meta, warn=warn)
    return rep.apply(trace, source, warn)
