"""The loaders of the formats whose readers predate the format table (`tracevis3d.io.formats`),
in the table's calling convention: ``loader(data, source=..., limits=..., **options)``."""
from __future__ import annotations

import io

from .limits import resolve_limits


def load_native_data(data, *, source: str = "<native>", limits=None, **_options):
    """A native file's bytes (the path-based `native.load_native` maps a file in place)."""
    from .native import load_native

    return load_native(io.BytesIO(bytes(data)), limits=resolve_limits(limits), source=source)


def load_compact_data(data, *, source: str = "<compact>", limits=None, **_options):
    from .compact import load_compact

    return load_compact(data, source=source, limits=resolve_limits(limits))


def load_chrome_data(data, *, source: str = "<bytes>", limits=None, **options):
    """Chrome Trace Event JSON (`chrome.load_chrome`) with py-spy's conventions applied
    (`threadnames.fix_pyspy`)."""
    from .chrome import load_chrome
    from .threadnames import fix_pyspy

    return fix_pyspy(load_chrome(data, source=source, limits=resolve_limits(limits), **options))


def load_cpuprofile_data(data, *, source: str = "<bytes>", limits=None, **options):
    from .cpuprofile import load_cpuprofile

    return load_cpuprofile(data, source, resolve_limits(limits), **options)
