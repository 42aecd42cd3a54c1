"""Thread names and source locations from py-spy's conventions, applied after import.

py-spy (``record --format chrometrace --threads``) writes no ``thread_name`` metadata: the
importer can only name its lanes by the numeric ids (``139870123251392``).  The names are
in the stacks instead: py-spy puts a frame ``thread (<os tid>): <name>`` (``thread (<tid>)``
for a thread without a name) at the root of every sample, and, with ``--subprocesses``, a
``process <pid>:"<command line>"`` frame above it.  py-spy also writes each frame's file and
line in the event's args (``{"filename": …, "line": …}``), not in its name, so the module of
a frame (`tracevis3d.names`) can only come from there.

`fix_pyspy` does both, on a `Trace` just imported; it changes nothing in traces from other
tools (a thread is renamed only when EVERY one of its root frames is a py-spy thread frame,
and only when its current name is a numeric placeholder, never a name from ``thread_name``
metadata).  All work is per distinct function or per thread, never per call in Python.
"""
from __future__ import annotations

import re

import numpy as np

from ..names import is_pyspy_process_frame, parse_function_name, pyspy_thread_name

#: a thread name that only repeats ids: "139870123251392", "11353: 140013048286080", "0x1A2B", ""
_PLACEHOLDER = re.compile(r"^\s*(?:(?:\d+|0x[0-9a-fA-F]+)\s*:?\s*)*$")


def is_placeholder_name(name: str, tid=None, pid=None) -> bool:
    """True if a thread name carries no information beyond its ids (what the importer makes up
    for a thread without ``thread_name`` metadata)."""
    s = str(name).strip()
    return bool(_PLACEHOLDER.match(s)) or s in {str(tid), f"{pid}: {tid}", f"{pid}:{tid}", f"thread {tid}"}


def root_frames(trace) -> np.ndarray:
    """Indices of each thread's root frames: the roots (depth 0), except that a py-spy
    ``process <pid>:"…"`` root is replaced by its children (the thread frames under it)."""
    names = trace.function_names
    is_proc = np.fromiter((is_pyspy_process_frame(s) for s in names), bool, len(names))
    roots = np.flatnonzero(trace.parent < 0)
    if not is_proc.any():
        return roots
    under = np.flatnonzero(trace.depth == 1)
    under = under[is_proc[trace.func[trace.parent[under]]]]
    keep = roots[~is_proc[trace.func[roots]]]
    return np.sort(np.concatenate([keep, under]))


def name_threads_from_root_frames(trace) -> list:
    """Rename threads from py-spy root frames; return ``[(thread index, old name, new name)]``.

    A thread is renamed when its current name is a placeholder (`is_placeholder_name`) and
    every one of its root frames (`root_frames`) is a py-spy thread frame; the new name is the
    one after the colon, else ``thread <tid>`` (`tracevis3d.names.pyspy_thread_name`).  If a
    thread's root frames carry several names, a real name beats none (py-spy writes
    ``thread (<tid>)`` while it cannot read the name yet, e.g. at a thread's start), then the
    one that covers the most time wins.  The frames themselves stay in the trace.
    """
    n_threads = trace.n_threads
    if n_threads == 0 or len(trace) == 0:
        return []
    fn_name = [pyspy_thread_name(s) for s in trace.function_names]  # per distinct function
    is_tf = np.fromiter((x is not None for x in fn_name), bool, len(fn_name))
    if not is_tf.any():
        return []
    cand = root_frames(trace)
    th = trace.thread[cand]
    ok = is_tf[trace.func[cand]]
    n_roots = np.bincount(th, minlength=n_threads)
    n_bad = np.bincount(th, weights=(~ok).astype(np.float64), minlength=n_threads)
    good = (n_roots > 0) & (n_bad == 0)
    renamed = []
    if not good.any():
        return renamed
    dur = trace.end[cand] - trace.start[cand]
    for t in np.flatnonzero(good):  # per thread
        old = trace.thread_names[t]
        if not is_placeholder_name(old, int(trace.thread_tid[t]), int(trace.thread_pid[t])):
            continue
        mine = th == t
        funcs = trace.func[cand[mine]]
        totals = np.bincount(funcs, weights=dur[mine] + 1e-9)  # > 0 for every present frame
        named = np.array([fn_name[f] is not None and not fn_name[f].startswith("thread ")
                          for f in range(totals.shape[0])], bool)  # per distinct function
        if (named & (totals > 0)).any():
            totals = np.where(named, totals, 0.0)
        new = fn_name[int(np.argmax(totals))]
        trace.thread_names[t] = new
        renamed.append((int(t), old, new))
    return renamed


def _file_fingerprints(blob: np.ndarray, ptr: np.ndarray) -> np.ndarray:
    """Per args object ``blob[ptr[k]:ptr[k+1]]``, a fingerprint (length, Σ byte, Σ byte·offset,
    mod 2⁶⁴) of its part before the last comma: for py-spy's ``{"filename":…,"line":N}``, the
    file alone.  Vectorised over all calls (no Python loop per call)."""
    lo, hi = ptr[:-1].astype(np.int64), ptr[1:].astype(np.int64)
    commas = np.flatnonzero(blob == ord(","))
    j = np.searchsorted(commas, hi, side="left") - 1
    last = commas[np.maximum(j, 0)] if commas.size else hi
    last = np.where((j >= 0) & (last >= lo), last, hi) if commas.size else hi
    b = blob.astype(np.uint64)
    cs = np.concatenate([np.zeros(1, np.uint64), np.cumsum(b, dtype=np.uint64)])
    cw = np.concatenate([np.zeros(1, np.uint64),
                         np.cumsum(b * np.arange(blob.shape[0], dtype=np.uint64), dtype=np.uint64)])
    s1 = cs[last] - cs[lo]
    s2 = (cw[last] - cw[lo]) - lo.astype(np.uint64) * s1
    return np.stack([(last - lo).astype(np.uint64), s1, s2], axis=1)


def locate_pyspy_frames(trace) -> tuple:
    """Fill the file, line and module path of py-spy frames from their args; return
    ``(number of functions located, names left unlocated because their calls name several files)``.

    Only functions of category ``py-spy`` without a file.  The importer interns functions by
    name, so one py-spy "function" can hold frames of several files (every ``<module>``, a
    ``run`` in two modules): those are detected (a fingerprint of each call's file, vectorised)
    and left without a file rather than given a wrong one.  The args of the function's first
    call are read once per distinct function; py-spy's ``line`` is the line being executed in
    that sample, not the function's first line.
    """
    cats = trace.function_cats
    if not any(c == "py-spy" for c in cats) or trace.args_call.size == 0:
        return 0, []
    import orjson

    calls = trace.args_call
    cf = trace.func[calls].astype(np.int64)
    fp = _file_fingerprints(trace.args_blob, trace.args_ptr)
    rows = np.unique(np.column_stack([cf.astype(np.uint64), fp]), axis=0)
    n_files = np.bincount(rows[:, 0].astype(np.int64), minlength=trace.n_functions)
    funcs, first = np.unique(cf, return_index=True)
    n, ambiguous = 0, []
    for f, k in zip(funcs.tolist(), first.tolist()):  # per distinct function
        if cats[f] != "py-spy" or trace.function_files[f]:
            continue
        blob = bytes(trace.args_blob[trace.args_ptr[k]: trace.args_ptr[k + 1]])
        try:
            args = orjson.loads(blob)
        except orjson.JSONDecodeError:
            continue
        fname = args.get("filename") if isinstance(args, dict) else None
        if not fname or not isinstance(fname, str):
            continue
        if n_files[f] > 1:
            ambiguous.append(trace.function_names[f])
            continue
        line = args.get("line", -1)  # a line past int32 (or not finite) is none, as the function table holds int32
        line = int(line) if isinstance(line, (int, float)) and not isinstance(line, bool) and 0 <= line <= 2 ** 31 - 2 \
            else -1
        p = parse_function_name(trace.function_names[f], file=fname, line=line)
        trace.function_files[f] = fname
        trace.function_lines[f] = line
        trace.function_paths[f] = p.path
        n += 1
    return n, ambiguous


def fix_pyspy(trace):
    """Apply py-spy's conventions to a just-imported trace (see the module doc); return it.

    Records what it did in ``trace.meta['pyspy']`` (only when it did something)."""
    renamed = name_threads_from_root_frames(trace)
    located, ambiguous = locate_pyspy_frames(trace)
    if renamed or located or ambiguous:
        trace.meta["pyspy"] = {"threads_renamed": [list(r) for r in renamed], "functions_located": located,
                               "functions_in_several_files": ambiguous}
    return trace


__all__ = ["fix_pyspy", "name_threads_from_root_frames", "locate_pyspy_frames", "root_frames",
           "is_placeholder_name"]
