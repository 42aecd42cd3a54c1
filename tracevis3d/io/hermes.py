"""Hermes (React Native's JavaScript engine) in Chrome's trace format: where its functions are.

Hermes writes sampled frames as ``function1(http://localhost:8081/index.bundle?x=1:17:3)`` (the
location inside the name, no blank before it) and B/E events whose args carry ``url`` and
``line`` (speedscope's ``isHermesTraceEvent``); the names stay as Hermes writes them, their file
and line come from there.
"""
from __future__ import annotations

import math
import re

_HERMES_LOCATED = re.compile(r"^(?P<name>[^()]*)\((?P<url>[^()\s]*[:/][^()\s]*):(?P<line>\d{1,9}):(?P<col>\d{1,9})\)$")


def located(parsed, name: str):
    """``parsed`` (a `names.ParsedName` of ``name``) with the file and line of a Hermes sampled
    frame name that carries its location (``function1(http://localhost:8081/index.bundle?x=1:17:3)``:
    the bundle's URL, line 17) when the parse found none; the name itself stays as Hermes wrote it."""
    if parsed.file or not name.endswith(")"):
        return parsed
    m = _HERMES_LOCATED.match(name)
    return parsed._replace(file=m.group("url"), line=int(m.group("line"))) if m else parsed


#: the args of a Hermes trace event (speedscope's ``requiredHermesArguments``)
HERMES_ARGS = ("line", "column", "name", "category", "url", "params", "allocatedCategory", "allocatedName")


def hermes_locations(buf, offs, lens) -> list | None:
    """The (url, line) of each function of a Hermes trace (B/E events whose args hold
    `HERMES_ARGS`, as speedscope's ``isHermesTraceEvent`` tells them: a frame's file and line are
    ``args.url`` and ``args.line``), from the args (``offs``/``lens``: byte spans into ``buf``, -1
    for none) of each function's first call; None when the first function's args are not
    Hermes'."""
    import orjson

    def args(off, ln):
        if ln <= 2:
            return None
        try:
            return orjson.loads(bytes(buf[off: off + ln]))
        except orjson.JSONDecodeError:
            return None

    first = args(int(offs[0]), int(lens[0])) if offs.size else None
    if not (isinstance(first, dict) and all(x in first for x in HERMES_ARGS)):
        return None
    out = []
    for off, ln in zip(offs.tolist(), lens.tolist()):  # (a loop over the functions)
        a = args(off, ln)
        url = a.get("url") if isinstance(a, dict) else None
        line = a.get("line") if isinstance(a, dict) else None
        number = isinstance(line, (int, float)) and not isinstance(line, bool) and math.isfinite(line)
        out.append((url if isinstance(url, str) else "", int(line) if number and 0 <= line < 2 ** 31 - 1 else -1))
    return out
