"""The warm-up of every format reader: the tiny valid file each row of the table carries
(`tracevis3d.io.formats.Format.sample`, made in code by `tracevis3d.io.samples` or its reader's
module) loaded through `tracevis3d.io.load_bytes` (a memory capture's, memray's, through
`tracevis3d.io.load_memory_bytes`), so each reader's kernels are compiled (or loaded from the
cache) before a user's first file of that format.  `load_every_format` is the
warm-up's "formats" step (`tracevis3d.warmup`).
"""
from __future__ import annotations

from .io.formats import samples

__all__ = ["FORMAT_SAMPLES", "load_every_format"]


#: a tiny valid file of each readable format: (format key, maker of its bytes), the table's
#: samples (`tracevis3d.io.formats.Format.sample`)
FORMAT_SAMPLES = samples()


def load_every_format(strict: bool = False) -> dict:
    """Load each of `FORMAT_SAMPLES` once; {format: calls (allocator records of a format read
    only for its memory, memray's), or the error's text}.  ``strict``: an error is raised (the
    tests check every sample loads)."""
    from .io import load_bytes, load_memory_bytes
    from .io.containers import open_head
    from .io.formats import Head, detect

    out = {}
    for key, make in FORMAT_SAMPLES:
        data = make()
        try:
            head, whole, _ = open_head(data, f"<warmup {key}>", True, len(data) << 10)
            fmt = detect(Head(head, whole=whole))
            if fmt is None or fmt.key != key:
                raise ValueError(f"the {key} sample is sniffed as {fmt.key if fmt else 'nothing'}")
            if fmt.readable:
                out[key] = len(load_bytes(data, source=f"<warmup {key}>", warn=False))
            else:  # a memory capture: its memory reader (`Format.memory`)
                out[key] = load_memory_bytes(data, source=f"<warmup {key}>", warn=False).n_allocations
        except Exception as e:  # noqa: BLE001 (a warm-up reports and goes on)
            if strict:
                raise
            out[key] = f"{type(e).__name__}: {e}"
    return out
