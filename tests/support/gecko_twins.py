"""Naive readings of Firefox Profiler files (Gecko profiles, processed profiles), the twins of
`tracevis3d.io.firefox`: every thread's calls in time order, each sample lasting until the next
and the last one sampling interval, written from speedscope's ``import/firefox.ts`` and the
Firefox Profiler's processed format.  ``check`` loads a file and compares it with a twin."""
from __future__ import annotations

import json

import numpy as np

from speedscope_twins import calls_of, load_quiet, read_json, same_calls, timed_samples

def _split(loc):
    """speedscope's regex of a location (``firefox.ts``), as written there."""
    import re

    m = re.match(r"(.*)\s+\((.*?)(?::(\d+))?(?::(\d+))?\)$", re.sub(r"\[\d+\]$", "", loc))
    return None if not m else (m.group(1), m.group(2), m.group(3))


def _name(loc):
    """The function name a location stands for: speedscope's split where the location has a line
    or is a script frame, else the location itself."""
    sp = _split(loc)
    if sp and (sp[2] is not None or _script(loc)):
        return sp[0] or loc
    return loc


def _script(loc):
    sp = _split(loc)
    return bool(sp) and not (sp[1].startswith("resource:") or sp[1].startswith("self-hosted"))


def _lib_name(loc, libs):
    """An address location inside one of the profile's ``libs``: "library+0xoffset" (a linear
    search: the twin of `io.firefox._native_location`), else the location."""
    if not loc.startswith("0x"):
        return loc
    addr = int(loc, 16)
    for lib in libs:
        if lib["start"] <= addr < lib["end"] and lib.get("name"):
            return f"{lib['name'].rsplit('/', 1)[-1]}+0x{addr - lib['start']:x}"
    return loc


def _gecko_threads(prof, t0, out):
    """Every thread of a Gecko profile and its sub-profiles: (thread dict, ms offset, libs)."""
    if isinstance(prof, str):
        prof = json.loads(prof)
    st = prof.get("meta", {}).get("startTime", t0)
    for th in prof.get("threads", []):
        th = json.loads(th) if isinstance(th, str) else th
        if "threads" in th and "meta" in th:
            _gecko_threads(th, t0, out)
        else:
            libs = prof.get("libs", [])
            out.append((th, st - t0, json.loads(libs) if isinstance(libs, str) else libs))
    for sub in prof.get("processes", []):
        _gecko_threads(sub, t0, out)
    return out


def naive_gecko(doc, js_only):
    """{(pid, tid, name): [(path of names, start µs, end µs)]} of a Gecko (or DevTools) profile."""
    root = doc["profile"] if isinstance(doc.get("profile"), dict) else doc
    interval = root["meta"].get("interval", 1) * 1e3
    out = {}
    for th, off, libs in _gecko_threads(root, root["meta"].get("startTime", 0), []):
        strings = th["stringTable"]
        fs = th["frameTable"]["schema"]
        locs = [_lib_name(strings[r[fs["location"]]], libs) for r in th["frameTable"]["data"]]
        ss = th["stackTable"]["schema"]
        rows = th["stackTable"]["data"]

        def path(s):
            p = []
            while s is not None:
                p.append(locs[rows[s][ss["frame"]]])
                s = rows[s][ss["prefix"]]
            p.reverse()
            return tuple(_name(x) for x in p if not js_only or _script(x))

        sc = th["samples"]["schema"]
        data = th["samples"]["data"]
        if not data:
            continue
        stacks = [path(r[sc["stack"]]) for r in data]
        times = [(r[sc["time"]] + off) * 1e3 for r in data]
        out[(th.get("pid"), th.get("tid"), th.get("name"))] = timed_samples(stacks, times, times[-1] + interval)
    return out


def naive_processed(doc, js_only=False):
    """{(pid, tid, name): [(path of names, start µs, end µs)]} of a processed profile."""
    shared = doc.get("shared", {})
    interval = doc["meta"].get("interval", 1) * 1e3
    out = {}
    for th in doc["threads"]:
        tb = shared if "stackTable" in shared else th
        strings = shared.get("stringArray") or th.get("stringArray") or th.get("stringTable")
        st, ft, fn = tb["stackTable"], tb["frameTable"], tb["funcTable"]
        prefix = st.get("prefix")
        if prefix is None:
            prefix = [i - o if o else None for i, o in enumerate(st["prefixOffset"])]

        rt = tb.get("resourceTable")

        def name(f):
            """The function's name; an address with a resource (a library): "lib+0x…"."""
            nm = strings[fn["name"][f]]
            r = fn.get("resource", [None] * (f + 1))[f]
            if rt and r is not None and r >= 0 and nm.startswith("0x") and not fn.get("fileName", [None] * (f + 1))[f]:
                return f"{strings[rt['name'][r]]}+{nm}"
            return nm

        def path(s):
            p = []
            while s is not None:
                f = ft["func"][st["frame"][s]]
                if not js_only or fn["isJS"][f]:
                    p.append(name(f))
                s = prefix[s]
            return tuple(reversed(p))

        smp = th["samples"]
        if not smp["stack"]:
            continue
        t = smp.get("time")
        if t is None:
            t = list(np.cumsum(smp["timeDeltas"]))
        stacks = [path(s) for s in smp["stack"]]
        times = [x * 1e3 for x in t]
        out[(th.get("pid"), th.get("tid"), th.get("name"))] = timed_samples(stacks, times, times[-1] + interval)
    return out


def _pid(v):
    return int(v) if isinstance(v, str) and v.isdigit() else v


def check(path, naive, **kw):
    doc = read_json(path)
    tr = load_quiet(path, **kw)
    want = naive(doc)
    lanes = {}
    for t in range(tr.n_threads):
        lanes.setdefault(tr.thread_names[t], []).append(t)
    for (pid, tid, name), calls in want.items():
        cands = lanes.get(name or "", []) or [t for t in range(tr.n_threads)]
        if isinstance(tid, int):
            cands = [t for t in cands if int(tr.thread_tid[t]) == tid] or cands
        if isinstance(_pid(pid), int):
            cands = [t for t in cands if int(tr.thread_pid[t]) == _pid(pid)] or cands
        assert cands, f"{path.name}: no lane for thread {name}"
        errors = []
        for t in cands:  # threads of one name, pid and tid (the oldest files write none): the one that matches
            try:
                same_calls(calls_of(tr, t), calls, what=f"{path.name} {name}")
                break
            except AssertionError as e:
                errors.append(e)
        else:
            raise errors[0]
    return tr
