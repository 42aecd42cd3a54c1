"""PyTorch's memory profile as counter tracks: the profiler
(``torch.profiler.profile(profile_memory=True)``) writes every allocation and free as an
instant event named ``[memory]`` whose args carry the allocator's running totals::

    {"ph": "i", "s": "t", "name": "[memory]", "pid": 7, "tid": 7, "ts": 12.5,
     "args": {"Device Type": 0, "Device Id": -1, "Addr": 9437..., "Bytes": 4096,
              "Total Allocated": 12288, "Total Reserved": 0, "Ev Idx": 3}}

Perfetto and speedscope show them as thousands of instants; the totals are a step function of
time per device.  `memory_counters` makes them counter series of the trace -- a counter
``cpu memory`` (``cuda:0 memory``, ...) per device and process with the series
``allocated`` and ``reserved``, in MB -- next to the file's own counters; the instants stay.
"""
from __future__ import annotations

import numpy as np

from ..kernels import jsonevent as jev
from ..kernels import jsonside as jsd

MEMORY_EVENT = "[memory]"
#: the args read (key -> series name) and the device's keys
TOTALS = {b"Total Allocated": "allocated", b"Total Reserved": "reserved"}
DEVICE_TYPE, DEVICE_ID = b"Device Type", b"Device Id"
DEVICE_NAMES = {0: "cpu", 1: "cuda"}  # c10::DeviceType's first values; others by number
BYTES_PER_UNIT = 1e6  # the series in MB


def _key_is(buf, koff, klen, key: bytes) -> np.ndarray:
    """Per pair: its key is ``key`` (vectorised: the pairs of that length compared byte-wise)."""
    hit = klen == len(key)
    idx = np.flatnonzero(hit)
    if idx.size:
        got = buf[koff[idx, None] + np.arange(len(key))[None, :]]
        hit[idx] = np.all(got == np.frombuffer(key, np.uint8)[None, :], axis=1)
    return hit


def device_counter_name(device_type: int, device_id: int) -> str:
    """``cpu memory``, ``cuda:0 memory``: the device first (a low track's label is cut at its end)."""
    dev = DEVICE_NAMES.get(device_type, f"device {device_type}")
    return f"{dev}{f':{device_id}' if device_id >= 0 else ''} memory"


def memory_counters(buf, ii, ss, ts, inst_rows, name_id, names, inst_pid, t0: float, max_nesting: int,
                    counters: dict) -> dict:
    """``counters`` (the Trace's counter fields, `chrome_side.counter_fields`) with the
    ``[memory]`` instants' totals appended as counter series (module docstring); unchanged
    when the trace has none.  ``inst_rows``: the instants' event rows (ascending), ``ts``
    their times (µs in the file's clock), ``inst_pid`` the process of each."""
    if MEMORY_EVENT not in names or not len(inst_rows):
        return counters
    mid = names.index(MEMORY_EVENT)
    pick = np.flatnonzero(name_id[inst_rows] == mid)
    rows = np.asarray(inst_rows, np.int64)[pick]
    rows_pid = np.asarray(inst_pid, np.int64)[pick]
    has_args = ss[rows, jev.S_ARGS_LEN] >= 2
    rows, rows_pid = rows[has_args], rows_pid[has_args]
    if rows.size == 0:
        return counters
    stack = np.zeros(max(int(max_nesting), 1) + 1, np.uint8)
    row, koff, klen, _, _, val, st = jsd.counter_pairs(buf, ii[rows, jev.I_ARGS_OFF],
                                                       ss[rows, jev.S_ARGS_LEN].astype(np.int64), stack)
    ok = st == jsd.PAIR_OK  # the totals are integers: the exact fast path (others are not read)
    row, koff, klen, val = row[ok], koff[ok], klen[ok], val[ok]
    dev_type = np.zeros(rows.size, np.int64)
    dev_id = np.full(rows.size, -1, np.int64)
    for key, dest in ((DEVICE_TYPE, dev_type), (DEVICE_ID, dev_id)):
        k = _key_is(buf, koff, klen, key)
        dest[row[k]] = np.clip(val[k], -1, 2 ** 31).astype(np.int64)  # a hostile 1e300 is a device, not a crash
    parts = []
    for j, (key, series) in enumerate(TOTALS.items()):
        k = np.flatnonzero(_key_is(buf, koff, klen, key))
        parts.append((row[k], np.full(k.size, j, np.int64), val[k]))
    r = np.concatenate([p[0] for p in parts])
    if r.size == 0:
        return counters
    which = np.concatenate([p[1] for p in parts])
    value = np.concatenate([p[2] for p in parts]) / BYTES_PER_UNIT
    # one counter per (process, device), one series per (counter, total); samples in time order
    dev_key = np.stack([rows_pid[r], dev_type[r], dev_id[r]], 1)
    devs, dev_of = np.unique(dev_key, axis=0, return_inverse=True)
    dev_of = dev_of.reshape(-1)
    names_of_dev = [device_counter_name(int(dtype), int(did)) for _, dtype, did in devs.tolist()]
    # a file written by `save(..., format="chrome")` carries these counters as its own: not twice
    have = {(counters["counter_names"][int(c)], int(p)) for c, p in
            zip(np.asarray(counters["series_counter"]).tolist(), np.asarray(counters["series_pid"]).tolist())}
    new = np.array([(nm, int(p)) not in have for nm, p in zip(names_of_dev, devs[:, 0].tolist())], np.bool_)
    if not new.all():
        keep = new[dev_of]
        r, which, value, dev_of = r[keep], which[keep], value[keep], dev_of[keep]
        if r.size == 0:
            return counters
        renum = np.cumsum(new) - 1
        devs, names_of_dev = devs[new], [nm for nm, k in zip(names_of_dev, new.tolist()) if k]
        dev_of = renum[dev_of]
    series_key = dev_of * len(TOTALS) + which
    used, s_of = np.unique(series_key, return_inverse=True)
    s_of = s_of.reshape(-1)
    t = ts[rows[r]].astype(np.float64) - t0
    order = np.lexsort((np.arange(t.size), t, s_of))
    n_c0, n_s0 = len(counters["counter_names"]), len(counters["series_names"])
    out = dict(counters)
    out["counter_names"] = list(counters["counter_names"]) + names_of_dev
    out["series_names"] = list(counters["series_names"]) + [list(TOTALS.values())[int(k % len(TOTALS))]
                                                          for k in used.tolist()]
    out["series_units"] = list(counters["series_units"]) + ["MB"] * used.size
    out["series_counter"] = np.concatenate([counters["series_counter"],
                                            (n_c0 + used // len(TOTALS)).astype(np.int32)])
    out["series_pid"] = np.concatenate([counters["series_pid"], devs[used // len(TOTALS), 0].astype(np.int64)])
    out["counter_ts"] = np.concatenate([counters["counter_ts"], t[order]])
    out["counter_value"] = np.concatenate([counters["counter_value"], value[order]])
    out["counter_series"] = np.concatenate([counters["counter_series"], (n_s0 + s_of[order]).astype(np.int32)])
    return out
