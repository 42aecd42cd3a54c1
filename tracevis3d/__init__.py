"""TraceVis3D core: execution traces as numpy arrays, numba kernels, layouts.

Plain numpy/numba; no ``bpy`` import anywhere except in ``tracevis3d.blender``.

    >>> import tracevis3d
    >>> t = tracevis3d.load("trace.json")          # Chrome Trace Event JSON, .gz, native
    >>> tracevis3d.save(t, "trace.tv3d.npz")       # fast native file
    >>> tracevis3d.save(t, "trace.tv3c", format="compact")  # identical subtrees once
    >>> tracevis3d.structure(t).n_distinct_subtrees
    >>> s = tracevis3d.synthetic(100_000, threads=4, seed=1)
    >>> m = tracevis3d.merge(t)                    # merged stacks (Left Heavy): x is time summed

A view draws a merged trace with its measure on the x axis ("2k samples", "1 MB") and
"merged stacks (left heavy)" in its title; the views' ``merge`` parameter (``--merge`` on
the command line, "Merge stacks" in the panel) merges the trace it is given with `merge`.
"""
from __future__ import annotations

import os
from typing import TYPE_CHECKING, Any, Literal

from . import _numba_env  # noqa: F401  (must run before numba is imported)
from .model import (  # noqa: F401
    KIND_IO,
    KIND_NAMES,
    KIND_OTHER,
    KIND_RELEASE,
    KIND_WAIT,
    Trace,
    TraceError,
    TraceFormatError,
    TraceInvariantError,
    TraceWarning,
)

from .analysis.synchronisation import Synchronisation  # noqa: F401,E402  (numba-free at import)

from ._version import __version__  # noqa: F401,E402  (the one version: tracevis3d/_version.py)

if TYPE_CHECKING:  # the modules behind them import numba: loaded when first used
    from .analysis.structure import Structure
    from .analysis.comparison import Comparison
    from .analysis.hierarchy import Hierarchy
    from .analysis.critical_path import CriticalPath
    from .io.memray import MemoryCapture

#: what `load` and `save` accept as a file name
PathLike = str | os.PathLike[str]


def _kernels_ready() -> None:
    """The shipped pre-built kernels (wheel or extension) into numba's cache, once per process
    (`tracevis3d.kernel_cache.ensure_installed`; imports numba)."""
    from .kernel_cache import ensure_installed

    ensure_installed()


def load(path: PathLike, **options: Any) -> Trace:
    """Load a trace; the format is sniffed from the content (not the name).

    Chrome Trace Event JSON (object or array form, ``.json`` or gzip-compressed),
    the native TraceVis3D file or the compact file written by `save`.  Options go to
    the importer (see `tracevis3d.io.chrome.load_chrome`).
    """
    from .io import load as _load
    from .io.sniff import check_trace_file

    check_trace_file(path)  # pure Python: a file that is no trace fails before numba compiles
    _kernels_ready()
    return _load(path, **options)


def load_memory(path: PathLike, **options: Any) -> "MemoryCapture":
    """Load a memray capture (``python -m memray run -o CAPTURE ...``) as arrays: memray's own
    peak, allocation count and leaked bytes, the allocation sites and stacks, every range with
    its lifetime on the capture's clock (`tracevis3d.io.memray.MemoryCapture`).  memray 1.20's
    captures are read by TraceVis3D's own reader (compressed ones need ``lz4``); ``--native`` and
    ``--aggregate`` captures and other format versions through memray's FileReader
    (``reader="auto"|"own"|"memray"``).  A Chrome JSON trace's memory-infra dumps are read too:
    the format table's memory readers decide (`tracevis3d.io.load_memory`)."""
    from .io import load_memory as _load_memory

    _kernels_ready()
    return _load_memory(path, **options)


def merge(trace: Trace) -> Trace:
    """``trace`` as merged stacks: speedscope's "Left Heavy" view (`tracevis3d.io.stacks.merge_trace`).

    Per thread, the calls with the same frame path (the functions from the thread's root down
    to them) become one call as wide as their summed self time, children side by side from
    their parent's left edge, the heaviest first.  x is then time summed over the calls, no
    longer a clock (``meta["merged"]`` True, ``meta["x_unit"]`` "µs"); counters, flows,
    instants and async slices, which live on the clock, are left out.  A trace that is already
    merged (a pprof, collapsed-stacks or callgrind file: x in samples, bytes, Ir...) is
    returned as it is.  The result is kept for as long as ``trace`` lives: a view rebuilt with
    other parameters does not merge again.
    """
    if not isinstance(trace, Trace):
        raise TypeError(f"merge needs a Trace, got {type(trace).__name__}")
    from .io.stacks import merged_stacks

    _kernels_ready()
    return merged_stacks(trace)


def save(trace: Trace, path: PathLike, format: Literal["native", "compact", "chrome"] | None = "native") -> None:
    """Write ``trace`` to ``path`` with the writer the format table names (`tracevis3d.io.formats`).

    ``format="native"``: the fast native file (versioned, uncompressed .npz).
    ``format="compact"``: the compact file (SEAT's Compact Trace Format: identical
    subtrees stored once, times delta/XOR-encoded and compressed; lossless, see
    `tracevis3d.io.compact`).  `load` recognises both.
    ``format="chrome"``: Chrome Trace Event JSON (gzip-compressed when ``path`` ends in
    ``.gz``) that Perfetto, chrome://tracing and speedscope open, written streamed
    (`tracevis3d.io.chrome_writer`: bounded memory at any size).
    ``format=None``: chosen by the file name's ending (`io.formats.writer_for`: ``.tv3c``
    compact, ``.json``/``.json.gz`` Chrome JSON, else native).
    """
    from .io.formats import writer_for, writer_of

    write = writer_of(writer_for(path, format))
    write(trace, path)  # whole or not at all; errors name ``path`` (`io.atomic.replaced_whole`)


def structure(trace: Trace) -> Structure:
    """The trace as a DAG of identical subtrees (`tracevis3d.analysis.structure.Structure`):
    ``n_distinct_subtrees``, ``sharing_ratio``, ``top_repeated()``, ..."""
    _kernels_ready()
    from .analysis.structure import structure_of

    return structure_of(trace)


def synthetic(n_calls: int = 10_000, threads: int = 1, seed: int = 0, **options: Any) -> Trace:
    """A synthetic, realistic trace for tests and benchmarks (see tracevis3d.synthesis)."""
    _kernels_ready()
    from .io.synthesis import synthetic_trace

    return synthetic_trace(n_calls, threads=threads, seed=seed, **options)


def save_synthetic(path: PathLike, n_calls: int = 10_000, threads: int = 1, seed: int = 0, **options: Any) -> None:
    """Write ``synthetic(n_calls, threads, seed, **options)`` to a native file, generated
    straight into the file's mapped pages: bounded memory at any size (see
    tracevis3d.io.synthesis.save_synthetic)."""
    _kernels_ready()
    from .io.synthesis import save_synthetic as _save_synthetic

    _save_synthetic(path, n_calls, threads=threads, seed=seed, **options)


def perturb(trace: Trace, seed: int = 0, **options: Any) -> Trace:
    """A "second run" of ``trace`` for comparisons (see tracevis3d.synthesis.perturb)."""
    from .io.synthesis import perturb as _perturb

    return _perturb(trace, seed=seed, **options)


def compare(a: Trace, b: Trace, tau: float = 0.2, **options: Any) -> Comparison:
    """Compare two traces (TraceDiff); see `tracevis3d.comparison.compare_traces`."""
    _kernels_ready()
    from .analysis.comparison import compare_traces

    return compare_traces(a, b, tau=tau, **options)


def synchronisation(trace: Trace, **options: Any) -> Synchronisation:
    """Who waits on whom (SyncTrace): `tracevis3d.analysis.Synchronisation` with the
    correspondences (``wait_call``, ``release_call``, ``object``), dur_w/dur_r/dur_o and per
    thread pair totals; ``.summary()`` is a plain-text report."""
    _kernels_ready()
    from .analysis.synchronisation import synchronisation as _sync

    return _sync(trace, **options)


def critical_path(trace: Trace, sync: Synchronisation | None = None, threads=None, end=None) -> "CriticalPath":
    """Why did it take this long: the path that set the wall time, walked back from the end of
    the run across the hand-offs between threads (`tracevis3d.analysis.critical_path`);
    segments (``thread``, ``start``, ``end``, ``call``, ``why``) tile the run, ``.summary()``
    gives the share of the wall time per thread and function.  ``sync`` reuses a
    `synchronisation` of the trace; ``threads`` limits the threads it may take; ``end``
    ((thread, time)) walks back from there instead of the run's end."""
    _kernels_ready()
    from .analysis.critical_path import critical_path as _critical_path

    return _critical_path(trace, sync=sync, threads=threads, end=end)


def hierarchy(trace: Trace) -> "Hierarchy":
    """EXTRAVIS' static hierarchy (package → module → class → function, and the threads) and
    call relations of ``trace``: `tracevis3d.analysis.hierarchy.Hierarchy`."""
    _kernels_ready()
    from .analysis.hierarchy import hierarchy as _hierarchy

    return _hierarchy(trace)


def call_importance(trace: Trace, window: int = 25, power: float = -1.0, level: str = "function"):
    """W_i = f_i^p per call (EXTRAVIS Eq. 2), indexed like the trace's calls:
    `tracevis3d.analysis.hierarchy.call_importance`."""
    _kernels_ready()
    from .analysis.hierarchy import call_importance as _importance

    return _importance(trace, window=window, power=power, level=level)
