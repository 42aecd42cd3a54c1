"""The add-on's in-memory session: loaded traces, cached by file identity.

Operators run many times on the same trace (build, rebuild with other parameters, pick a
call, render), so the loaded `Trace` is kept.  The cache key is (absolute path, mtime in ns,
size): a file rewritten in place is reloaded, an unchanged one is not.  The cache holds at
most `MAX_TRACES` traces (least recently used goes first); `clear_cache()` empties it (the
add-on calls it on unregister and when a new .blend is loaded).

`load_steps` and `compare_steps` are the job steps (`tracevis3d.jobs`) that load through
this cache and compare two traces; the command line runs them without Blender.  The last
comparison is kept as well (`cached_comparison`, keyed by both files' identity and τ), so
rebuilding the comparison scene with other parameters does not compare again.

A comparison scene records where its traces are in ``scene["tracevis3d_compare"]`` (JSON
{trace_a, trace_b, tau, params}, written by the build job); `remember_compare_location`
adds both paths relative to the .blend before it is saved, `recorded_compare_paths` finds
them again (also after the folder moved), `read_compare_record` reads the record.

This module does not import bpy: Blender-relative paths ("//...") are resolved by the caller.
"""
from __future__ import annotations

import os
from collections import OrderedDict

from .. import kernel_cache
from ..io import load as load_file
from ..io.sniff import check_trace_file, format_of_file
from ..jobs import Job
from ..model import Trace, TraceFormatError

__all__ = ["get_trace", "cached_trace", "remember", "read_trace", "clear_cache", "cached_paths",
           "file_key", "load_steps", "compare_steps", "MAX_TRACES", "COMPARE_KEY", "comparison_key",
           "cached_comparison", "remember_comparison", "read_compare_record", "remember_compare_location",
           "recorded_compare_paths"]

MAX_TRACES = 2
COMPARE_KEY = "tracevis3d_compare"  # the comparison scene's record (written by `tasks`)
_cache: "OrderedDict[tuple, Trace]" = OrderedDict()
_comparisons: "OrderedDict[tuple, object]" = OrderedDict()
MAX_COMPARISONS = 1


def file_key(path) -> tuple[str, int, int]:
    """(absolute path, mtime_ns, size) of an existing regular file, or a clear error."""
    if path is None or str(path).strip() == "":
        raise TraceFormatError("no trace file given (the trace path is empty)")
    p = os.path.abspath(os.path.expanduser(os.fspath(path)))
    try:
        st = os.stat(p)
    except FileNotFoundError:
        raise TraceFormatError(f"trace file not found: {p}") from None
    except OSError as e:
        raise TraceFormatError(f"cannot read trace file {p}: {e.strerror or e}") from None
    if not os.path.isfile(p):
        raise TraceFormatError(f"not a file: {p}")
    return (p, st.st_mtime_ns, st.st_size)


def get_trace(path) -> Trace:
    """The trace in ``path``, loaded once per (path, mtime, size) and kept (LRU)."""
    key = file_key(path)
    hit = cached_trace(key)
    if hit is not None:
        return hit
    return remember(key, read_trace(key))


def cached_trace(key) -> Trace | None:
    """The cached trace for a `file_key`, or None (marks it most recently used)."""
    hit = _cache.get(key)
    if hit is not None:
        _cache.move_to_end(key)
    return hit


def read_trace(key) -> Trace:
    """Load the file of a `file_key` (no cache involved: safe in a worker thread), as
    `tracevis3d.load` does: the file checked first (no trace fails before numba is imported),
    the shipped pre-built kernels installed, then read (`tracevis3d.io.load`)."""
    check_trace_file(key[0])
    kernel_cache.ensure_installed()
    return load_file(key[0])


def remember(key, trace: Trace) -> Trace:
    """Keep ``trace`` as the file of ``key`` (a newer version of the file replaces the old)."""
    for old in [k for k in _cache if k[0] == key[0]]:
        del _cache[old]
    _cache[key] = trace
    while len(_cache) > MAX_TRACES:
        _cache.popitem(last=False)
    return trace


def _size(n: int) -> str:
    return f"{n / 1e6:.1f} MB" if n >= 1e5 else f"{n / 1e3:.0f} kB"


def prepare_kernels():
    """Worker: install the extension's pre-built kernels into the cache (imports numba)."""
    return kernel_cache.ensure_installed()


def load_step(path) -> str:
    """The kernel step loading ``path`` runs (`kernel_cache.STEP_KERNELS`): its format's
    (`io.formats.Format.kernels`: a native or compact file's, Chrome JSON's, Perfetto's, or the
    other formats', stack profiles), the fallback's for a file no format recognises."""
    from ..io.formats import fallback

    return (format_of_file(path) or fallback()).kernels


def load_steps(job: Job, path, span=(0.0, 0.5)):
    """Load ``path`` (cached per file version); returns the `Trace`.

    A file that cannot be a trace fails here in milliseconds, before numba is imported.
    """
    path = check_trace_file(path)
    key = file_key(path)
    hit = cached_trace(key)
    if hit is not None:
        job.report(span[1], f"{os.path.basename(path)}: {len(hit):,} calls (already loaded)")
        return hit
    yield job.off_main(prepare_kernels)
    step = load_step(path)
    job.report(span[0], f"{kernel_cache.cold_note(step)}loading {os.path.basename(path)} ({_size(key[2])})")
    trace = yield job.off_main(read_trace, key)
    remember(key, trace)
    job.report(span[1], f"loaded {len(trace):,} calls, {trace.n_threads} thread"
                        f"{'s' if trace.n_threads != 1 else ''}")
    return trace


def compare_steps(job: Job, path_a, path_b, tau: float = 0.2, span=(0.0, 1.0), merge: bool = False, **options):
    """Load two traces and compare them (TraceDiff); the `Comparison`.  Progress runs over
    ``span``; the same files (unchanged), τ and ``merge`` without other options reuse the last
    result.  ``merge``: compare both runs' stacks merged (`io.stacks.merged_stacks`,
    speedscope's left heavy view; kept per loaded trace)."""
    from ..analysis.comparison import compare_traces

    lo, hi = span
    at = (lambda f: lo + f * (hi - lo))
    a = yield from load_steps(job, path_a, span=(at(0.0), at(0.2)))
    b = yield from load_steps(job, path_b, span=(at(0.2), at(0.4)))
    if merge:
        from ..io.stacks import merged_stacks

        a, b = (yield job.off_main(merged_stacks, a)), (yield job.off_main(merged_stacks, b))
        job.report(at(0.4), f"merged stacks: {len(a):,} and {len(b):,} call paths")
    key = comparison_key(path_a, path_b, tau, merge) if not options else None
    hit = cached_comparison(key) if key is not None else None
    if hit is not None and hit.a is a and hit.b is b:
        job.report(hi, f"compared: {hit.n_pairs_total:,} call pairs above τ={tau:g} (already compared)")
        return hit
    yield job.off_main(prepare_kernels)
    job.report(at(0.4), f"{kernel_cache.cold_note('compare')}comparing {len(a):,} with {len(b):,} calls")
    cmp = yield job.off_main(compare_traces, a, b, tau=tau, **options)
    if key is not None:
        remember_comparison(key, cmp)
    job.report(hi, f"compared: {cmp.n_pairs_total:,} call pairs above τ={tau:g}, "
                   f"{cmp.n_class_pairs:,} class pairs")
    return cmp


def comparison_key(path_a, path_b, tau, merge: bool = False) -> tuple:
    """The cache key of a comparison: both files' `file_key`, τ and whether their stacks were merged."""
    return (file_key(path_a), file_key(path_b), float(tau), bool(merge))


def cached_comparison(key):
    """The `Comparison` kept for a `comparison_key`, or None."""
    hit = _comparisons.get(key)
    if hit is not None:
        _comparisons.move_to_end(key)
    return hit


def remember_comparison(key, cmp):
    """Keep ``cmp`` as the comparison of ``key`` (the oldest goes beyond `MAX_COMPARISONS`)."""
    _comparisons[key] = cmp
    while len(_comparisons) > MAX_COMPARISONS:
        _comparisons.popitem(last=False)
    return cmp


# ------------------------------------------------------------ the comparison scene's record
def read_compare_record(scene) -> dict | None:
    """``scene["tracevis3d_compare"]`` as a dict ({trace_a, trace_b, tau, params, and
    trace_a_rel / trace_b_rel once saved}), or None (absent or unreadable)."""
    import json

    try:
        rec = json.loads(scene.get(COMPARE_KEY) or "null")
    except (TypeError, ValueError):
        rec = None
    return rec if isinstance(rec, dict) else None


def remember_compare_location(scene, blend_path) -> None:
    """Before saving to ``blend_path``: record both trace paths relative to it as well."""
    import json

    from .hygiene import relative_to_blend

    rec = read_compare_record(scene)
    if rec is None:
        return
    for side in ("a", "b"):
        rec[f"trace_{side}_rel"] = relative_to_blend(rec.get(f"trace_{side}"), blend_path)
    scene[COMPARE_KEY] = json.dumps(rec)


def recorded_compare_paths(scene, blend_path) -> tuple:
    """(path of A, path of B) of the comparison record: each the absolute path while that
    file exists, else the one relative to ``blend_path`` when it exists, else the recorded
    path (None without a record)."""
    from .hygiene import find_trace, from_blend_relative

    rec = read_compare_record(scene) or {}
    out = []
    for side in ("a", "b"):
        recorded = rec.get(f"trace_{side}") or None
        found = find_trace([recorded, from_blend_relative(rec.get(f"trace_{side}_rel"), blend_path)])
        out.append(found or recorded)
    return tuple(out)


def cached_paths() -> list[str]:
    """Absolute paths of the traces currently held (oldest first)."""
    return [k[0] for k in _cache]


def clear_cache() -> None:
    """Forget every loaded trace and comparison."""
    _cache.clear()
    _comparisons.clear()
