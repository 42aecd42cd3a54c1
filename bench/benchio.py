"""Bench outputs users keep (``--json`` tables) written whole or not at all, through this
checkout's `tracevis3d/io/atomic.py` (`write_whole`: a temporary beside the target, flushed,
renamed over it).  The module is loaded by its path -- it needs only the standard library -- so
a bench that imports another checkout's tracevis3d still writes its tables this way."""
from __future__ import annotations

import importlib.util
import json
import pathlib

_ATOMIC = pathlib.Path(__file__).resolve().parents[1] / "tracevis3d" / "io" / "atomic.py"


def _atomic():
    spec = importlib.util.spec_from_file_location("tv3d_bench_atomic", _ATOMIC)
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod


def write_json_whole(path, obj, **dump_options) -> None:
    _atomic().write_whole(path, json.dumps(obj, **dump_options))
