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

    def __init__(self, buf, starts, ends, source: str, what: str):
        from ..kernels.protowire import MESSAGES, OK, scan_fields

        self.buf = buf
        self.n = int(starts.size)
        code, at, self.owner, self.num, self.wt, self.val, self.ln = scan_fields(
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


def _frame_of_ids(ids: np.ndarray, frame: np.ndarray, wanted: np.ndarray) -> np.ndarray:
    """``frame`` of the location of each id of ``wanted`` (-1 where no location has it; the last
    of equal ids): one table indexed by id and one gather when the ids are dense (Go numbers
    them 1..n), else `_index_of`."""
    if ids.size and wanted.size:
        top = int(ids.max())
        if top <= 4 * ids.size + 1024:
            rev = np.arange(ids.size - 1, -1, -1)
            u, first = np.unique(ids[rev], return_index=True)  # (the last location of each id)
            table = np.full(top + 2, -1, np.int64)  # (the last slot: every id past top)
            table[u.astype(np.int64)] = frame[rev[first]]
            if int(wanted.max()) > top:
                wanted = np.minimum(wanted, np.uint64(top + 1))
            return table[wanted.view(np.int64)]
    at = _index_of(ids, wanted)
    return np.where(at >= 0, frame[np.maximum(at, 0)] if frame.size else -1, -1)


def load_pprof(data, *, source: str = "<bytes>", limits=None, kind_rules=None, warn: bool = True,
               sample_type=None, **_common):
    """Load a pprof profile (``data``: its bytes, gzip inflated) as one merged trace (module
    docstring).  ``sample_type``: the sample type shown, by type name or index."""
    from ..kernels.gamma import process_hash_seed
    from ..kernels.protowire import stacks_from_lists

    lim = limits if limits is not None else DEFAULT_LIMITS
    rep = Repairs()
    buf = np.frombuffer(data, np.uint8) if not isinstance(data, np.ndarray) else data.reshape(-1).view(np.uint8)
    n_input = int(buf.size)
    if not n_input:
        raise TraceFormatError(f"{source}: empty: not a pprof profile")
    top = _Msg(buf, np.zeros(1, np.int64), np.full(1, n_input, np.int64), source, "the Profile")

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
    # locations: the function of the last line, else the address
    loc = sub(4, "a location")
    loc_id = loc.scalar(1)
    loc_map = loc.scalar(2)
    loc_addr = loc.scalar(3)
    l_owner, l_off, l_len = loc.spans(4)
    lines = _Msg(buf, l_off, l_off + l_len, source, "a location's line")
    line_fn = lines.scalar(1)
    last_line = np.full(loc.n, -1, np.int64)
    if l_owner.size:
        rev = np.arange(l_owner.size - 1, -1, -1)
        u, first = np.unique(l_owner[rev], return_index=True)
        last_line[u] = rev[first]
    has_line = last_line >= 0
    want_fn = np.where(has_line, line_fn[np.maximum(last_line, 0)] if l_owner.size else 0, 0).astype(np.uint64)
    f_at = np.where(want_fn > 0, _index_of(fn_id, want_fn), -1)
    bad_fn = (want_fn > 0) & (f_at < 0)
    rep.add("pprof_function_id", int(bad_fn.sum()), f"location id {int(loc_id[bad_fn][0]) if bad_fn.any() else 0}",
            "a line's function id that no function has: the location named by its address")
    # frames: one per distinct (name, file, start line), and per distinct unsymbolized (address, file),
    # numbered in the order of the first location that has them; Python touches each distinct key
    m_at = _index_of(mp_id, loc_map)
    keys: dict = {}  # key → its number here (the order keys are met, not yet the frames')
    fn_kid = np.array([keys.setdefault((name or "(unknown)", file, line), len(keys)) for name, file, line in fn_key],
                      np.int64)
    loc_kid = np.where(f_at >= 0, fn_kid[np.maximum(f_at, 0)] if fn_kid.size else -1, -1)
    bare = np.flatnonzero(f_at < 0)
    if bare.size:
        ma = m_at[bare]
        loc_kid[bare] = [keys.setdefault((f"0x{a:x}", mp_file[m] if m >= 0 else "", -1), len(keys))
                         for a, m in zip(loc_addr[bare].tolist(), ma.tolist())]
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
    loc_frame = frame_of_key[loc_kid] if loc.n else np.zeros(0, np.int64)

    # samples
    sm = sub(2, "a sample")
    l_ptr, l_ids = sm.repeated(1, source, "a sample's location_id")
    v_ptr, v_vals = sm.repeated(2, source, "a sample's value")
    frames_flat = _frame_of_ids(loc_id, loc_frame, l_ids)
    rep.add("pprof_location_id", int(np.count_nonzero(frames_flat < 0)), "a sample",
            "a location id that no location has: frame left out")
    n_vals = np.diff(v_ptr)
    short = n_vals <= idx
    rep.add("pprof_values", int(short.sum()), f"sample {int(np.flatnonzero(short)[0]) if short.any() else 0}",
            f"a sample with fewer values than its {len(types)} sample types: weight 0")
    weight = np.where(short, 0, v_vals[np.minimum(v_ptr[:-1] + idx, max(v_vals.size - 1, 0))] if v_vals.size else 0)
    weight = weight.astype(np.uint64).view(np.int64).astype(np.float64)
    if scale is not None:
        weight = weight * scale
    node_parent, node_frame, sample_node, n_deep = stacks_from_lists(l_ptr, frames_flat, process_hash_seed(),
                                                                     int(lim.max_stack_depth))
    rep.add("stack_deep", int(n_deep), "a sample", f"a stack deeper than {lim.max_stack_depth} frames: its leaf "
                                                   f"side cut (max_stack_depth= to allow more)")
    if not sm.n:
        raise TraceFormatError(f"{source}: a pprof profile without samples: nothing to show")
    frames = frame_table(names, lim, files=files, lines=flines)
    profile = StackProfile(thread_name=source_name(source), stack_parent=node_parent, stack_frame=node_frame,
                           sample_stack=sample_node, sample_weight=weight)
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
