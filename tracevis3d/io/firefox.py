"""Firefox Profiler files: the processed format (profiler.firefox.com, samply), the raw Gecko
format (``MOZ_PROFILER_SHUTDOWN``, the profiler's raw upload) and Firefox DevTools' older
performance-panel export (a Gecko profile under ``profile``, which speedscope's ``firefox.ts``
reads).

Both formats hold, per thread, a stack table (``prefix``: the stack under it, ``frame``), a
frame table, samples (a stack and a time in ms each) and markers:

- **Gecko** (``docs-developer/gecko-profile-format.md`` of the Firefox Profiler): each table is
  ``{"schema": {column: index}, "data": [rows]}``; a frame is a ``location`` string, "name
  (file:line:col)" for a script, a symbol or an address for native code; strings are per
  thread (``stringTable``); times are ms since the (sub)profile's ``meta.startTime``; the
  content processes are sub-profiles under ``processes`` (recursively; older files write them,
  and threads, as JSON strings).
- **processed** (``meta.preprocessedProfileVersion``; its ``src/types/profile.ts``): columns
  as lists; ``stackTable.prefix`` (or ``prefixOffset``, version 66: the parent is that many
  rows back), ``frameTable.func`` → ``funcTable`` (``name``, ``fileName`` or ``source`` →
  ``sources.filename`` since version 58, ``lineNumber``, ``isJS``); strings in the thread's
  ``stringArray`` (``stringTable`` in the oldest) or ``shared.stringArray`` (version 56); the
  tables in each thread or in ``shared`` (version 60); samples' ``time`` or ``timeDeltas``
  (version 50), in ms since ``meta.startTime``.

Every thread (of every process) is its own lane, named as the file names it ("GeckoMain",
"DOM Worker", ...) with its process's name and pid.  Its samples give calls on the clock
(`stacks.timed_trace`, speedscope's Time Order: each sample lasts until the next, the last one
sampling interval, ``meta.interval``).  Frames are functions: a processed file's ``funcTable``
entries (name, file, line), a Gecko location parsed into name, file and line (told apart by the
whole location, as speedscope does).  Markers become instants on their thread, at their start
(an interval's end marker at its end).  A thread list longer than ``limits.max_lanes_read`` is read
for its max_lanes_read threads of the most samples; the others are left out unread (each thread's
tables cost their own reading), a repair ``lanes_capped`` that names the cap and counts them.

JavaScript only (``js_only=``): speedscope keeps only the script frames of a Firefox profile
(``firefox.ts``: locations "name (file...)", minus ``resource:`` and ``self-hosted`` internals);
the Firefox Profiler shows every frame unless its "JavaScript" filter is set.  The default
follows each: DevTools exports (what speedscope reads) keep script frames only, Gecko and
processed profiles keep every frame; ``js_only=True``/``False`` chooses.  Hidden frames are
taken out of the stacks (`kernels.stacklists.nearest_kept`): their callees hang from the
nearest kept caller.  For a processed file "script" is ``funcTable.isJS``.
"""
from __future__ import annotations

from operator import itemgetter

import numpy as np

from ..filenumbers import is_digits, read_int, read_line
from ..model import TraceFormatError
from .limits import resolve_limits
from .native_frames import is_address, libs_of, native_location, resource_names
from .profile_json import (KeyedFrames, NumberColumn, add_instants, clean_name, fail, float_column, int_column, is_list,
                           kind_of, need_dict, need_list, parse_json, parse_json_columns)
from .lanes import lanes_to_read, note_repair
from .stacks import StackProfile, timed_trace

__all__ = ["load_firefox", "split_location"]

#: a thread or process nested as JSON text is parsed too, at most this many levels down
_MAX_PROCESS_NESTING = 64
#: the head in which a processed profile's version is looked for (as the format's sniffer does)
_HEAD_BYTES = 1 << 20


class _Lane:
    """One thread read from the file: its stack table over the file's frames, its samples and
    its markers."""

    __slots__ = ("name", "process_name", "pid", "tid", "parent", "frame", "script", "stack", "time_us",
                 "marker_ts", "marker_names", "marker_name", "interval_us")

    def __init__(self):
        self.name = ""
        self.process_name = ""
        self.pid = 0
        self.tid = 0
        self.parent = self.frame = self.stack = self.time_us = np.zeros(0, np.int64)
        self.script = np.zeros(0, bool)
        self.marker_ts = np.zeros(0)
        self.marker_names: list = []  # the distinct names
        self.marker_name = np.zeros(0, np.int64)  # each marker's, into marker_names
        self.interval_us = None


def load_firefox(data, *, source: str = "<firefox>", limits=None, kind_rules=None, warn: bool = True,
                 js_only=None, **_options):
    """A Firefox Profiler (processed), Gecko or DevTools profile's bytes → `Trace` (module
    docstring).  ``js_only``: keep script frames only (None: speedscope's choice for DevTools
    exports, every frame otherwise)."""
    lim = resolve_limits(limits)
    # a processed profile is columns of numbers: those are read from the bytes, not by orjson
    processed = b'"preprocessedProfileVersion"' in bytes(memoryview(data)[:_HEAD_BYTES])
    doc = need_dict((parse_json_columns if processed else parse_json)(data, source), source, "the document")
    inner = doc.get("profile")
    frames = KeyedFrames(lim.max_name_chars)
    left_out: list = []  # (threads, left out, their samples) of each thread list past max_lanes_read
    if isinstance(inner, dict) and ("threads" in inner or "meta" in inner):
        kind, fmt = "DevTools export", "gecko"
        lanes, meta_in = _gecko_lanes(inner, "profile.", frames, source, lim, left_out)
    elif isinstance(doc.get("meta"), dict) and "preprocessedProfileVersion" in doc["meta"] or _columnar(doc):
        kind, fmt = "processed", "firefox"
        lanes, meta_in = _processed_lanes(doc, frames, source, lim, left_out)
    elif "threads" in doc or "processes" in doc:
        kind, fmt = "Gecko", "gecko"
        lanes, meta_in = _gecko_lanes(doc, "", frames, source, lim, left_out)
    else:
        raise fail(source, "the document", "no 'threads': not a Firefox profile (Gecko, processed or DevTools "
                                           "export)")
    js = (kind == "DevTools export") if js_only is None else bool(js_only)
    lanes = [ln for ln in lanes if ln.stack.size or ln.marker_ts.size]
    if not lanes:
        raise fail(source, "threads", "no thread has samples or markers: nothing to show")
    profiles = []
    for ln in lanes:
        parent, stack = ln.parent, ln.stack
        if js:
            from ..kernels.stacklists import nearest_kept

            up = nearest_kept(parent, ln.script)
            n = parent.size
            ok = (parent >= 0) & (parent < n)
            parent = np.where(ok, up[np.clip(parent, 0, max(n - 1, 0))] if n else parent, -1)
            stack = np.where(stack >= 0, up[np.maximum(stack, 0)] if n else -1, -1)
        profiles.append(StackProfile(
            clean_name(ln.name, lim.max_name_chars) or f"thread {ln.tid}", parent, ln.frame, stack,
            sample_time=ln.time_us, process_name=clean_name(ln.process_name, lim.max_name_chars), pid=ln.pid,
            tid=ln.tid, interval_us=ln.interval_us))
    meta = {"firefox_kind": kind, "js_only": js, **meta_in}
    trace = timed_trace(frames, profiles, source=source, fmt=fmt, limits=lim, input_bytes=len(data),
                        kind_rules=kind_rules, meta=meta, warn=warn, cat="js" if js else "sample")
    names: dict = {}
    ts, nid, th = [], [], []
    for t, ln in enumerate(lanes):
        if ln.marker_ts.size:
            ids = np.array([names.setdefault(clean_name(s, lim.max_name_chars), len(names)) for s in ln.marker_names],
                           np.int64)  # the distinct names
            ts.append(ln.marker_ts)
            nid.append(ids[ln.marker_name])
            th.append(np.full(ln.marker_ts.size, t, np.int64))
    if ts:
        trace = add_instants(trace, np.concatenate(ts), list(names), np.concatenate(nid), np.concatenate(th))
    if left_out:
        note_repair(trace, "lanes_capped", sum(k for _, k, _ in left_out), "threads",
                    f"more than {lim.max_lanes_read} threads ({left_out[0][0]}; max_lanes_read=): the "
                    f"{sum(k for _, k, _ in left_out)} of the fewest samples ({sum(s for _, _, s in left_out)} "
                    f"samples) left out unread", source, warn)
    return trace


def _threads_read(threads: list, lim, left_out: list) -> list:
    """The indices of ``threads`` to read (`lanes.lanes_to_read`: past max_lanes_read, those of the
    most samples; 20,000 threads read took 6 s)."""
    return lanes_to_read(threads, _thread_samples, lim, left_out)


def _thread_samples(th) -> float:
    """How many samples a thread holds, from its table's length (a thread nested as text or
    holding a process's profile: infinite, always read)."""
    if not isinstance(th, dict) or "threads" in th:
        return np.inf
    s = th.get("samples")
    if not isinstance(s, dict):
        return 0.0
    for col in (s.get("data"), s.get("stack")):
        if is_list(col):
            return float(len(col))
    n = s.get("length")
    return float(n) if isinstance(n, int) and not isinstance(n, bool) and n >= 0 else 0.0


# ----------------------------------------------------------------------------- shared pieces
def _columnar(doc: dict) -> bool:
    """Threads whose stack table is columns (a processed profile from before its version was
    written in ``meta``), not a Gecko ``schema``/``data`` table."""
    ths = doc.get("threads")
    th = ths[0] if isinstance(ths, list) and ths else None
    st = th.get("stackTable") if isinstance(th, dict) else None
    return isinstance(st, dict) and is_list(st.get("frame")) and "schema" not in st


def _lane_of(th: dict, interval_us) -> _Lane:
    """A lane named as the thread ``th`` names itself: its name, its process's name (else the
    process type), its pid and tid (`_id`), and the sampling interval."""
    ln = _Lane()
    ln.name = th.get("name") if isinstance(th.get("name"), str) else ""
    pn = th.get("processName")
    ln.process_name = pn if isinstance(pn, str) else (th.get("processType") if isinstance(th.get("processType"),
                                                                                           str) else "")
    ln.pid, ln.tid = _id(th.get("pid")), _id(th.get("tid"))
    ln.interval_us = interval_us
    return ln


def _id(v) -> int:
    """A pid or tid as an integer: a number as it is, a numeric string read, other strings
    hashed (processed profiles write pids as strings; merged ones invent them)."""
    if isinstance(v, bool):
        return int(v)
    if isinstance(v, int):
        return v % (1 << 62)
    if isinstance(v, float) and np.isfinite(v):
        return int(v) % (1 << 62)
    if isinstance(v, str):
        s = v.strip()
        k = read_int(s, 0)  # ASCII digits that fit int64 (not "²", not 5,000 digits)
        if k is not None:
            return k
        import zlib

        return zlib.crc32(s.encode("utf-8", "replace"))
    return 0


def _interval_us(meta: dict) -> float | None:
    v = meta.get("interval")
    if isinstance(v, (int, float)) and not isinstance(v, bool) and np.isfinite(v) and 0 < v < 1e9:
        return float(v) * 1e3
    return None


def _ms_to_us(t_ms: np.ndarray, offset_ms: float, source: str, where: str, lim) -> np.ndarray:
    t = (t_ms + offset_ms) * 1e3
    bad = ~np.isfinite(t) | (np.abs(t) > lim.max_abs_time)
    if bad.any():
        k = int(np.argmax(bad))
        raise fail(source, f"{where}[{k}]", f"time {t_ms[k]:g} ms is past the limit of {lim.max_abs_time:g} µs "
                                            f"(max_abs_time=)")
    return t


def split_location(loc: str):
    """(name, file, line, column) of a Gecko frame location "name (file:line:col)", as
    speedscope's ``firefox.ts`` reads it (its pattern ``(.*)\\s+\\((.*?)(?::(\\d+))?(?::(\\d+))?\\)$``:
    the name up to the last "(" that follows white space, the file up to one or two trailing
    ":number"s), None for a location that is not of that form (a native symbol or address, a
    label); line and column are None when absent.  A trailing "[sourceIndex]" (Gecko version
    32) is dropped first.  Linear in the length: a pattern like speedscope's backtracks
    quadratically over a long hostile name."""
    if loc.endswith("]"):
        b = loc.rfind("[")
        if b > 0 and is_digits(loc[b + 1:-1]):
            loc = loc[:b]
    if not loc.endswith(")"):
        return None
    p = len(loc) - 1
    while True:
        p = loc.rfind("(", 0, p)
        if p <= 0:
            return None
        if loc[p - 1].isspace():
            break
    inside = loc[p + 1:-1]
    file, line, col = inside, None, None
    a = inside.rfind(":")
    if a >= 0 and is_digits(inside[a + 1:]):  # ASCII digits; a number past int32 is no line (None)
        c = inside.rfind(":", 0, a)
        if c >= 0 and is_digits(inside[c + 1:a]):
            file, line, col = inside[:c], read_line(inside[c + 1:a], None), read_line(inside[a + 1:], None)
        else:
            file, line = inside[:a], read_line(inside[a + 1:], None)
    return loc[:p - 1], file, line, col


def _location_frame(loc: str, frames: KeyedFrames, libs=None) -> tuple:
    """(frame id, is a script frame) of a Gecko location string (its key).  A script frame is a
    location of speedscope's form whose file is not Firefox's own (``resource:``,
    ``self-hosted``); its name, file and line are split out where it has a line (or where it
    is a script frame), else the location is the name.  An unsymbolicated address inside one of
    ``libs`` (`native_frames.libs_of`) is named "library+0xoffset", the library its file (its colour)."""
    native = native_location(loc, libs)
    if native is not None:
        k = frames.by_key.get(("lib", native[0]))
        if k is None:
            k = frames.add_keyed(("lib", native[0]), native[0], native[1], -1)
        return k, False
    sp = split_location(loc)
    script = sp is not None and not (sp[1].startswith("resource:") or sp[1] == "self-hosted"
                                     or sp[1].startswith("self-hosted:"))
    k = frames.by_key.get(("loc", loc))
    if k is None:
        if sp is not None and (sp[2] is not None or script):
            k = frames.add_keyed(("loc", loc), sp[0] or loc, sp[1], -1 if sp[2] is None else sp[2])
        else:
            k = frames.add_keyed(("loc", loc), loc)
    return k, script


def _string_at(strings: list, i, source: str, where: str) -> str:
    if isinstance(i, bool) or not isinstance(i, int) or not 0 <= i < len(strings):
        raise fail(source, where, f"string index {i!r} is out of the string table (0..{len(strings) - 1})")
    s = strings[i]
    return s if isinstance(s, str) else ("" if s is None else str(s))


def _markers_of(times_ms: np.ndarray, name_idx: np.ndarray, strings: list, offset_ms: float, lim) -> tuple:
    """(times in µs, distinct names, each marker's index into them) of the markers with a usable
    time and name (others are left out)."""
    ok = np.isfinite(times_ms) & (np.abs((times_ms + offset_ms) * 1e3) <= lim.max_abs_time) & \
        (name_idx >= 0) & (name_idx < len(strings))
    t = (times_ms[ok] + offset_ms) * 1e3
    uniq, inv = np.unique(name_idx[ok], return_inverse=True)
    table = [strings[int(i)] if isinstance(strings[int(i)], str) else str(strings[int(i)]) for i in uniq]
    return t, table, inv.astype(np.int64)


# ----------------------------------------------------------------------------- Gecko
def _schema_table(tbl, source: str, where: str) -> tuple:
    """(schema: column name → index, rows) of a Gecko ``{"schema", "data"}`` table."""
    need_dict(tbl, source, where)
    schema = need_dict(tbl.get("schema"), source, f"{where}.schema")
    rows = need_list(tbl.get("data"), source, f"{where}.data")
    cols = {}
    for k, v in schema.items():
        if isinstance(v, int) and not isinstance(v, bool) and 0 <= v < 64:
            cols[k] = v
    return cols, rows


def _row_column(rows: list, col: int, source: str, where: str, name: str) -> list:
    """Column ``col`` of every row (a C-level pass); a row that is not a list or is too short is
    an error naming it."""
    try:
        return list(map(itemgetter(col), rows))
    except (IndexError, TypeError, KeyError):
        for i, r in enumerate(rows):
            if not isinstance(r, list):
                raise fail(source, f"{where}.data[{i}]", f"expected a row (a list), got {kind_of(r)}") from None
            if len(r) <= col:
                raise fail(source, f"{where}.data[{i}]", f"has no {name} (column {col})") from None
        raise fail(source, where, f"cannot read its {name} column") from None


def _need_col(cols: dict, name: str, source: str, where: str) -> int:
    if name not in cols:
        raise fail(source, f"{where}.schema", f"has no {name!r} column")
    return cols[name]


def _parse_nested(v, source: str, where: str):
    """A thread or sub-profile written as JSON text (older Gecko files) parsed."""
    if isinstance(v, str):
        from .profile_json import parse_json as _pj

        try:
            return _pj(v.encode("utf-8", "surrogatepass"), source)
        except TraceFormatError as e:
            raise fail(source, where, f"its JSON text does not parse ({str(e).split(': ', 1)[-1]})") from None
    return v


def _gecko_lanes(root: dict, path: str, frames: KeyedFrames, source: str, lim, left_out: list) -> tuple:
    """The lanes of a Gecko profile and of its sub-profiles (``processes``), each sub-profile's
    times moved onto the root's clock by the difference of their ``meta.startTime``."""
    meta = need_dict(root.get("meta", {}), source, f"{path}meta")
    t0 = meta.get("startTime")
    t0 = float(t0) if isinstance(t0, (int, float)) and not isinstance(t0, bool) and np.isfinite(t0) else 0.0
    interval = _interval_us(meta)
    lanes = []
    todo = [(root, path, 0)]
    while todo:
        prof, where, level = todo.pop(0)
        pmeta = prof.get("meta") if isinstance(prof.get("meta"), dict) else {}
        libs = libs_of(prof)
        st = pmeta.get("startTime")
        offset = (float(st) - t0) if isinstance(st, (int, float)) and not isinstance(st, bool) and \
            np.isfinite(st) and abs(float(st) - t0) < 1e12 else 0.0
        threads = need_list(prof.get("threads", []), source, f"{where}threads")
        for i in _threads_read(threads, lim, left_out):
            th = threads[i]
            w = f"{where}threads[{i}]"
            th = need_dict(_parse_nested(th, source, w), source, w)
            if "threads" in th and "meta" in th:  # the oldest files: a content process's profile as a thread
                if level + 1 > _MAX_PROCESS_NESTING:
                    raise fail(source, w, f"profiles nested more than {_MAX_PROCESS_NESTING} deep")
                todo.append((th, w + ".", level + 1))
                continue
            lanes.append(_gecko_thread(th, w, offset, frames, source, lim, interval or _interval_us(pmeta), libs))
        subs = need_list(prof.get("processes", []), source, f"{where}processes")
        for j, sub in enumerate(subs):
            w = f"{where}processes[{j}]"
            if level + 1 > _MAX_PROCESS_NESTING:
                raise fail(source, w, f"processes nested more than {_MAX_PROCESS_NESTING} deep")
            todo.append((need_dict(_parse_nested(sub, source, w), source, w), w + ".", level + 1))
    m = {"interval_ms": interval / 1e3 if interval else None, "start_time_ms": t0,
         "gecko_version": meta.get("version") if isinstance(meta.get("version"), int) else None,
         "product": meta.get("product") if isinstance(meta.get("product"), str) else ""}
    return lanes, m


def _gecko_thread(th: dict, where: str, offset_ms: float, frames: KeyedFrames, source: str, lim,
                  interval_us, libs=None) -> _Lane:
    ln = _lane_of(th, interval_us)
    strings = need_list(th.get("stringTable", []), source, f"{where}.stringTable")
    if th.get("stackTable") is None and th.get("frameTable") is None:  # a thread of markers only
        empty = {"schema": {"prefix": 0, "frame": 1, "location": 0}, "data": []}
        th = dict(th, stackTable=empty, frameTable=empty)
    # stacks
    scols, srows = _schema_table(th.get("stackTable"), source, f"{where}.stackTable")
    fcols, frows = _schema_table(th.get("frameTable"), source, f"{where}.frameTable")
    pi = _need_col(scols, "prefix", source, f"{where}.stackTable")
    fi = _need_col(scols, "frame", source, f"{where}.stackTable")
    n_st = len(srows)
    sw = f"{where}.stackTable.data"
    prefix = int_column(_row_column(srows, pi, source, f"{where}.stackTable", "prefix"), source, sw,
                        lo=-1, hi=n_st, null=-1, field=f"[{pi}]")
    sframe = int_column(_row_column(srows, fi, source, f"{where}.stackTable", "frame"), source, sw,
                        lo=0, hi=len(frows), field=f"[{fi}]")
    # frames: one location string each; only those the stacks use (a loop over the distinct frames)
    li = _need_col(fcols, "location", source, f"{where}.frameTable")
    locs = _row_column(frows, li, source, f"{where}.frameTable", "location")
    frame_id = np.full(len(locs), -1, np.int64)
    frame_script = np.zeros(len(locs), bool)
    for k in np.flatnonzero(np.bincount(sframe, minlength=len(locs))).tolist():
        loc = _string_at(strings, locs[k], source, f"{where}.frameTable.data[{k}][{li}]")
        frame_id[k], frame_script[k] = _location_frame(loc, frames, libs)
    ln.parent = prefix
    ln.frame = frame_id[sframe] if sframe.size else np.zeros(0, np.int64)
    ln.script = frame_script[sframe] if sframe.size else np.zeros(0, bool)
    # samples
    samples = th.get("samples")
    if samples is not None:
        ccols, crows = _schema_table(samples, source, f"{where}.samples")
        ki = _need_col(ccols, "stack", source, f"{where}.samples")
        ti = _need_col(ccols, "time", source, f"{where}.samples")
        cw = f"{where}.samples.data"
        ln.stack = int_column(_row_column(crows, ki, source, f"{where}.samples", "stack"), source, cw,
                              lo=-1, hi=n_st, null=-1, field=f"[{ki}]")
        t_ms = float_column(_row_column(crows, ti, source, f"{where}.samples", "time"), source, cw, field=f"[{ti}]")
        ln.time_us = _ms_to_us(t_ms, offset_ms, source, cw, lim)
    # markers
    markers = th.get("markers")
    if isinstance(markers, dict) and isinstance(markers.get("data"), list) and markers["data"]:
        mcols, mrows = _schema_table(markers, source, f"{where}.markers")
        ln.marker_ts, ln.marker_names, ln.marker_name = _gecko_markers(mcols, mrows, strings, offset_ms, lim)
    return ln


def _gecko_markers(cols: dict, rows: list, strings: list, offset_ms: float, lim) -> tuple:
    """Markers of a Gecko thread: (times µs, distinct names, each marker's name); rows that
    cannot be read are left out."""
    ni = cols.get("name")
    ti = cols.get("startTime", cols.get("time"))
    if ni is None or ti is None:
        return np.zeros(0), [], np.zeros(0, np.int64)
    ei, phi = cols.get("endTime"), cols.get("phase")
    good = rows
    if not _all_rows(rows, max(ni, ti, ei or 0, phi or 0) + 1):
        good = [r for r in rows if isinstance(r, list) and len(r) > max(ni, ti, ei or 0, phi or 0)]
    name_idx = _numbers(list(map(itemgetter(ni), good)))
    t = _numbers(list(map(itemgetter(ti), good)))
    if ei is not None and phi is not None:  # an interval's end marker: at its end
        end = _numbers(list(map(itemgetter(ei), good)))
        phase = _numbers(list(map(itemgetter(phi), good)))
        t = np.where((phase == 3) | ~np.isfinite(t), end, t)
    name_idx = np.where(np.isfinite(name_idx), name_idx, -1).astype(np.int64)
    return _markers_of(t, name_idx, strings, offset_ms, lim)


def _all_rows(rows: list, width: int) -> bool:
    """Every row a list of at least ``width`` values (C-level passes over types and lengths)."""
    return set(map(type, rows)) <= {list} and (not rows or min(map(len, rows)) >= width)


def _numbers(values: list) -> np.ndarray:
    """``values`` as float64, NaN where one is not a number (null, text, an object)."""
    try:
        a = np.array(values, np.float64)
        if a.ndim == 1 and not (set(map(type, values)) & {str, bool}):
            return a
    except (ValueError, TypeError):
        pass
    return np.array([float(x) if isinstance(x, (int, float)) and not isinstance(x, bool) else np.nan
                     for x in values], np.float64)


# ----------------------------------------------------------------------------- processed
def _col(tbl: dict, name: str, source: str, where: str, *, optional: bool = False):
    v = tbl.get(name)
    if v is None:
        if optional:
            return None
        raise fail(source, where, f"has no {name!r} column")
    return need_list(v, source, f"{where}.{name}")


def _processed_lanes(doc: dict, frames: KeyedFrames, source: str, lim, left_out: list) -> tuple:
    meta = doc["meta"]
    shared = doc.get("shared") if isinstance(doc.get("shared"), dict) else {}
    threads = need_list(doc.get("threads"), source, "threads")
    interval = _interval_us(meta)
    shared_strings = shared.get("stringArray")
    shared_tables = None
    if isinstance(shared.get("stackTable"), dict):  # version 60: the tables are shared
        shared_tables = _processed_tables(shared, shared_strings, shared, frames, source, "shared", lim)
    lanes = []
    for i in _threads_read(threads, lim, left_out):
        th = threads[i]
        w = f"threads[{i}]"
        need_dict(th, source, w)
        ln = _lane_of(th, interval)
        strings = shared_strings if shared_strings is not None else th.get("stringArray", th.get("stringTable"))
        strings = need_list(strings, source, f"{w}.stringArray")
        if shared_tables is not None:
            parent, frame, script = shared_tables
        else:
            parent, frame, script = _processed_tables(th, strings, shared, frames, source, w, lim)
        ln.parent, ln.frame, ln.script = parent, frame, script
        samples = th.get("samples")
        if samples is not None:
            sw = f"{w}.samples"
            need_dict(samples, source, sw)
            ln.stack = int_column(_col(samples, "stack", source, sw), source, f"{sw}.stack", lo=-1, hi=parent.size,
                                  null=-1)
            tv = samples.get("time")
            if tv is not None:
                t_ms = float_column(tv, source, f"{sw}.time")
            else:
                d = float_column(_col(samples, "timeDeltas", source, sw), source, f"{sw}.timeDeltas")
                t_ms = np.cumsum(d)
            if t_ms.size != ln.stack.size:
                raise fail(source, sw, f"{t_ms.size} times for {ln.stack.size} stacks")
            ln.time_us = _ms_to_us(t_ms, 0.0, source, f"{sw}.time", lim)
        markers = th.get("markers")
        if isinstance(markers, dict) and is_list(markers.get("name")) and len(markers["name"]):
            ln.marker_ts, ln.marker_names, ln.marker_name = _processed_markers(markers, strings, lim)
        lanes.append(ln)
    m = {"interval_ms": interval / 1e3 if interval else None,
         "start_time_ms": float(meta["startTime"]) if isinstance(meta.get("startTime"), (int, float)) else 0.0,
         "preprocessed_version": meta.get("preprocessedProfileVersion"),
         "product": meta.get("product") if isinstance(meta.get("product"), str) else ""}
    return lanes, m


def _processed_tables(tbls: dict, strings, shared: dict, frames: KeyedFrames, source: str, where: str, lim) -> tuple:
    """(stack parent, stack frame (into ``frames``), stack is a script frame) of a processed
    profile's stack, frame and func tables (a thread's, or ``shared``'s)."""
    strings = need_list(strings, source, f"{where}.stringArray")
    st = need_dict(tbls.get("stackTable"), source, f"{where}.stackTable")
    ft = need_dict(tbls.get("frameTable"), source, f"{where}.frameTable")
    fn = need_dict(tbls.get("funcTable"), source, f"{where}.funcTable")
    names = int_column(_col(fn, "name", source, f"{where}.funcTable"), source, f"{where}.funcTable.name",
                       lo=0, hi=len(strings))
    n_func = names.size
    is_js = fn.get("isJS")
    is_js = np.fromiter(map(bool, is_js), bool, n_func) if is_list(is_js) and len(is_js) == n_func \
        else np.zeros(n_func, bool)
    lines = fn.get("lineNumber")
    lines = int_column(lines, source, f"{where}.funcTable.lineNumber", null=-1) \
        if is_list(lines) and len(lines) == n_func else np.full(n_func, -1, np.int64)
    files = np.full(n_func, -1, np.int64)
    if is_list(fn.get("fileName")) and len(fn["fileName"]) == n_func:
        files = int_column(fn["fileName"], source, f"{where}.funcTable.fileName", lo=-1, hi=len(strings), null=-1)
    elif is_list(fn.get("source")) and len(fn["source"]) == n_func:  # version 58: a sources table
        src = int_column(fn["source"], source, f"{where}.funcTable.source", lo=-1, null=-1)
        sources = shared.get("sources") if isinstance(shared.get("sources"), dict) else \
            (tbls.get("sources") if isinstance(tbls.get("sources"), dict) else {})
        fnames = sources.get("filename")
        if is_list(fnames) and len(fnames):
            fidx = int_column(fnames, source, "shared.sources.filename", lo=-1, hi=len(strings), null=-1)
            ok = (src >= 0) & (src < fidx.size)
            files = np.where(ok, fidx[np.clip(src, 0, fidx.size - 1)], -1)
    ffunc = int_column(_col(ft, "func", source, f"{where}.frameTable"), source, f"{where}.frameTable.func",
                       lo=0, hi=n_func)
    sframe = int_column(_col(st, "frame", source, f"{where}.stackTable"), source, f"{where}.stackTable.frame",
                        lo=0, hi=ffunc.size)
    n = sframe.size
    f_of_stack = ffunc[sframe] if n else np.zeros(0, np.int64)
    func_frame = np.full(n_func, -1, np.int64)
    resource = resource_names(tbls, fn, strings, n_func)
    for k in np.flatnonzero(np.bincount(f_of_stack, minlength=n_func)).tolist():  # the functions the stacks use
        nm = strings[names[k]]
        fl = strings[files[k]] if files[k] >= 0 else ""
        nm = nm if isinstance(nm, str) else str(nm)
        fl = fl if isinstance(fl, str) else str(fl)
        if not fl and resource[k] and is_address(nm):  # unsymbolicated: "a.out+0x3ec3", as Gecko's
            nm, fl = f"{resource[k]}+{nm}", resource[k]
        func_frame[k] = frames.add_keyed(("func", nm, fl, int(lines[k])), nm, fl, int(lines[k]))
    if st.get("prefix") is not None:
        parent = int_column(_col(st, "prefix", source, f"{where}.stackTable"), source, f"{where}.stackTable.prefix",
                            lo=-1, hi=n, null=-1)
    else:  # version 66: how many rows back the parent is (0: a root)
        off = int_column(_col(st, "prefixOffset", source, f"{where}.stackTable"), source,
                         f"{where}.stackTable.prefixOffset", lo=0)
        parent = np.where(off > 0, np.arange(off.size) - off, -1)
        if (parent < -1).any():
            k = int(np.argmax(parent < -1))
            raise fail(source, f"{where}.stackTable.prefixOffset[{k}]", f"{int(off[k])} reaches before the table")
    if parent.size != n:
        raise fail(source, f"{where}.stackTable", f"{parent.size} prefixes for {n} frames")
    return parent, func_frame[f_of_stack] if n else np.zeros(0, np.int64), is_js[f_of_stack] if n else \
        np.zeros(0, bool)


def _processed_markers(markers: dict, strings: list, lim) -> tuple:
    """Markers of a processed thread: (times µs, names); markers without a usable time or name
    are left out."""
    try:
        name_idx = _floats(markers["name"])
    except (ValueError, TypeError):
        return np.zeros(0), [], np.zeros(0, np.int64)
    n = name_idx.size
    st = markers.get("startTime", markers.get("time"))
    try:
        t = _floats(st) if is_list(st) and len(st) == n else np.full(n, np.nan)
        end = markers.get("endTime")
        phase = markers.get("phase")
        if is_list(end) and is_list(phase) and len(end) == n and len(phase) == n:
            e = _floats(end)
            ph = _floats(phase)
            t = np.where((ph == 3) | ~np.isfinite(t), e, t)
    except (ValueError, TypeError):
        return np.zeros(0), [], np.zeros(0, np.int64)
    name_idx = np.where(np.isfinite(name_idx), name_idx, -1).astype(np.int64)
    return _markers_of(t, name_idx, strings, 0.0, lim)


def _floats(v) -> np.ndarray:
    """A parsed column (a list or a `NumberColumn`) as float64, NaN for a null."""
    return v.as_float64() if isinstance(v, NumberColumn) else np.array(v, np.float64)
