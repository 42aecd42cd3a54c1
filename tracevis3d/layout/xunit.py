"""What x is in a figure, and how its values are written (bpy-free).

x is time (µs) unless the trace is merged stacks (`io.stacks.is_merged`): then it is the
trace's measure (samples, bytes, Ir, time summed).  Every view formats x through one `XUnit`
resolved from the trace (`x_unit_of`): ticks, values, titles, legends.  Titles say what a
trace that is not calls on a clock is (`trace_kind_text`: merged stacks, or sampled every so
often).
"""
from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np

UNITS = ((1e6, "s"), (1e3, "ms"), (1.0, "µs"), (1e-3, "ns"))


#: past 999 s a duration reads in minutes, then hours, then days (not "1e+03 s")
_LONG_UNITS = ((86400e6, "days"), (3600e6, "h"), (60e6, "min"))


def fmt_time(us: float) -> str:
    """A duration in µs with a unit chosen for its size (3 significant digits): ns to s, and
    past 999 s the largest of min, h and days that it reaches ("16.7 min", "10 h", "347 days")."""
    a = abs(us)
    if a >= 999.5e6:
        scale, unit = next((s, u) for s, u in _LONG_UNITS if a >= s)
        return f"{us / scale:.3g} {unit}"
    for scale, unit in UNITS:
        if a >= scale or scale == 1e-3:
            return f"{us / scale:.3g} {unit}"
    return f"{us:.3g} µs"  # pragma: no cover


def nice_ticks(span_us: float, target: int = 6) -> tuple:
    """(tick values in µs from 0, unit scale, unit name, decimals): a 1-2-5 step giving about
    ``target`` ticks over ``span_us``, every tick written in the same unit."""
    span_us = max(float(span_us), 1e-9)
    raw = span_us / target
    mag = 10 ** math.floor(math.log10(raw))
    step = next(m * mag for m in (1, 2, 5, 10) if m * mag >= raw)
    ticks = np.arange(0.0, span_us * (1 + 1e-9), step)
    scale, unit = next(((s, u) for s, u in UNITS if ticks[-1] >= s), (1e-3, "ns"))
    dec = max(0, -int(math.floor(math.log10(step / scale) + 1e-9)))
    return ticks, scale, unit, dec


def tick_texts(ticks, scale, unit, dec) -> list:
    """The ticks of `nice_ticks` written in their unit; past 10^6 of the unit (a window of more
    than 11 days in seconds: a user's ``--window 0:1e300`` wrote 294-digit labels over each
    other) in powers of ten, three digits each ("2e+08 s")."""
    if len(ticks) and abs(ticks[-1] / scale) >= 1e6:
        return [("0" if t == 0 else f"{t / scale:.3g} {unit}") for t in ticks]
    return [("0" if t == 0 else f"{t / scale:.{dec}f} {unit}") for t in ticks]


# ----------------------------------------------------------------------------- the x axis' unit
#: SI prefixes of a measure (a count, bytes), the largest first
_SI = ((1e12, "T"), (1e9, "G"), (1e6, "M"), (1e3, "k"), (1.0, ""))
#: time units a merged trace's measure may be written in → µs per unit
_TIME_MEASURES = {"µs": 1.0, "us": 1.0, "microseconds": 1.0, "ns": 1e-3, "nanoseconds": 1e-3, "ms": 1e3,
                  "milliseconds": 1e3, "s": 1e6, "seconds": 1e6}
_BYTE_MEASURES = ("bytes", "byte", "B")


def _si(v: float) -> tuple:
    """(scale, prefix) of `_SI` for a value of size ``v`` (1, "" below 1000)."""
    a = abs(float(v))
    return next(((s, p) for s, p in _SI if a >= s), (1.0, ""))


def _g3(x: float) -> str:
    """``x`` with 3 significant digits, never with an exponent ("1.23", "120", "0.5", "1000")."""
    s = f"{x:.3g}"
    return f"{x:.0f}" if "e" in s else s


@dataclass(frozen=True)
class XUnit:
    """What a figure's x axis measures, resolved once per figure from its trace (`x_unit_of`).

    ``measure`` "" (`TIME`): time on the trace's clock, in µs: `fmt_time`, `nice_ticks`,
    `tick_texts` and `window_text`, as every view wrote it.  Otherwise the trace is merged
    stacks (`io.stacks.is_merged`, speedscope's "Left Heavy") and x is that measure: a
    count ("samples", "Ir", ...: SI prefixes, "2k samples", "1.5M Ir"), bytes ("1.2 MB"), or
    time summed over the calls of a merged timed trace ("µs", "ns", ...: written as time,
    but not a clock).  Every method takes and returns values in the trace's own unit."""

    measure: str = ""

    @property
    def merged(self) -> bool:
        """x is a merged trace's measure, not a clock."""
        return bool(self.measure)

    @property
    def is_time(self) -> bool:
        """Values are durations (a clock, or time summed by merging)."""
        return not self.measure or self.measure in _TIME_MEASURES

    @property
    def is_bytes(self) -> bool:
        return self.measure in _BYTE_MEASURES

    @property
    def us_per_unit(self) -> float:
        return _TIME_MEASURES.get(self.measure, 1.0)

    @property
    def quantity(self) -> str:
        """The measure in words, where a view says what it measures ("inclusive time",
        "inclusive samples", "inclusive bytes")."""
        if self.is_time:
            return "time"
        return "bytes" if self.is_bytes else self.measure

    def fmt(self, v: float) -> str:
        """A value with its unit, 3 significant digits ("1.2 ms", "12.3k samples", "1.2 MB",
        "734 Ir")."""
        v = float(v)
        if self.is_time:
            return fmt_time(v * self.us_per_unit)
        scale, prefix = _si(float(f"{v:.3g}"))  # 999,600 is "1M", not "1e+03k"
        if self.is_bytes:
            return f"{_g3(v / scale)} {prefix}B"
        return f"{_g3(v / scale)}{prefix} {self._noun(v)}"

    def _noun(self, v: float) -> str:
        """The measure's word for ``v`` of it: "1 sample", "2 samples"."""
        return self.measure[:-1] if v == 1 and self.measure.endswith("s") else self.measure

    def total_text(self, v: float) -> str:
        """A total as a title gives it: exact with thousands separators for a whole count
        below 10^7 ("12,345 samples"), else `fmt`."""
        v = float(v)
        if not self.is_time and not self.is_bytes and abs(v) < 1e7 and abs(v - round(v)) < 1e-6:
            n = int(round(v))
            return f"{n:,} {self._noun(n)}"
        return self.fmt(v)

    def nice_ticks(self, span: float, target: int = 6) -> tuple:
        """(ticks from 0 in the trace's unit, scale, unit text, decimals) for `tick_texts`:
        `nice_ticks` for time; for a measure a 1-2-5 step, the SI prefix of the last tick."""
        if self.is_time:
            k = self.us_per_unit
            ticks, scale, unit, dec = nice_ticks(float(span) * k, target)
            return ticks / k, scale / k, unit, dec
        span = max(float(span), 1e-9)
        raw = span / target
        mag = 10 ** math.floor(math.log10(raw))
        step = next(m * mag for m in (1, 2, 5, 10) if m * mag >= raw)
        ticks = np.arange(0.0, span * (1 + 1e-9), step)
        scale, prefix = _si(ticks[-1])
        dec = max(0, -int(math.floor(math.log10(step / scale) + 1e-9)))
        unit = f" {prefix}B" if self.is_bytes else f"{prefix} {self.measure}"
        return ticks, scale, unit, dec

    def tick_texts(self, ticks, scale, unit, dec) -> list:
        """The ticks of `XUnit.nice_ticks` written in their unit, "0" for zero."""
        if self.is_time:
            return tick_texts(ticks, scale, unit, dec)
        return [("0" if t == 0 else f"{t / scale:.{dec}f}{unit}") for t in ticks]

    def range_text(self, a: float, b: float) -> str:
        """``a`` to ``b`` in the unit of ``b``: "6.94 – 7.28 ms", "2k – 4.1k samples"."""
        if self.is_time:
            k = self.us_per_unit
            scale, unit = next(((sc, u) for sc, u in UNITS if abs(b * k) >= sc), UNITS[-1])
            first = "0" if abs(a) < 0.0005 * abs(b) else f"{a * k / scale:.3g}"
            return f"{first} – {b * k / scale:.3g} {unit}"
        scale, prefix = _si(b)
        first = "0" if abs(a) < 0.0005 * abs(b) else _g3(a / scale) + prefix
        return f"{first} – {self.fmt(b)}"

    def window_text(self, t0: float, t1: float, origin: float = 0.0) -> str:
        """A title's words for the span shown (`window_text` for a clock)."""
        if not self.merged:
            return window_text(t0, t1, origin)
        return f"window {self.range_text(t0 - origin, t1 - origin)}"


#: the x axis of a trace on a clock
TIME = XUnit()


def x_unit_of(trace) -> XUnit:
    """The `XUnit` of ``trace``'s x axis: `TIME`, or its merged measure (``meta["x_unit"]``)."""
    from ..io.stacks import is_merged, x_unit

    return XUnit(x_unit(trace) or "samples") if is_merged(trace) else TIME


def sampling_interval(trace) -> tuple:
    """(interval µs, whole) of a sampled trace: ``meta["sampling_interval_us"]``, else the
    median interval of the JavaScript profiles a Chrome trace or a ``.cpuprofile`` holds
    (``meta["js_profiles"]``); ``whole``: every thread's calls were made from samples (not
    a Chrome trace whose JavaScript threads alone were sampled).  (None, False) for calls on
    a clock and for a merged trace."""
    meta = trace.meta if isinstance(trace.meta, dict) else {}
    if meta.get("merged"):
        return None, False
    profs = [p for p in (meta.get("js_profiles") or []) if isinstance(p, dict)]
    try:
        v = float(meta.get("sampling_interval_us") or 0.0)
    except (TypeError, ValueError):
        v = 0.0
    if not (v > 0 and math.isfinite(v)):
        steps = [float(p.get("interval_us") or 0.0) for p in profs]
        steps = [s for s in steps if s > 0 and math.isfinite(s)]
        v = float(np.median(steps)) if steps else 0.0
    if not v > 0:
        return None, False
    return v, not profs or len(profs) >= trace.n_threads


def trace_kind_text(trace) -> str:
    """What a title says of a trace that is not calls on a clock: "merged stacks (left heavy)"
    (x is a measure), "sampled every 1 ms" (calls made from samples: each lasts at least
    that long, shorter ones are missing), "JS sampled every 131 µs" (a Chrome trace whose
    JavaScript threads were sampled); "" otherwise."""
    if x_unit_of(trace).merged:
        est = trace.meta.get("estimated_from")  # a call graph's tree (pstats): not measured stacks
        return f"merged stacks estimated from {est}" if est else "merged stacks (left heavy)"
    step, whole = sampling_interval(trace)
    if step is None:
        return ""
    return f"{'' if whole else 'JS '}sampled every {fmt_time(step)}"


def merged_total(sel) -> float:
    """The measure a merged trace's selection ``sel`` (`select.select_calls`) shows: its
    root calls' widths (each thread's roots laid end to end from 0), clipped to its window."""
    trace, idx = sel.trace, sel.idx
    roots = idx[trace.depth[idx] == 0] if idx.size else idx
    if not roots.size:
        return 0.0
    w = np.minimum(trace.end[roots], sel.t1) - np.maximum(trace.start[roots], sel.t0)
    return float(np.maximum(w, 0.0).sum())


def window_text(t0: float, t1: float, origin: float = 0.0) -> str:
    """A title's words for the span shown: ``400 ms window from 500 ms`` (from ``origin``, the
    time the view's axis counts from)."""
    return f"{fmt_time(t1 - t0)} window from {fmt_time(t0 - origin)}"
