"""pprof profiles (``profile.proto``: Go's runtime/pprof, gperftools, pprof) → one merged `Trace`.

The file is a gzip-wrapped (inflated before this reader sees it) protobuf ``Profile``:
``sample_type`` (a ``ValueType`` per value of a sample: type and unit, string-table
indices), ``sample`` (leaf-first ``location_id`` list and one ``value`` per sample type),
``location`` (``id``, ``mapping_id``, ``address``, ``line`` list of ``function_id``/``line``),
``function`` (``id``, ``name``, ``system_name``, ``filename``, ``start_line``), ``mapping``,
``string_table``, ``default_sample_type``, ``period``, ``duration_nanos``.  The wire format is
walked by `tracevis3d.kernels.protowire` (numba; every packed list of every sample in one
pass), the rest is numpy, and Python only touches each distinct function and string.

Read as speedscope's ``pprof.ts`` reads it:

- the sample type shown: the option ``sample_type=`` (its type name, e.g. "cpu",
  "alloc_space", or its 0-based index), else ``default_sample_type`` when it names one,
  else the last (pprof's own default);
- a location is the function of its *last* line (the one the others were inlined into);
  a frame is (function name, file name, start line) -- ``system_name`` is not used;
- the sample's stack is its location list reversed (root first), weighted by its value.

Unlike speedscope, a location without a (known) function is not left out of the stack: it
is named by its address (``0x4a3f20``, its mapping's file as the frame's file), as pprof
shows unsymbolized frames; speedscope would drop the frame (and a wholly unsymbolized
profile would show nothing).

x: the sample type's measure.  Time units (nanoseconds, microseconds, milliseconds,
seconds) are converted to µs and ``meta["x_unit"]`` is "µs" (the unit every time axis of
TraceVis3D uses); "bytes" stays bytes; a "count" is named by its type ("samples",
"alloc_objects", "contentions").  ``meta["pprof_sample_types"]`` lists "type/unit" of all.

Bad input: wire-format errors are a `TraceFormatError` naming the byte offset; ids that
point nowhere (a sample's location, a location's function, a string index) are repairs
(``pprof_location_id``, ``pprof_function_id``, ``pprof_string``); a sample with fewer values
than sample types weighs 0 (``pprof_values``).
"""
from __future__ import annotations

import numpy as np

from ..model import TraceFormatError
from .collapsed import Repairs, frame_table
from .limits import DEFAULT_LIMITS
from .stacks import StackProfile, merged_trace, source_name

__all__ = ["load_pprof"]

#: time units pprof writes → factor to µs
_TIME_UNITS = {"nanoseconds": 1e-3, "microseconds": 1.0, "milliseconds": 1e3, "seconds": 1e6}


class _Msg:
    """The fields of many messages of one type, as `protowire.scan_fields` rows."""

    def __init__(self, buf, starts, ends, source: str, what: str, rows=None):
        from ..kernels.protowire import MESSAGES, OK, scan_fields

        self.buf = buf
        self.n = int(starts.size)
        code, at, self.owner, self.num, self.wt, self.val, self.ln = rows if rows is not None else scan_fields(
            buf, np.asarray(starts, np.int64), np.asarray(ends, np.int64))
        if code != OK:
            raise TraceFormatError(f"{source}: byte {int(at)}: {MESSAGES[int(code)]} (in {what})")

    def scalar(self, field: int, default: int = 0, wire: int = 0) -> np.ndarray:
        """The last value of a scalar field per message (proto3: the last one wins)."""
        out = np.full(self.n, default, np.uint64)
        rows = np.flatnonzero((self.num == field) & (self.wt == wire))
        if rows.size:
            rows = rows[::-1]
            u, first = np.unique(self.owner[rows], return_index=True)
            out[u] = self.val[rows[first]]
        return out

    def spans(self, field: int) -> tuple:
        """(owner, offset, length) of every length-delimited row of ``field``, in order."""
        rows = np.flatnonzero((self.num == field) & (self.wt == 2))
        return self.owner[rows], self.val[rows].astype(np.int64), self.ln[rows]

    def repeated(self, field: int, source: str, what: str) -> tuple:
        from ..kernels.protowire import MESSAGES, OK, repeated_varints

        code, at, ptr, values = repeated_varints(self.buf, self.owner, self.num, self.wt, self.val, self.ln,
                                                 self.n, field)
        if code != OK:
            raise TraceFormatError(f"{source}: byte {int(at)}: {MESSAGES[int(code)]} (in {what})")
        return ptr, values


def _index_of(ids: np.ndarray, wanted: np.ndarray) -> np.ndarray:
    """Position in ``ids`` of each of ``wanted`` (-1 where absent; the last of equal ids).
    Ids are usually 1..n (Go numbers them so): then one table indexed by id, else a search."""
    if not ids.size:
        return np.full(wanted.shape, -1, np.int64)
    rev = np.arange(ids.size - 1, -1, -1)
    u, first = np.unique(ids[rev], return_index=True)
    pos = rev[first]
    top = int(u[-1])
    if top <= 4 * ids.size + 1024:
        table = np.full(top + 1, -1, np.int64)
        table[u.astype(np.int64)] = pos
        ok = wanted <= np.uint64(top)
        return np.where(ok, table[np.where(ok, wanted, 0).astype(np.int64)], -1)
    k = np.searchsorted(u, wanted)
    k = np.minimum(k, u.size - 1)
    return np.where(u[k] == wanted, pos[k], -1)


def _location_table(ids: np.ndarray) -> tuple:
    """(id_table, u_ids, u_loc): how `kernels.pprof_scan` finds the location of an id (the last
    location of equal ids).  Dense ids (Go numbers locations 1..n): ``id_table[id]`` is the
    location, its last slot standing for every id past the others; else the sorted distinct ids
    and the location of each, searched."""
    e = np.zeros(0, np.int64)
    if not ids.size:
        return e, np.zeros(0, np.uint64), e
    rev = np.arange(ids.size - 1, -1, -1)
    u, first = np.unique(ids[rev], return_index=True)  # (the last location of each id)
    pos = rev[first].astype(np.int64)
    top = int(u[-1])
    if top <= 4 * ids.size + 1024:
        table = np.full(top + 2, -1, np.int64)  # (the last slot: every id past top)
        table[u.astype(np.int64)] = pos
        return table, np.zeros(0, np.uint64), e
    return e, u.astype(np.uint64), pos


def _locations_of_ids(ids: np.ndarray, wanted: np.ndarray) -> np.ndarray:
    """The location (index into ``ids``) of each id of ``wanted``, -1 where no location has it
    (the last of equal ids): `_location_table` and the kernel's search, as the reader finds them."""
    from ..kernels.pprof_fields import locations_of

    return locations_of(np.asarray(wanted, np.uint64), *_location_table(np.asarray(ids, np.uint64)))


def _location_frames(loc_id, l_owner, line_fn, fn_id, fn_kid, bare_key, rep) -> tuple:
    """Each location's frames as key numbers, innermost first: (loc_ptr, flat keys).  A location
    with several lines holds inlined calls, the first line the innermost, the last the function
    they were inlined into (profile.proto): each line whose function is known is a frame.  A
    location without such a line is one frame, its address (``bare_key(locations)``: their key
    numbers).  ``l_owner``/``line_fn``: each line's location (ascending, as the lines are read)
    and function id; ``loc_id``: each location's id."""
    loc_n = int(loc_id.size)
    f_at = np.where(line_fn > 0, _index_of(fn_id, line_fn), -1) if line_fn.size else np.zeros(0, np.int64)
    known = f_at >= 0
    n_known = np.bincount(l_owner[known], minlength=loc_n) if loc_n else np.zeros(0, np.int64)
    bad_line = (line_fn > 0) & ~known
    bad_loc = np.zeros(loc_n, bool)
    bad_loc[l_owner[bad_line]] = True
    lost = bad_line & (n_known[l_owner] > 0) if loc_n else bad_line
    bad_loc &= n_known == 0
    rep.add("pprof_function_id", int(bad_loc.sum()), f"location id {int(loc_id[bad_loc][0]) if bad_loc.any() else 0}",
            "a line's function id that no function has: the location named by its address")
    rep.add("pprof_line_function", int(lost.sum()), f"location id {int(loc_id[l_owner[lost][0]]) if lost.any() else 0}",
            "an inlined line's function id that no function has: that frame left out")
    width = np.maximum(n_known, 1)
    loc_ptr = np.zeros(loc_n + 1, np.int64)
    np.cumsum(width, out=loc_ptr[1:])
    flat = np.empty(int(loc_ptr[-1]), np.int64)
    rows = np.flatnonzero(known)
    if rows.size:
        own = l_owner[rows]
        rank = np.arange(rows.size) - np.searchsorted(own, own, "left")
        flat[loc_ptr[own] + rank] = fn_kid[f_at[rows]]
    bare = np.flatnonzero(n_known == 0)
    if bare.size:
        flat[loc_ptr[bare]] = bare_key(bare)
    return loc_ptr, flat


def load_pprof(data, *, source: str = "<bytes>", limits=None, kind_rules=None, warn: bool = True,
               sample_type=None, **_common):
    """Load a pprof profile (``data``: its bytes, gzip inflated) as one merged trace (module
    docstring).  ``sample_type``: the sample type shown, by type name or index."""
    from ..kernels.gamma import process_hash_seed
    from ..kernels.pprof_fields import profile_fields
    from ..kernels.pprof_scan import sample_stacks

    lim = limits if limits is not None else DEFAULT_LIMITS
    rep = Repairs()
    buf = np.frombuffer(data, np.uint8) if not isinstance(data, np.ndarray) else data.reshape(-1).view(np.uint8)
    n_input = int(buf.size)
    if not n_input:
        raise TraceFormatError(f"{source}: empty: not a pprof profile")
    if not buf.flags.c_contiguous:
        buf = np.ascontiguousarray(buf)
    # the top level's fields but the samples (read later, straight into the stack trie)
    code, at, *rows, n_samples = profile_fields(buf)
    top = _Msg(buf, np.zeros(1, np.int64), np.full(1, n_input, np.int64), source, "the Profile",
               rows=(code, at, *rows))

    # strings: decoded when asked for
    _, s_off, s_len = top.spans(6)
    cache: dict = {}

    def string(i) -> str:
        i = int(i)
        s = cache.get(i)
        if s is None:
            if 0 <= i < s_off.size:
                s = bytes(buf[s_off[i]: s_off[i] + s_len[i]]).decode("utf-8", "replace")
            else:
                rep.add("pprof_string", 1, f"string index {i}", f"a string index past the {s_off.size} strings: ''")
                s = ""
            cache[i] = s
        return s

    def sub(field: int, what: str) -> _Msg:
        _, off, ln = top.spans(field)
        return _Msg(buf, off, off + ln, source, what)

    # sample types and the one shown
    st = sub(1, "a sample_type")
    types = [string(t) or "samples" for t in st.scalar(1).tolist()]
    units = [string(u) or "count" for u in st.scalar(2).tolist()]
    if not types:
        raise TraceFormatError(f"{source}: no sample_type: not a pprof profile (or an empty one)")
    default = string(top.scalar(14)[0]) if top.scalar(14)[0] else ""
    if sample_type is None:
        idx = types.index(default) if default in types else len(types) - 1
    elif isinstance(sample_type, int) or (isinstance(sample_type, str) and sample_type.isdigit()):
        idx = int(sample_type)
        if not 0 <= idx < len(types):
            raise TraceFormatError(f"{source}: sample type {idx} out of range: its types are "
                                   f"{', '.join(f'{t}/{u}' for t, u in zip(types, units))}")
    elif sample_type in types:
        idx = types.index(sample_type)
    else:
        raise TraceFormatError(f"{source}: no sample type {sample_type!r}: its types are "
                               f"{', '.join(f'{t}/{u}' for t, u in zip(types, units))}")
    unit = units[idx]
    scale = _TIME_UNITS.get(unit)
    x_unit = "µs" if scale is not None else ("bytes" if unit == "bytes" else (types[idx] if unit == "count" else unit))

    # functions: id → frame (name, file, start line)
    fn = sub(5, "a function")
    fn_id = fn.scalar(1)
    fn_key = list(zip((string(x) for x in fn.scalar(2).tolist()), (string(x) for x in fn.scalar(4).tolist()),
                      fn.scalar(5).view(np.int64).tolist()))
    # mappings: id → file
    mp = sub(3, "a mapping")
    mp_id = mp.scalar(1)
    mp_file = [string(x) for x in mp.scalar(5).tolist()]
    # locations: each line a frame (inlined calls innermost first), else the address
    loc = sub(4, "a location")
    loc_id = loc.scalar(1)
    loc_map = loc.scalar(2)
    loc_addr = loc.scalar(3)
    l_owner, l_off, l_len = loc.spans(4)
    lines = _Msg(buf, l_off, l_off + l_len, source, "a location's line")
    # frames: one per distinct (name, file, start line), and per distinct unsymbolized (address, file),
    # numbered in the order of the first location (and line) that has them; Python touches each distinct key
    m_at = _index_of(mp_id, loc_map)
    keys: dict = {}  # key → its number here (the order keys are met, not yet the frames')
    fn_kid = np.array([keys.setdefault((name or "(unknown)", file, line), len(keys)) for name, file, line in fn_key],
                      np.int64)

    def bare_key(bare):
        return [keys.setdefault((f"0x{a:x}", mp_file[m] if m >= 0 else "", -1), len(keys))
                for a, m in zip(loc_addr[bare].tolist(), m_at[bare].tolist())]

    loc_ptr, loc_kid = _location_frames(loc_id, l_owner, lines.scalar(1), fn_id, fn_kid, bare_key, rep)
    frame_of_key = np.full(len(keys), -1, np.int64)
    names, files, flines = [], [], []
    if loc.n:
        used, first = np.unique(loc_kid, return_index=True)
        used = used[np.argsort(first, kind="stable")]  # in order of the first location of each
        frame_of_key[used] = np.arange(used.size)
        key_list = list(keys)
        for k in used.tolist():
            name, file, line = key_list[k]
            names.append(name)
            files.append(file)
            flines.append(line if 0 <= line < 2 ** 31 - 1 else -1)
    loc_frames = frame_of_key[loc_kid] if loc.n else np.zeros(0, np.int64)

    # samples: decoded into the trie of frame paths in one walk (a malformed one: read again the
    # slower way, which names it)
    res = sample_stacks(buf, *_location_table(loc_id), loc_ptr, loc_frames, idx, process_hash_seed(),
                        int(lim.max_stack_depth))
    if res[0] != 0:
        _sample_error(buf, source, res)
    _, _, node_parent, node_frame, sample_node, value, n_deep, n_miss, n_short, first_short = res
    rep.add("pprof_location_id", int(n_miss), "a sample", "a location id that no location has: frame left out")
    rep.add("pprof_values", int(n_short), f"sample {int(first_short) if n_short else 0}",
            f"a sample with fewer values than its {len(types)} sample types: weight 0")
    weight = value.view(np.int64).astype(np.float64)
    if scale is not None:
        weight = weight * scale
    rep.add("stack_deep", int(n_deep), "a sample", f"a stack deeper than {lim.max_stack_depth} frames: its leaf "
                                                   f"side cut (max_stack_depth= to allow more)")
    if not n_samples:
        raise TraceFormatError(f"{source}: a pprof profile without samples: nothing to show")
    frames = frame_table(names, lim, files=files, lines=flines)
    profile = StackProfile(thread_name=source_name(source), stack_parent=node_parent, stack_frame=node_frame,
                           sample_stack=sample_node, sample_weight=weight, distinct_paths=True)
    period_type = sub(11, "the period_type")
    meta = {"pprof_sample_types": [f"{t}/{u}" for t, u in zip(types, units)],
            "pprof_sample_type": f"{types[idx]}/{unit}",
            "pprof_period": int(top.scalar(12).view(np.int64)[0]),
            "pprof_period_type": (f"{string(period_type.scalar(1)[0])}/{string(period_type.scalar(2)[0])}"
                                  if period_type.n else ""),
            "pprof_duration_ns": int(top.scalar(10).view(np.int64)[0]),
            "pprof_time_ns": int(top.scalar(9).view(np.int64)[0])}
    trace = merged_trace(frames, [profile], unit=x_unit, source=source, fmt="pprof", limits=lim, input_bytes=n_input,
                         kind_rules=kind_rules, meta=meta, warn=warn)
    return rep.apply(trace, source, warn)


def _sample_error(buf, source: str, res) -> None:
    """Raise the error of a malformed sample as the field-by-field reading names it (`_Msg`:
    every sample's fields, then their location ids, then their values), or, should that reading
    find none, as the kernel found it."""
    from ..kernels.protowire import MESSAGES

    top = _Msg(buf, np.zeros(1, np.int64), np.full(1, buf.size, np.int64), source, "the Profile")
    _, off, ln = top.spans(2)
    sm = _Msg(buf, off, off + ln, source, "a sample")
    sm.repeated(1, source, "a sample's location_id")
    sm.repeated(2, source, "a sample's value")
    raise TraceFormatError(f"{source}: byte {int(res[1])}: {MESSAGES[int(res[0])]} (in a sample)")
