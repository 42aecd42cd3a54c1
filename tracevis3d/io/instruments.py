"""Instruments call trees pasted as text ("Deep Copy" of a call tree, Xcode Instruments) → one
merged `Trace`.

The text is tab-separated: a header row naming the columns (``Running Time``/``Weight``,
``Self``..., ``Bytes Used``/``Count`` for allocations, ``Source Path``, ``Symbol Name`` or,
since Instruments 16, ``Symbol Names``), then one row per call-tree node in pre-order, its
depth told by the spaces before its symbol (``Symbol Names`` rows all start with the first
row's indentation, which is not depth).  Read as speedscope's ``instruments.ts``
(``importFromInstrumentsDeepCopy``) reads it: each row is a frame entered at the running
total and as wide as its weight, or as its children together when they are wider; a frame
is (source path, symbol).

Weights: ``4273.0ms   99.9%``, ``4.93 s  100.0%``, ``96.08 Gc  100.0%``, `` 429.93 MB  100.0%``:
a number, a unit, a percentage.  speedscope keeps only the integer part of the number
(``parseInt``); here the whole number is kept.  Time (ns, µs/us, ms, s, min) is converted
to µs (``meta["x_unit"] = "µs"``), cycles (cycles, Kc, Mc, Gc) to cycles, sizes (Bytes, KB,
MB, GB, 1024-based as speedscope reads them) to bytes.

Repairs: a row deeper than one more than the row before it (speedscope refuses the file:
"Invalid format") is taken as a child of that row (``instruments_depth``); a weight that is
not a number and a unit known here weighs 0 (``instruments_weight``).
"""
from __future__ import annotations

import re

import numpy as np

from ..model import TraceFormatError
from .collapsed import Repairs, frame_table, text_buffer
from .limits import DEFAULT_LIMITS
from .stacks import StackProfile, add_row, merged_trace, source_name

__all__ = ["load_instruments_text"]

_WEIGHT = re.compile(r"^\s*(\d+(?:\.\d+)?)\s?([^\s\d%]+)\s+(?:\d+(?:\.\d+)?)%")
#: unit → (family, factor to the family's unit)
_UNITS = {"ns": ("µs", 1e-3), "µs": ("µs", 1.0), "us": ("µs", 1.0), "ms": ("µs", 1e3), "s": ("µs", 1e6),
          "min": ("µs", 6e7), "cycles": ("cycles", 1.0), "Kc": ("cycles", 1e3), "Mc": ("cycles", 1e6),
          "Gc": ("cycles", 1e9), "Bytes": ("bytes", 1.0), "KB": ("bytes", 1024.0), "MB": ("bytes", 1024.0 ** 2),
          "GB": ("bytes", 1024.0 ** 3)}


def load_instruments_text(data, *, source: str = "<bytes>", limits=None, kind_rules=None, warn: bool = True,
                          **_common):
    """Load an Instruments deep copy (``data``: its bytes) as one merged trace (module docstring)."""
    lim = limits if limits is not None else DEFAULT_LIMITS
    rep = Repairs()
    n_input = len(data) if not isinstance(data, np.ndarray) else data.nbytes
    buf, _ = text_buffer(data, source, rep)
    text = buf.tobytes().decode("utf-8", "replace")
    lines = text.split("\n")
    header = lines[0].rstrip("\r").lstrip("\ufeff").split("\t")
    col = {name: k for k, name in reversed(list(enumerate(header)))}
    w_col = next((col[c] for c in ("Weight", "Running Time", "Bytes Used") if c in col), None)
    s_col = col.get("Symbol Name", col.get("Symbol Names"))
    if w_col is None or s_col is None:
        raise TraceFormatError(f"{source}: line 1: not an Instruments call tree header (it names no weight column "
                               f"and no symbol column): {lines[0][:80]!r}")
    p_col = col.get("Source Path")
    strip_first = "Symbol Name" not in col  # "Symbol Names": every row indented by the first row's spaces
    lead = None
    frame_ix: dict = {}
    names, files = [], []
    parent, frame, weight = [], [], []
    stack: list = []
    family = None
    max_depth = int(lim.max_stack_depth)
    for lineno, line in enumerate(lines[1:], start=2):  # one row per call-tree node
        row = line.rstrip("\r").split("\t")
        if len(row) <= s_col:
            if line.strip():
                rep.add("instruments_row", 1, f"line {lineno}", "a row without a symbol column: skipped")
            continue
        sym = row[s_col]
        if strip_first:
            if lead is None:
                lead = len(sym) - len(sym.lstrip(" "))
            sym = sym[lead:] if sym[:lead].strip() == "" else sym.lstrip(" ")
        name = sym.strip()
        if not name:
            continue
        depth = len(sym) - len(sym.lstrip())
        if rep.row_depth(depth, stack, max_depth, f"line {lineno}", "instruments_depth",
                         "a row more than one level deeper than the row before it: taken as its child") is None:
            continue
        m = _WEIGHT.match(row[w_col]) if w_col < len(row) else None
        w = 0.0
        if m and m.group(2) in _UNITS:
            fam, factor = _UNITS[m.group(2)]
            if family is None:
                family = fam
            if fam == family:
                w = float(m.group(1)) * factor
            else:
                rep.add("instruments_weight", 1, f"line {lineno}", f"a weight in {fam} among weights in {family}: 0")
        elif row[w_col].strip() if w_col < len(row) else False:
            rep.add("instruments_weight", 1, f"line {lineno}", "a weight that is not 'number unit percent%': 0")
        file = row[p_col].strip() if p_col is not None and p_col < len(row) else ""
        key = (name, file)
        j = frame_ix.get(key)
        if j is None:
            j = frame_ix[key] = len(names)
            names.append(name)
            files.append(file)
        add_row(stack, parent, frame, weight, j, w)
    if not frame:
        raise TraceFormatError(f"{source}: an Instruments call tree without rows: nothing to show")
    parent_a = np.asarray(parent, np.int64)
    w_a = np.asarray(weight, np.float64)
    # speedscope's widths: a row is as wide as its weight or as its children together, if wider
    width = w_a.copy()
    child_sum = np.zeros(len(parent))
    for k in range(len(parent) - 1, -1, -1):  # children come after their parent: bottom up
        width[k] = max(w_a[k], child_sum[k])
        p = parent[k]
        if p >= 0:
            child_sum[p] += width[k]
    self_w = np.maximum(width - child_sum, 0.0)
    frames = frame_table(names, lim, files=files)
    profile = StackProfile(thread_name=source_name(source), stack_parent=parent_a,
                           stack_frame=np.asarray(frame, np.int64), sample_stack=np.arange(parent_a.size),
                           sample_weight=self_w)
    meta = {"instruments_columns": header, "instruments_rows": len(frame)}
    trace = merged_trace(frames, [profile], unit=family or "samples", source=source, fmt="instruments-text",
                         limits=lim, input_bytes=n_input, kind_rules=kind_rules, meta=meta, warn=warn)
    return rep.apply(trace, source, warn)
