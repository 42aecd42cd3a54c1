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
KIND_RULES: list[tuple[int, str]] = [
    # queues first: get waits, put releases (a consumer waits for a producer)
    (KIND_WAIT, r"(?i)queue\w*['.]?\s*\.?(get|get_nowait|join|pop)\b|'get' of '\w*queue"),
    (KIND_RELEASE, r"(?i)queue\w*['.]?\s*\.?(put|put_nowait|task_done|push)\b|'put' of '\w*queue"),
    # locks, conditions, events, threads, futures
    (KIND_WAIT, r"(?i)(thread|process|pool|worker)\w*['.]?\s*\.?join\b|'join' of '(_thread|thread|process)"),
    (KIND_WAIT, r"(?i)future\w*['.]?\s*\.?result\b"),
    (KIND_WAIT, r"(?i)(^|[\s.:'_<])(acquire|wait|wait_for|waitpid|futex_wait|sem_wait|mutex_lock|"
                r"spin_lock|pthread_join|epoll_wait|synchronize|cudaStreamSynchronize|"
                r"cudaDeviceSynchronize|cudaEventSynchronize)(\b|_|\()"),
    (KIND_RELEASE, r"(?i)(^|[\s.:'_<])(release|notify|notify_all|notifyAll|unlock|signal|"
                   r"broadcast|set_result|futex_wake|sem_post|pthread_mutex_unlock|"
                   r"pthread_cond_signal|pthread_cond_broadcast)(\b|_|\()"),
    (KIND_RELEASE, r"(?i)(event|condition|semaphore|barrier|future)\w*['.]?\s*\.?set\b|'set' of '\w*event"),
    # file and socket I/O
    (KIND_IO, r"(?i)(io|file|socket|ssl|os|posix|buffered\w*|textio\w*|fileio|stream|fd|pipe)"
              r"\w*['.]?\s*(\.|of '|\s)?(read|write|readline|readlines|readinto|recv\w*|send\w*|"
              r"flush|fsync|pread\w*|pwrite\w*|accept|connect)\b"),
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
    """Objects a function name reveals, e.g. ``acquire lock#3`` → ['lock#3']."""
    return [f"{m.group('what').lower()}:{m.group('obj')}" for m in _NAME_OBJECT.finditer(name)]


def objects_from_args(args) -> list[str]:
    """Objects an args dict reveals: known keys, and ``<... X object at 0x..>`` reprs."""
    found: list[str] = []

    def walk(v, key, depth):
        if depth > 4:
            return
        if isinstance(v, dict):
            for k2, v2 in v.items():
                walk(v2, str(k2).lower(), depth + 1)
        elif isinstance(v, (list, tuple)):
            for v2 in v[:16]:
                walk(v2, key, depth + 1)
        elif isinstance(v, str):
            m = _REPR_OBJECT.search(v)
            if m:
                found.append(f"{m.group('cls')}@{m.group('addr')}")
            elif key in OBJECT_ARG_KEYS and v:
                found.append(f"{key}:{v}")
        elif isinstance(v, (int, float)) and key in OBJECT_ARG_KEYS and not isinstance(v, bool):
            found.append(f"{key}:{v}")

    walk(args, "", 0)
    out = []
    for f in found:
        if f not in out:
            out.append(f)
    return out


__all__ = ["KIND_RULES", "KIND_OTHER", "KIND_WAIT", "KIND_RELEASE", "KIND_IO", "OBJECT_ARG_KEYS",
           "classify_functions", "objects_from_name", "objects_from_args"]
