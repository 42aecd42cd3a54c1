"""GHC's text profiling report (``+RTS -p``, ``PROGRAM.prof``) → one merged `Trace`.

The report (the GHC User's Guide, "Time and allocation profiling"): a title line ("Time and
Allocation Profiling Report"), the command line, ``total time = … (N ticks @ I us, …)`` and
``total alloc = … bytes``, a flat table of the costliest cost centres, then the cost-centre
stack tree: a header (``COST CENTRE  MODULE  [SRC]  no.  entries  %time %alloc  %time %alloc
[ticks  bytes]``) and one row per stack, indented one space per level under ``MAIN``.  The
columns after the name are read from the right (numbers), so a cost centre named with blanks
(an ``SCC`` string) stays whole; ``SRC`` (GHC ≥ 8.0) is the source span.

Like the JSON report (`tracevis3d.io.ghc`, speedscope's ``haskell.ts``) it is an aggregate: the
tree is merged (`stacks.merged_trace`, speedscope's Left Heavy), each row weighing its
individual cost.  ``measure="ticks"`` (the default) weighs by the ``ticks`` column where the
report has it (``+RTS -P``) and x is in ticks, else by the individual ``%time`` and x is in
"% time"; ``measure="alloc"`` by ``bytes`` (x in bytes), else ``%alloc``.  A frame is
"MODULE.LABEL" with the source span as its file unless it is ``<built-in>``,
``<entire-module>`` and the like; one cost centre under many stacks is one function.

Bad input: a file without the tree's header, a row that is not ``name module [src] numbers``
or a number that does not parse raises `TraceFormatError` naming the file and the line.
A row more than one level deeper than the row before is taken as that row's child (repair
``ghc_depth``).
"""
from __future__ import annotations

import re

import numpy as np

from ..filenumbers import read_float, read_int
from ..model import TraceFormatError
from .collapsed import Repairs
from .limits import resolve_limits
from .profile_json import KeyedFrames
from .stacks import StackProfile, add_row, merged_trace

__all__ = ["load_ghc_prof"]

_TOTAL_TIME = re.compile(r"total time\s*=\s*([\d.]+)\s*secs\s*\((\d+) ticks @ ([\d.]+) (us|ms)", re.ASCII)
_TOTAL_ALLOC = re.compile(r"total alloc\s*=\s*([\d,]+) bytes", re.ASCII)
_NUM = re.compile(r"^\d+(?:\.\d*)?(?:[eE][-+]?\d+)?$", re.ASCII)


def _interval_us(tt) -> float | None:
    """The tick interval in µs of a ``total time`` match (None without one, or when it is not a
    plain number of at most 1e9 µs)."""
    if tt is None:
        return None
    v = read_float(tt.group(3), 1e9)
    return None if v is None else v * (1000.0 if tt.group(4) == "ms" else 1.0)


def _header(lines: list) -> tuple:
    """(index of the tree's header line, its columns after the name) or (-1, None)."""
    for i, ln in enumerate(lines):
        if ln.lstrip().startswith("COST CENTRE") and " no." in ln and "entries" in ln:
            cols = ln.split()[2:]  # "COST CENTRE" is two words
            return i, cols
    return -1, None


def load_ghc_prof(data, *, source: str = "<ghc>", limits=None, kind_rules=None, warn: bool = True,
                  measure: str = "ticks", **_options):
    """A GHC ``-p`` text report's bytes → `Trace` (module docstring)."""
    if measure not in ("ticks", "alloc"):
        raise ValueError(f"measure must be one of ticks, alloc, not {measure!r}")
    lim = resolve_limits(limits)
    rep = Repairs()
    raw = bytes(data)
    try:
        text = raw.decode("utf-8")
    except UnicodeDecodeError as e:
        text = raw.decode("utf-8", "replace")
        rep.add("invalid_utf8", 1, f"byte {e.start}", "text that is not valid UTF-8: U+FFFD")
    del raw
    lines = text.replace("\t", "        ").splitlines()
    h, cols = _header(lines)
    if h < 0:
        raise TraceFormatError(f"{source}: no cost-centre tree (a 'COST CENTRE ... no. entries' header): "
                               f"not a complete GHC profiling report")
    if cols[:1] != ["MODULE"] or "no." not in cols:
        raise TraceFormatError(f"{source}: line {h + 1}: unexpected columns {' '.join(cols)[:120]!r}")
    has_src = cols[1] == "SRC"
    numeric = cols[cols.index("no."):]
    k_num = len(numeric)
    col_of = {}
    for j, c in enumerate(numeric):  # the individual %time/%alloc are the first of each
        col_of.setdefault(c, j)
    ticks_col, bytes_col = col_of.get("ticks"), col_of.get("bytes")
    if measure == "ticks":
        col, unit = (ticks_col, "ticks") if ticks_col is not None else (col_of.get("%time"), "% time")
    else:
        col, unit = (bytes_col, "bytes") if bytes_col is not None else (col_of.get("%alloc"), "% alloc")
    if col is None:
        raise TraceFormatError(f"{source}: line {h + 1}: no column to weigh by ({measure})")
    head = "\n".join(lines[:h])
    tt = _TOTAL_TIME.search(head)
    ta = _TOTAL_ALLOC.search(head)
    program = next((ln.strip() for ln in lines[1:h] if ln.strip() and "Profiling Report" not in ln), "program")
    program = program.split(" +RTS")[0][:200]
    n_fixed = 2 if has_src else 1  # module, [src] after the name
    max_depth = int(lim.max_stack_depth)
    frames = KeyedFrames(lim.max_name_chars)
    parent, frame, weight = [], [], []
    stack: list = []  # the node of each level open above this row
    for i in range(h + 1, len(lines)):
        ln = lines[i]
        if not ln.strip():
            continue
        tok = ln.split()
        if len(tok) < k_num + n_fixed + 1:
            raise TraceFormatError(f"{source}: line {i + 1}: expected 'cost-centre module{' src' if has_src else ''} "
                                   f"and {k_num} numbers, got {ln.strip()[:80]!r}")
        nums = tok[-k_num:]
        val = nums[col]
        if not _NUM.match(val) or not all(_NUM.match(x) for x in nums):
            raise TraceFormatError(f"{source}: line {i + 1}: expected numbers in its last {k_num} columns, "
                                   f"got {' '.join(nums)[:80]!r}")
        w = float(val)
        if w > lim.max_abs_time:
            raise TraceFormatError(f"{source}: line {i + 1}: {val[:40]} is past the limit of {lim.max_abs_time:g} "
                                   f"(max_abs_time=)")
        rest = tok[:-k_num]
        label = " ".join(rest[:-n_fixed])
        module = rest[-n_fixed]
        src = rest[-1] if has_src else ""
        depth = len(ln) - len(ln.lstrip(" "))
        if rep.row_depth(depth, stack, max_depth, f"line {i + 1}", "ghc_depth",
                         "a row more than one level deeper than the row before: taken as its child") is None:
            continue
        if len(parent) >= lim.max_events:
            raise TraceFormatError(f"{source}: line {i + 1}: more than {lim.max_events} rows (max_events=)")
        key = (label, module, src)
        fid = frames.by_key.get(key)
        if fid is None:
            fid = frames.add_keyed(key, f"{module}.{label}", src if src and not src.startswith("<") else "")
        add_row(stack, parent, frame, weight, fid, w)
    if not parent:
        raise TraceFormatError(f"{source}: line {h + 1}: the cost-centre tree has no rows")
    prof = StackProfile(f"{program} {'time' if measure == 'ticks' else 'allocation'}", np.array(parent, np.int64),
                        np.array(frame, np.int64), np.arange(len(parent), dtype=np.int64),
                        sample_weight=np.array(weight, np.float64))
    meta = {"ghc_measure": measure, "program": program,
            "total_ticks": read_int(tt.group(2), 0) if tt else None,  # past int64: not a count (None)
            "tick_interval_us": _interval_us(tt),
            "total_alloc": read_int(ta.group(1).replace(",", ""), 0) if ta else None}
    trace = merged_trace(frames, [prof], unit=unit, source=source, fmt="ghc-prof", limits=lim, input_bytes=len(data),
                         kind_rules=kind_rules, meta=meta, warn=warn, cat="haskell")
    return rep.apply(trace, source, warn)
