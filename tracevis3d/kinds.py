"""SyncTrace call kinds (wait / release / I/O / other) and the objects calls act on.

SyncTrace (Sec. III-A) classes each call as wait, release, I/O or other, each with
the set of objects (locks, files, queues) it operates on.  Traces rarely say so
directly, so we infer both from names and args with the rules below: one table,
first match wins, evaluated once per distinct function (never per call).

Extend it for your program::

    import tracevis3d.kinds as k
    k.KIND_RULES.insert(0, (k.KIND_WAIT, r"my_runtime::park"))
    trace = tracevis3d.load("t.json")          # or load(..., kind_rules=[...])
"""
from __future__ import annotations

import re
from typing import Iterable, Sequence

import numpy as np

from .model import KIND_IO, KIND_OTHER, KIND_RELEASE, KIND_WAIT

# (kind, regular expression searched in the function name); first match wins.
#
# Every rule runs in time linear in the name (names are also capped at import,
# see tracevis3d.io.limits).  Python's backtracking engine makes a pattern like
# ``queue\w*get`` quadratic: every "queue" in a long word restarts a scan to the
# word's end.  So a rule of the form "X, then more word characters, then Y" is
# written as ``\b(?>\w*?X)\w*Y``: it starts only at a word start, the atomic
# group commits to the first X of the word (the one that ends first, because no
# alternative of X is part of another), and the word is scanned once.  This
# matches exactly the same names as ``X\w*Y`` (tests/test_hostile.py checks it
# against the plain form on generated names, the brute-force twin).  Your own
# rules must keep to the same discipline: no nested or adjacent quantifiers over
# the same characters.
_W = r"(?>\w*?"  # word start, then the first X in the word (atomic)
KIND_RULES: list[tuple[int, str]] = [
    # queues first: get waits, put releases (a consumer waits for a producer)
    (KIND_WAIT, r"(?i)\b" + _W + r"queue)\w*['.]?\s*\.?(get|get_nowait|join|pop)\b|'get' of '\w*queue"),
    (KIND_RELEASE, r"(?i)\b" + _W + r"queue)\w*['.]?\s*\.?(put|put_nowait|task_done|push)\b|'put' of '\w*queue"),
    # locks, conditions, events, threads, futures
    (KIND_WAIT, r"(?i)\b" + _W + r"(?:thread|process|pool|worker))\w*['.]?\s*\.?join\b"
                r"|'join' of '(_thread|thread|process)"),
    (KIND_WAIT, r"(?i)\b" + _W + r"future)\w*['.]?\s*\.?result\b"),
    (KIND_WAIT, r"(?i)(^|[\s.:'_<])(acquire|wait|wait_for|waitpid|futex_wait|sem_wait|mutex_lock|"
                r"spin_lock|pthread_join|epoll_wait|synchronize|cudaStreamSynchronize|"
                r"cudaDeviceSynchronize|cudaEventSynchronize)(\b|_|\()"),
    (KIND_RELEASE, r"(?i)(^|[\s.:'_<])(release|notify|notify_all|notifyAll|unlock|signal|"
                   r"broadcast|set_result|futex_wake|sem_post|pthread_mutex_unlock|"
                   r"pthread_cond_signal|pthread_cond_broadcast)(\b|_|\()"),
    (KIND_RELEASE, r"(?i)\b" + _W + r"(?:event|condition|semaphore|barrier|future))\w*['.]?\s*\.?set\b"
                   r"|'set' of '\w*event"),
    # file and socket I/O.  X: "posix", "fileio", "textio\w*" and "buffered\w*" reach no
    # further than the "os", "file", "io" and "buffered" inside them; "recv\w*\b" is "recv".
    (KIND_IO, r"(?i)\b" + _W + r"(?:io|file|socket|ssl|os|buffered|stream|fd|pipe))"
              r"\w*['.]?\s*(\.|of '|\s)?(?:(?:read|write|readline|readlines|readinto|flush|fsync|"
              r"accept|connect)\b|recv|send|pread|pwrite)"),
    (KIND_IO, r"^(read|write|pread64|pwrite64|readv|writev|recv|send|recvfrom|sendto|recvmsg|sendmsg|"
              r"fsync|fdatasync|open|openat|close)(\(|$)"),
    (KIND_IO, r"(?i)'(read|write|readline|readlines|readinto|recv|recv_into|send|sendall)' of "
              r"'(_io\.|_socket|socket|_ssl|ssl)"),
]

# args keys whose string value names the object a call acts on
OBJECT_ARG_KEYS = ("lock", "mutex", "object", "obj", "queue", "event", "condition", "semaphore",
                   "file", "filename", "path", "fd", "socket", "sock", "addr", "channel", "stream")
_REPR_OBJECT = re.compile(r"<(?:[\w ]*?)\b(?P<cls>[\w.]+) object at (?P<addr>0x[0-9a-fA-F]+)>")
_NAME_OBJECT = re.compile(r"(?i)\b(?P<what>lock|mutex|queue|event|file|fd|socket|stream)[#:=@ ]"
                          r"(?P<obj>[\w./:#@-]+)")


def classify_functions(names: Sequence[str], rules: Iterable[tuple[int, str]] | None = None) -> np.ndarray:
    """Kind (uint8) of each function name under ``rules`` (default KIND_RULES)."""
    compiled = [(int(k), re.compile(p)) for k, p in (KIND_RULES if rules is None else rules)]
    out = np.zeros(len(names), np.uint8)
    for i, nm in enumerate(names):
        for k, rx in compiled:
            if rx.search(nm):
                out[i] = k
                break
    return out


def objects_from_name(name: str) -> list[str]:
    """Objects a function name reveals, e.g. ``acquire lock#3`` → ['lock#3'] (at most
    `MAX_OBJECTS_PER_CALL`)."""
    out = []
    for m in _NAME_OBJECT.finditer(name):
        if len(out) >= MAX_OBJECTS_PER_CALL:
            break
        out.append(f"{m.group('what').lower()}:{m.group('obj')}")
    return out


#: at most this many objects per call (args can be big: their walk is bounded too)
MAX_OBJECTS_PER_CALL = 64
_MAX_ARG_ITEMS = 256  # dict items looked at per level


def objects_from_args(args) -> list[str]:
    """Objects an args dict reveals: known keys, and ``<... X object at 0x..>`` reprs.

    Bounded work: 4 levels deep, 16 list items and 256 dict items per level,
    at most `MAX_OBJECTS_PER_CALL` distinct objects."""
    found: dict[str, None] = {}

    def walk(v, key, depth):
        if depth > 4 or len(found) >= MAX_OBJECTS_PER_CALL:
            return
        if isinstance(v, dict):
            for n, (k2, v2) in enumerate(v.items()):
                if n >= _MAX_ARG_ITEMS:
                    break
                walk(v2, str(k2).lower(), depth + 1)
        elif isinstance(v, (list, tuple)):
            for v2 in v[:16]:
                walk(v2, key, depth + 1)
        elif isinstance(v, str):
            m = _REPR_OBJECT.search(v)
            if m:
                found.setdefault(f"{m.group('cls')}@{m.group('addr')}")
            elif key in OBJECT_ARG_KEYS and v:
                found.setdefault(f"{key}:{v}")
        elif isinstance(v, (int, float)) and key in OBJECT_ARG_KEYS and not isinstance(v, bool):
            found.setdefault(f"{key}:{v}")

    walk(args, "", 0)
    return list(found)[:MAX_OBJECTS_PER_CALL]


__all__ = ["KIND_RULES", "KIND_OTHER", "KIND_WAIT", "KIND_RELEASE", "KIND_IO", "OBJECT_ARG_KEYS",
           "MAX_OBJECTS_PER_CALL",
           "classify_functions", "objects_from_name", "objects_from_args"]
