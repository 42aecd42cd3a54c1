"""Chrome's memory-infra dumps: counter tracks per allocator, and a `MemoryCapture` of what the
dumps hold.

Chrome's MemoryInfra (Chromium ``docs/memory-infra``, catapult's trace importer) writes one
event of phase ``v`` (``V``: a global dump) per process and dump, at every periodic trigger of
the ``disabled-by-default-memory-infra`` category::

    {"ph": "v", "name": "periodic_interval", "pid": 7, "ts": 12.5, "id": "0x0",
     "args": {"dumps": {"level_of_detail": "detailed",
                        "process_totals": {"private_footprint_bytes": "2611000", ...},
                        "allocators": {"malloc": {"attrs": {"size": {"type": "scalar", "units": "bytes",
                                                                      "value": "d4c5b"}, ...}}, ...},
                        "heaps_v2": {"version": 1,
                                     "maps": {"strings": [{"id": 1, "string": "main"}, ...],
                                              "nodes": [{"id": 2, "name_sid": 1, "parent": 0}, ...],
                                              "types": [{"id": 0, "name_sid": 3}, ...]},
                                     "allocators": {"malloc": {"counts": [...], "sizes": [...],
                                                               "types": [...], "nodes": [...]}}}}}}

Attribute values are hexadecimal strings.  ``heaps_v2`` (heap profiling, ``--memlog``) gives per
allocator the bytes and objects alive at the dump per stack (``nodes``: the stack's innermost
node; a node names its frame, ``name_sid``, and its caller, ``parent``); its ``maps`` persist
across one process's dumps (a later dump adds entries, catapult's ``ProfilingDictionaryReader``).

What is read:

- `dump_counters`: the counters of a `Trace` (`chrome.load_chrome`): per process, a counter
  ``memory-infra allocators`` with one series per top-level allocator (a name without ``/``),
  its ``attrs.size`` in bytes at each dump, exactly as written; and ``memory-infra totals``
  with the process totals (``private_footprint_bytes``, ...).
- `load_memory_dumps`: a `MemoryCapture` for the memory view.  With ``heaps_v2``, a site is a
  heap stack (per process and allocator); without, a top-level allocator of a process (its
  ``effective_size``, else its ``size``: effective sizes do not count memory twice).  A dump
  only says what was held at its moment, so a "range" is a site's bytes from one dump of its
  process to the next (sample and hold), the last one up to the trace's last timestamp; no
  per-allocation lifetimes are made up.  ``leaked_bytes`` is what the last dumps hold,
  ``n_allocations`` the objects alive in them (``counts``), ``peak_bytes`` the largest sum over
  the processes' latest dumps.

The scanner (`kernels.jsonscan`) gives these events no row (only counted); when the bytes hold
``"ph":"v"`` at all, the event array is scanned again with a row for every event
(`jsonscan.scan_samples`) and the dump events are read by Python's json (a few per second of
trace).  Bad dumps (wrong types, missing keys, values that are not hex, sizes past 2**53, maps
that loop) are left out with one `TraceWarning` naming the file, the event and the problem.
"""
from __future__ import annotations

import json
import math
import re
import warnings

import numpy as np

from ..errors import TraceFormatError, TraceWarning
from ..kernels import jsonevent as jev
from ..kernels import jsonscan as js

DUMP_PHASES = (ord("v"), ord("V"))
_DUMP_PH = re.compile(rb'"ph"\s*:\s*"[vV]"')
_EVENTS_KEY = re.compile(rb'"traceEvents"\s*:\s*\[')
_HEX = re.compile(r"[0-9a-fA-F]{1,16}")
ALLOCATORS_COUNTER = "memory-infra allocators"
TOTALS_COUNTER = "memory-infra totals"
UNIT = "B"
MAX_EXACT = 2 ** 53  # bytes and counts past it are not exact in float64: refused
#: the Chrome reader's repair (`chrome.REPAIRS`) for the dumps `dump_counters` leaves out
REPAIRS = {"memory_dump_bad": "memory-infra dump (ph v) with wrong types, missing keys, or values that are not hex "
                              "or out of range: left it (or its bad part) out"}


class _Problems:
    """The bad dumps of one file: reported once, the first named (`TraceWarning`)."""

    def __init__(self, source: str):
        self.source, self.first, self.count = source, "", 0

    def add(self, where: str, problem: str):
        if not self.count:
            self.first = f"{where}: {problem}"
        self.count += 1

    def report(self, warn: bool = True):
        if self.count and warn:
            more = f" (and {self.count - 1} more)" if self.count > 1 else ""
            warnings.warn(TraceWarning(f"{self.source}: memory dump left out: {self.first}{more}"), stacklevel=3)


def _hex_value(v, what: str) -> int:
    """A memory-infra value: a hex string (numbers are taken too); ValueError names the problem."""
    if isinstance(v, str):
        if not _HEX.fullmatch(v):
            raise ValueError(f"{what} {v[:40]!r} is not a hexadecimal number")
        n = int(v, 16)
    elif isinstance(v, (int, float)) and not isinstance(v, bool):
        if not (math.isfinite(v) and v == int(v)):
            raise ValueError(f"{what} {v!r} is not a whole number")
        n = int(v)
    else:
        raise ValueError(f"{what} is a {type(v).__name__}, not a number")
    if not 0 <= n <= MAX_EXACT:
        raise ValueError(f"{what} {n} is out of range (0 to 2**53)")
    return n


def _events_array_start(mv) -> int | None:
    """Where the event array's ``[`` is: the document itself, or the value of ``traceEvents``."""
    head = bytes(mv[:64]).lstrip(b"\xef\xbb\xbf \t\r\n")
    if head.startswith(b"["):
        return len(bytes(mv[:64])) - len(head)
    m = _EVENTS_KEY.search(mv)
    return m.end() - 1 if m else None


class Dump:
    """One dump event: ``pid``, ``ts`` (µs in the file's clock), ``dumps`` (its args' dict),
    ``where`` (the event, for messages)."""

    __slots__ = ("pid", "ts", "dumps", "where")

    def __init__(self, pid, ts, dumps, where):
        self.pid, self.ts, self.dumps, self.where = pid, ts, dumps, where


def scan_dumps(buf, source: str, lim, problems: _Problems, skip_counts=None) -> tuple:
    """(the dump events in file order, {pid: process name}, the last finite ts of any event or
    None).  Empty when the bytes hold no ``"ph":"v"`` (or ``skip_counts``, the scanner's counts
    per phase byte, counted none)."""
    if skip_counts is not None and not sum(int(skip_counts[p]) for p in DUMP_PHASES):
        return [], {}, None
    buf = np.frombuffer(buf, np.uint8) if not isinstance(buf, np.ndarray) else buf
    mv = memoryview(buf).cast("B")
    if _DUMP_PH.search(mv) is None:
        return [], {}, None
    start = _events_array_start(mv)
    if start is None:
        return [], {}, None
    cap = min(max(16, buf.shape[0] // 256), lim.max_events + 1)
    ii, ss, ff, n, _, st, ep = js.scan_samples(buf, start, cap, lim.max_events, lim.max_nesting)
    if st == jev.ERR_TOO_MANY:
        raise TraceFormatError(f"{source}: more than {lim.max_events} events (max_events= to allow more)")
    if st < 0:
        raise TraceFormatError(f"{source}: byte {ep}: invalid JSON in the event array (event #{n}): "
                               f"memory dumps not read")
    ph = ss[:n, jev.S_PH]
    dur = ff[:n, jev.F_DUR]
    ts = ff[:n, jev.F_TS] + np.where(np.isfinite(dur) & (dur > 0), dur, 0.0)  # where each event ends
    fin = np.isfinite(ts) & (np.abs(ts) <= lim.max_abs_time)
    t_last = float(ts[fin].max()) if fin.any() else None
    names = {}
    for r in np.flatnonzero(ph == ord("M")).tolist():
        off, ln = int(ii[r, jev.I_EV_OFF]), int(ss[r, jev.S_EV_LEN])
        if ln > 4096:
            continue
        try:
            ev = json.loads(bytes(buf[off:off + ln]))
        except (ValueError, RecursionError):
            continue
        if isinstance(ev, dict) and ev.get("name") == "process_name" and isinstance(ev.get("args"), dict) \
                and isinstance(ev["args"].get("name"), str) and isinstance(ev.get("pid"), int):
            names[ev["pid"]] = _process_label(ev["args"]["name"])
    dumps = []
    rows = np.flatnonzero((ph == DUMP_PHASES[0]) | (ph == DUMP_PHASES[1]))
    for r in rows.tolist():
        off, ln = int(ii[r, jev.I_EV_OFF]), int(ss[r, jev.S_EV_LEN])
        where = f"event #{int(ss[r, jev.S_ORD])} (byte {off})"
        try:
            ev = json.loads(bytes(buf[off:off + ln]))
        except (ValueError, RecursionError) as e:
            problems.add(where, f"Python's json cannot read it ({' '.join(str(e).split())[:80]})")
            continue
        d = _dump_of(ev, where, problems)
        if d is not None:
            dumps.append(d)
    return dumps, names, t_last


def _process_label(name: str) -> str:
    """A process's name as a label: a command line (``/usr/lib/chromium/chromium --type=utility ...``)
    by its ``--type``, else its program's name."""
    m = re.search(r"--type=(\S+)", name)
    if m:
        return m.group(1)[:60]
    return name.split(" --")[0].replace("\\", "/").rsplit("/", 1)[-1][:80] if name.startswith("/") else name[:80]


def _dump_of(ev, where: str, problems: _Problems) -> Dump | None:
    pid, ts = ev.get("pid"), ev.get("ts")
    args = ev.get("args")
    dumps = args.get("dumps") if isinstance(args, dict) else None
    if isinstance(dumps, str):  # some writers keep the dumps as a JSON text
        try:
            dumps = json.loads(dumps)
        except (ValueError, RecursionError):
            dumps = None
    if not isinstance(pid, int) or isinstance(pid, bool) or abs(pid) > MAX_EXACT:
        problems.add(where, "no integer pid (of at most 2**53)")
    elif not isinstance(ts, (int, float)) or isinstance(ts, bool) or not math.isfinite(ts) or abs(ts) > 1e21:
        problems.add(where, "no finite ts")
    elif not isinstance(dumps, dict):
        problems.add(where, "no args.dumps object")
    else:
        return Dump(pid, float(ts), dumps, where)
    return None


def _section(d: Dump, key: str, problems: _Problems) -> dict:
    """The dump's ``key`` object, {} when it has none; one that is no object is a problem, {}."""
    sec = d.dumps.get(key)
    if sec is None:
        return {}
    if not isinstance(sec, dict):
        problems.add(d.where, f"{key} is not an object")
        return {}
    return sec


def allocator_sizes(d: Dump, problems: _Problems, key: str = "size") -> dict:
    """{top-level allocator: bytes} of one dump (``key``: the attribute read; ``effective_size``
    falls back to ``size``)."""
    out = {}
    for name, a in _section(d, "allocators", problems).items():
        if "/" in name:
            continue
        attrs = a.get("attrs") if isinstance(a, dict) else None
        if not isinstance(attrs, dict):
            continue  # an allocator without attributes (a group): nothing to read
        v = attrs.get(key, attrs.get("size")) if key != "size" else attrs.get("size")
        if v is None:
            continue
        try:
            if not isinstance(v, dict):
                raise ValueError("attrs.size is not an object")
            out[name[:200]] = _hex_value(v.get("value"), f"allocators.{name[:60]}.attrs.{key}.value")
        except ValueError as e:
            problems.add(d.where, str(e))
    return out


def process_totals(d: Dump, problems: _Problems) -> dict:
    out = {}
    for k, v in _section(d, "process_totals", problems).items():
        if isinstance(v, bool):
            continue
        try:
            out[k[:200]] = _hex_value(v, f"process_totals.{k[:60]}")
        except ValueError as e:
            problems.add(d.where, str(e))
    return out


def dump_counters(buf, source: str, lim, skip_counts, t0: float, counters: dict, rep=None) -> dict:
    """``counters`` (the Trace's counter fields) with the memory dumps' counters appended (module
    docstring): times µs from ``t0``, values bytes exactly as the dumps hold them.  Bad dumps are
    the repair ``memory_dump_bad`` of ``rep`` (the Chrome reader's record), else a warning."""
    problems = _Problems(source)
    dumps, _, _ = scan_dumps(buf, source, lim, problems, skip_counts)
    samples = []  # (counter, pid, series, ts, value)
    for d in dumps:
        for name, v in allocator_sizes(d, problems).items():
            samples.append((ALLOCATORS_COUNTER, d.pid, name, d.ts, v))
        for name, v in process_totals(d, problems).items():
            samples.append((TOTALS_COUNTER, d.pid, name, d.ts, v))
    if rep is not None:
        rep.add("memory_dump_bad", problems.count, detail=problems.first)
    else:
        problems.report()
    if not samples:
        return counters
    have = {(counters["counter_names"][int(c)], int(p)) for c, p in
            zip(np.asarray(counters["series_counter"]).tolist(), np.asarray(counters["series_pid"]).tolist())}
    samples = [s for s in samples if (s[0], s[1]) not in have]  # a file saved by TraceVis3D has them already
    if not samples:
        return counters
    out = dict(counters)
    c_names = list(counters["counter_names"])
    s_names, s_units = list(counters["series_names"]), list(counters["series_units"])
    s_counter, s_pid = list(np.asarray(counters["series_counter"]).tolist()), \
        list(np.asarray(counters["series_pid"]).tolist())
    c_of, s_of = {}, {}
    ts, val, ser = [], [], []
    for cname, pid, sname, t, v in samples:
        c = c_of.get(cname)
        if c is None:
            c = c_of[cname] = len(c_names)
            c_names.append(cname)
        s = s_of.get((c, pid, sname))
        if s is None:
            s = s_of[(c, pid, sname)] = len(s_names)
            s_names.append(sname)
            s_units.append(UNIT)
            s_counter.append(c)
            s_pid.append(pid)
        ts.append(t - t0)
        val.append(float(v))
        ser.append(s)
    ts, val, ser = np.array(ts, np.float64), np.array(val, np.float64), np.array(ser, np.int32)
    order = np.lexsort((np.arange(ts.size), ts, ser))
    out["counter_names"] = c_names
    out["series_names"], out["series_units"] = s_names, s_units
    out["series_counter"] = np.array(s_counter, np.int32)
    out["series_pid"] = np.array(s_pid, np.int64)
    out["counter_ts"] = np.concatenate([counters["counter_ts"], ts[order]])
    out["counter_value"] = np.concatenate([counters["counter_value"], val[order]])
    out["counter_series"] = np.concatenate([counters["counter_series"], ser[order]])
    return out


def _update_maps(pid_maps: dict, heaps: dict, problems: _Problems, where: str) -> None:
    """Add a dump's ``maps`` (strings, nodes) to its process's.  Chrome gives each id one entry
    (a later dump only adds); an entry that changes an id an earlier dump defined is a problem and
    left out (the first kept), so each heap node's stack, once resolved, stays
    (`chrome_heap_stacks.HeapStacks`: a changed root would make every stack through it resolve
    again, dumps × depth)."""
    maps = heaps.get("maps", {})
    if not isinstance(maps, dict):
        problems.add(where, "heaps_v2.maps is not an object")
        return
    for key, fields in (("strings", ("string",)), ("nodes", ("name_sid",))):
        items = maps.get(key, [])
        if not isinstance(items, list):
            problems.add(where, f"heaps_v2.maps.{key} is not a list")
            continue
        table = pid_maps[key]
        for it in items:
            if not isinstance(it, dict) or not isinstance(it.get("id"), int) or any(f not in it for f in fields):
                problems.add(where, f"heaps_v2.maps.{key} holds an entry without id or {fields[0]}")
                continue
            if key == "strings":
                s = it["string"]
                value = s[:4096] if isinstance(s, str) else str(s)[:200]
            else:
                parent = it.get("parent")
                value = (it["name_sid"], parent if isinstance(parent, int) else None)
            old = table.setdefault(it["id"], value)
            if old != value:
                problems.add(where, f"heaps_v2.maps.{key} changes id {it['id']} an earlier dump defined: the first "
                                    f"definition kept")


def _heap_entries(d: Dump, pid_maps: dict, lim, problems: _Problems) -> list:
    """[(allocator, node, bytes, objects)] of one dump's heaps_v2 (summed over the object types)."""
    heaps = d.dumps["heaps_v2"]
    _update_maps(pid_maps, heaps, problems, d.where)
    al = heaps.get("allocators", {})
    if not isinstance(al, dict):
        problems.add(d.where, "heaps_v2.allocators is not an object")
        return []
    out = []
    for name, cols in al.items():
        if not isinstance(cols, dict):
            problems.add(d.where, f"heaps_v2.allocators.{name[:60]} is not an object")
            continue
        nodes, sizes, counts = cols.get("nodes"), cols.get("sizes"), cols.get("counts", None)
        if not isinstance(nodes, list) or not isinstance(sizes, list) or len(nodes) != len(sizes) or (
                counts is not None and (not isinstance(counts, list) or len(counts) != len(sizes))):
            problems.add(d.where, f"heaps_v2.allocators.{name[:60]}: nodes, sizes and counts are not lists of "
                                  f"one length")
            continue
        per_node: dict = {}
        for k, (node, size) in enumerate(zip(nodes, sizes)):
            try:
                b = _hex_value(size, f"heaps_v2.allocators.{name[:60]}.sizes[{k}]")
                c = _hex_value(counts[k], f"heaps_v2.allocators.{name[:60]}.counts[{k}]") if counts else 0
            except ValueError as e:
                problems.add(d.where, str(e))
                continue
            if not isinstance(node, int) or isinstance(node, bool):
                problems.add(d.where, f"heaps_v2.allocators.{name[:60]}.nodes[{k}] is not an integer")
                continue
            got = per_node.get(node, (0, 0))
            per_node[node] = (got[0] + b, got[1] + c)
        out.extend((name[:200], node, b, c) for node, (b, c) in per_node.items())
    return out


def load_memory_dumps(data, source: str = "<bytes>", limits=None, warn: bool = True):
    """The `MemoryCapture` of a Chrome trace's memory-infra dumps (module docstring); a trace
    without dumps is refused in one line.  The Chrome row's memory reader (`io.formats`,
    `io.load_memory`)."""
    from .limits import resolve_limits
    from .memray_capture import MemoryCapture

    lim = resolve_limits(limits)

    problems = _Problems(source)
    dumps, pnames, t_last = scan_dumps(data, source, lim, problems)
    entries = []  # (dump, site key, thread key, stack: a node of `stacks`, bytes, objects)
    from .chrome_heap_stacks import HeapStacks

    stacks = HeapStacks(lim)
    if any(isinstance(d.dumps.get("heaps_v2"), dict) for d in dumps):
        maps_of: dict = {}
        for d in dumps:
            if not isinstance(d.dumps.get("heaps_v2"), dict):
                continue
            pm = maps_of.setdefault(d.pid, {"strings": {}, "nodes": {}, "memo": {}})
            rows = _heap_entries(d, pm, lim, problems)
            for alloc, node, b, c in rows:
                top = stacks.resolve(pm, node, problems, d.where)
                if top is not None:
                    entries.append((d, (d.pid, alloc, top), (d.pid, alloc), top, b, c))
            if not rows:
                entries.append((d, None, None, -1, 0, 0))  # a dump that held nothing still counts
    heap_mode = any(e[1] is not None for e in entries)
    if not heap_mode:  # no heap dumps that could be read: the allocators' sizes
        entries = []
        stacks = HeapStacks(lim)
        for d in dumps:
            sizes = allocator_sizes(d, problems, "effective_size")
            for alloc, b in sizes.items():
                entries.append((d, (d.pid, alloc), (d.pid, ""), stacks.node(-1, alloc), b, 0))
    problems.report(warn)
    if not any(e[1] is not None for e in entries):
        what = "no memory-infra dumps (no \"ph\": \"v\" events)" if not dumps else \
            f"{len(dumps)} memory-infra dumps, none with allocators or heaps_v2 that could be read"
        raise TraceFormatError(f"{source}: {what}: record with the disabled-by-default-memory-infra category "
                               f"(docs/memory.md)")
    return _capture(MemoryCapture, source, entries, stacks, pnames, t_last, heap_mode, len(dumps))


def _capture(MemoryCapture, source, entries, stacks, pnames, t_last, heap_mode: bool, n_dumps: int):
    """Sample-and-hold ranges from the dumps' entries, and the capture's figures."""
    # each process's dumps that hold entries, in time order; a range lasts to the process's next one
    by_pid: dict = {}
    for e in entries:
        by_pid.setdefault(e[0].pid, {})[id(e[0])] = e[0]
    t0 = min(d.ts for ds in by_pid.values() for d in ds.values())
    t_end = max([d.ts for ds in by_pid.values() for d in ds.values()] + ([t_last] if t_last is not None else []))
    next_t, last_of = {}, set()
    for ds in by_pid.values():
        order = sorted(ds.values(), key=lambda d: d.ts)
        for a, b in zip(order, order[1:] + [None]):
            next_t[id(a)] = b.ts if b is not None else t_end
        last_of.add(id(order[-1]))
    sites, threads = {}, {}
    site_node, site_thread = [], []
    r_site, r_start, r_end, r_size, r_count, r_leak = [], [], [], [], [], []
    for d, skey, tkey, top, b, c in entries:
        if skey is None or b <= 0:
            continue
        s = sites.get(skey)
        if s is None:
            s = sites[skey] = len(site_node)
            site_node.append(top)
            site_thread.append(threads.setdefault(tkey, len(threads)))
        r_site.append(s)
        r_start.append((d.ts - t0) / 1000.0)
        r_end.append((next_t[id(d)] - t0) / 1000.0)
        r_size.append(b)
        r_count.append(c)
        r_leak.append(id(d) in last_of)
    n = len(r_site)
    r_site = np.array(r_site, np.int32)
    r_size = np.array(r_size, np.int64)
    r_start, r_end = np.array(r_start, np.float64), np.array(r_end, np.float64)
    r_leak = np.array(r_leak, bool)
    r_count = np.array(r_count, np.int64)
    # the heap: at every dump time, the processes' latest dumps summed
    held_at: dict = {}
    for d, skey, _, _, b, _ in entries:
        held_at[id(d)] = held_at.get(id(d), 0) + (b if skey is not None else 0)
    peak, hwm, cur = 0, t0, {}
    for d in sorted({id(e[0]): e[0] for e in entries}.values(), key=lambda d: d.ts):
        cur[d.pid] = held_at[id(d)]
        if sum(cur.values()) > peak:
            peak, hwm = sum(cur.values()), d.ts
    site_frames, frame_names = stacks.site_stacks(site_node)
    n_sites = len(site_node)
    t_names = []
    for pid, alloc in threads:
        proc = f"{pnames.get(pid, 'process')} {pid}"
        t_names.append(f"{proc} · {alloc}" if alloc else proc)
    several = len(threads) > 1
    site_function = []
    for s in range(n_sites):
        fr = site_frames.frames(s, 1)
        name = frame_names[fr[0]] if fr else "<no frames>"
        site_function.append(f"{name} · {t_names[site_thread[s]]}" if several or not heap_mode else name)
    site_start = np.full(n_sites, np.inf)
    np.minimum.at(site_start, r_site, r_start)
    site_end = np.zeros(n_sites)
    np.maximum.at(site_end, r_site, r_end)
    site_bytes = np.zeros(n_sites, np.int64)
    np.maximum.at(site_bytes, r_site, r_size)
    what = "heap stacks (heaps_v2)" if heap_mode else "allocators (effective size)"
    prog = source.replace("\\", "/").rsplit("/", 1)[-1]
    meta = {
        "reader": "chrome memory-infra", "memray_version": "", "running": True, "origin_us": t0,
        "dumps": n_dumps, "sites_are": what, "site_noun": "heap stack" if heap_mode else "allocator",
        "figure_title": f"{prog} · memory-infra dumps over time · peak {_fmt(peak)} · {n_dumps} dumps · "
                        f"held at the last dumps {_fmt(int(r_size[r_leak].sum()))}",
        "thickness_note": f"band thickness: bytes of {what} at each dump, held until the next (the dumps hold no "
                          f"allocation lifetimes)",
        "leak_note": "red cap: held at each process's last dump",
        "activity_note": "full colour: the column of a dump; pale: held since it; depth: dumps per second",
    }
    return MemoryCapture(
        source=source, peak_bytes=int(peak), n_allocations=int(r_count[r_leak].sum()),
        leaked_bytes=int(r_size[r_leak].sum()), duration_ms=(t_end - t0) / 1000.0, start_epoch_ms=t0 / 1000.0,
        command_line="", pid=int(next(iter(by_pid))), python_allocator="", native=heap_mode,
        trace_python_allocators=False, n_records=n,
        range_address=np.zeros(n, np.uint64), range_size=r_size, range_start=r_start, range_end=r_end,
        range_leaked=r_leak, range_stack=r_site.copy(), range_thread=np.array(site_thread, np.int32)[r_site]
        if n else np.zeros(0, np.int32), range_allocator=np.zeros(n, np.int8), range_record=np.arange(n),
        range_freed_by=np.full(n, -1, np.int64), stack_frames=site_frames, stack_site=np.arange(n_sites,
                                                                                                 dtype=np.int32),
        frame_function=frame_names, frame_file=[""] * len(frame_names),
        frame_line=np.zeros(len(frame_names), np.int32), site_function=site_function, site_file=[""] * n_sites,
        site_line=np.zeros(n_sites, np.int32), site_start=np.where(np.isfinite(site_start), site_start, 0.0),
        site_end=site_end, site_bytes=site_bytes, site_count=np.bincount(r_site, minlength=n_sites).astype(np.int64),
        thread_ids=np.arange(len(threads), dtype=np.int64), thread_names=t_names,
        snap_ms=np.zeros(0), snap_rss=np.zeros(0, np.int64), snap_heap=np.zeros(0, np.int64),
        hwm_ms=(hwm - t0) / 1000.0, clock="memory-infra dumps", meta=meta)


def _fmt(b: float) -> str:
    for unit, f in (("GB", 1e9), ("MB", 1e6), ("kB", 1e3)):
        if abs(b) >= f:
            return f"{b / f:.3g} {unit}"
    return f"{int(b)} B"
