"""The icicle's parameters, where scripts and the layouts have always found them: declared
in `tracevis3d.params.icicle` (one declaration per parameter)."""
from __future__ import annotations

from ..params.icicle import COLOR_BY, EXTRUDE_MEASURES, ICICLE, IcicleParams  # noqa: F401
from ..params.kinds import parse_fold  # noqa: F401
from ..params.trace_kinds import THREAD_ORDERS  # noqa: F401
from ..params.shared import RESOLUTION, TIME_WINDOW


def checked_resolution(resolution) -> tuple:
    """(width, height) as ints within 16..16384 px (ValueError otherwise)."""
    return RESOLUTION.kind.check(resolution, "resolution")


def checked_window(window, name: str = "time_window"):
    """None, or (t0, t1) as finite floats with t0 < t1 (ValueError naming ``name``)."""
    return TIME_WINDOW.kind.check(window, name)
