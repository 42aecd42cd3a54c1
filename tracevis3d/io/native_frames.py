"""Native frames of Firefox Profiler files that carry no symbols: a code address named by the
library that holds it ("libxul.so+0x7a7702d"), as the Firefox Profiler shows such a frame's
library as its resource.  Gecko profiles give each (sub)profile's libraries with their address
ranges (``libs``: ``start``, ``end``, ``name``); processed profiles give each function a
resource (``funcTable.resource`` → ``resourceTable.name``) and an address relative to it."""
from __future__ import annotations

import json
from bisect import bisect_right

from .profile_json import is_list

__all__ = ["libs_of", "native_location", "is_address", "resource_names"]


def libs_of(prof: dict) -> tuple:
    """A Gecko (sub)profile's shared libraries as sorted (starts, ends, names) (``libs``: each
    ``start``, ``end`` and ``name`` or ``debugName``); rows that are not of that form are left out."""
    rows = []
    libs = prof.get("libs")
    if isinstance(libs, str):  # older Gecko profiles write the list as JSON text
        try:
            libs = json.loads(libs)
        except (ValueError, RecursionError):
            libs = None
    for lib in libs if isinstance(libs, list) else ():
        if not isinstance(lib, dict):
            continue
        a, b = lib.get("start"), lib.get("end")
        name = lib.get("name") or lib.get("debugName")
        if type(a) is int and type(b) is int and 0 <= a < b < 1 << 64 and isinstance(name, str) and name:
            rows.append((a, b, name[-200:]))
    rows.sort()
    return [r[0] for r in rows], [r[1] for r in rows], [r[2] for r in rows]


def native_location(loc: str, libs) -> tuple | None:
    """An unsymbolicated native frame "0x7f57c93278ec" as (library+offset name, library), by
    the (sub)profile's ``libs`` (the Firefox Profiler shows such a frame's library as its
    resource); None when the location is no address or no library holds it."""
    if not libs or not libs[0] or len(loc) > 18 or not loc.startswith("0x"):
        return None
    try:
        addr = int(loc, 16)
    except ValueError:
        return None
    k = bisect_right(libs[0], addr) - 1
    if k < 0 or addr >= libs[1][k]:
        return None
    name = libs[2][k].rsplit("/", 1)[-1] or libs[2][k]
    return f"{name}+0x{addr - libs[0][k]:x}", name


def is_address(name: str) -> bool:
    """"0x6153": a code address (a function without its symbol)."""
    if not (2 < len(name) <= 18 and name.startswith("0x")):
        return False
    try:
        int(name, 16)
    except ValueError:
        return False
    return True


def resource_names(tbls: dict, fn: dict, strings: list, n_func: int) -> list:
    """Each function's resource name (``funcTable.resource`` → ``resourceTable.name``: a
    library's name for native code), "" where there is none or it cannot be read."""
    out = [""] * n_func
    res = fn.get("resource")
    rt = tbls.get("resourceTable")
    if not (is_list(res) and len(res) == n_func and isinstance(rt, dict) and is_list(rt.get("name"))):
        return out
    rnames = rt["name"]
    for k, r in enumerate(res):
        if type(r) is int and 0 <= r < len(rnames):
            i = rnames[r]
            if type(i) is int and 0 <= i < len(strings) and isinstance(strings[i], str):
                out[k] = strings[i][-200:]
    return out
