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
from itertools import islice
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
                r"cudaDeviceSynchronize|cudaEventSynchronize|"
                # idle on a timer: time.sleep, asyncio.sleep, usleep, std::this_thread::sleep_for
                r"sleep|usleep|nanosleep|clock_nanosleep)(\b|_|\()"),
    (KIND_RELEASE, r"(?i)(^|[\s.:'_<])(release|notify|notify_all|notifyAll|unlock|signal|"
                   r"broadcast|set_result|futex_wake|sem_post|pthread_mutex_unlock|"
                   r"pthread_cond_signal|pthread_cond_broadcast)(\b|_|\()"),
    (KIND_RELEASE, r"(?i)\b" + _W + r"(?:event|condition|semaphore|barrier|future))\w*['.]?\s*\.?set\b"
                   r"|'set' of '\w*event"),
    # file and socket I/O.  X: "posix", "fileio", "textio\w*" and "buffered\w*" reach no
    # further than the "os", "file", "io" and "buffered" inside them; "recv\w*\b" is "recv".
    # (and waiting on sockets: select.poll.poll, select.select, select.epoll.poll, socket._accept)
    (KIND_IO, r"(?i)\b" + _W + r"(?:io|file|socket|ssl|os|buffered|stream|fd|pipe|select))"
              r"\w*['.]?\s*(\.|of '|\s)?(?:(?:read|write|readline|readlines|readinto|flush|fsync|"
              r"accept|connect|_accept|poll|epoll|select)\b|recv|send|pread|pwrite)"),
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
    """Kind (uint8) of each function name under ``rules`` (default KIND_RULES):
    the first rule whose pattern is found in the name wins.

    The default rules (wherever they stand in ``rules``) are tested by the numba
    scans of `tracevis3d.kernels.kindmatch`, on all names at once and a few ns per
    character; any other rule is a ``re.search`` per name still undecided."""
    from .userregex import user_regex

    rules = list(KIND_RULES if rules is None else rules)
    n = len(names)
    out = np.zeros(n, np.uint8)
    if n == 0 or not rules:
        return out
    want = sorted({_DEFAULT_INDEX[p] for _, p in rules if isinstance(p, str) and p in _DEFAULT_INDEX})
    bits = _default_rule_hits(names, want) if want else {}
    undecided = np.ones(n, bool)
    for k, p in rules:
        j = _DEFAULT_INDEX.get(p) if isinstance(p, str) else None
        if j is not None and j in bits:
            hit = undecided & bits[j]
        else:
            # a compiled pattern comes from code; text from a user: linear time, never backtracks
            rx = p if isinstance(p, re.Pattern) else user_regex(p, "kind rule")
            hit = np.zeros(n, bool)
            for i in np.flatnonzero(undecided):
                if rx.search(names[i]):
                    hit[i] = True
        out[hit] = int(k)
        undecided &= ~hit
        if not undecided.any():
            break
    return out


#: a call named like a wait whose subtree spends more than this share of its time in the
#: self time of calls that are neither waits nor I/O is working, not waiting (`working_waits`)
WORKING_SHARE = 0.5


def working_waits(kind: np.ndarray, start: np.ndarray, end: np.ndarray, end_index: np.ndarray) -> np.ndarray:
    """bool per call: named like a wait (``kind`` KIND_WAIT) but working: the calls of its
    subtree that are neither waits nor I/O spend more than `WORKING_SHARE` of its time in
    their own code (self time; a release does not block: numba's event ``broadcast``, a
    release by its name, is work).  A decorator's wrapper named ``_acquire`` that takes
    numba's compiler lock and runs the whole compilation under it is not waiting;
    ``SimpleQueue.get`` (its time in ``recv_bytes`` › … › a read), ``Thread.join`` or
    ``_CompilerLock.acquire`` (its ``_thread.RLock.acquire``) stay waits.  Calls in pre-order
    (``end_index``: one past each call's last descendant, `kernels.tree.nest_sorted_intervals`);
    linear: self times as `Trace.self_time` has them, prefix sums of the working ones, in one
    kernel (`kernels.tree.working_waits_mask`: at 10^7 calls the numpy form's temporaries were
    the load's peak)."""
    from .kernels.tree import working_waits_mask

    kind = np.asarray(kind)
    if not np.any(kind == KIND_WAIT):  # no wait (or no call): the walk's self times not needed (10^7: 0.1 s)
        return np.zeros(kind.shape[0], bool)
    return working_waits_mask(kind, np.asarray(start, np.float64), np.asarray(end, np.float64),
                              np.asarray(end_index), KIND_WAIT, KIND_IO, WORKING_SHARE)


# The fast form of each default rule (same order as the initial KIND_RULES):
# ("xwy", X words, Y words with "needs \b after" flags, SEP of I/O?, (L, Z words) or None),
# ("sep", keywords), ("anchored", keywords: case as given), ("lit", literals).
def _b(*words):
    return [(w, True) for w in words]


_FAST_FORMS = [
    ("xwy", ["queue"], _b("get", "get_nowait", "join", "pop"), False, ("'get' of '", ["queue"])),
    ("xwy", ["queue"], _b("put", "put_nowait", "task_done", "push"), False, ("'put' of '", ["queue"])),
    ("xwy+lit", ["thread", "process", "pool", "worker"], _b("join"), False,
     ["'join' of '_thread", "'join' of 'thread", "'join' of 'process"]),
    ("xwy", ["future"], _b("result"), False, None),
    ("sep", ["acquire", "wait", "wait_for", "waitpid", "futex_wait", "sem_wait", "mutex_lock", "spin_lock",
             "pthread_join", "epoll_wait", "synchronize", "cudastreamsynchronize", "cudadevicesynchronize",
             "cudaeventsynchronize", "sleep", "usleep", "nanosleep", "clock_nanosleep"]),
    ("sep", ["release", "notify", "notify_all", "notifyall", "unlock", "signal", "broadcast", "set_result",
             "futex_wake", "sem_post", "pthread_mutex_unlock", "pthread_cond_signal", "pthread_cond_broadcast"]),
    ("xwy", ["event", "condition", "semaphore", "barrier", "future"], _b("set"), False, ("'set' of '", ["event"])),
    ("xwy", ["io", "file", "socket", "ssl", "os", "buffered", "stream", "fd", "pipe", "select"],
     _b("read", "write", "readline", "readlines", "readinto", "flush", "fsync", "accept", "connect", "_accept",
        "poll", "epoll", "select")
     + [("recv", False), ("send", False), ("pread", False), ("pwrite", False)], True, None),
    ("anchored", ["read", "write", "pread64", "pwrite64", "readv", "writev", "recv", "send", "recvfrom", "sendto",
                  "recvmsg", "sendmsg", "fsync", "fdatasync", "open", "openat", "close"]),
    ("lit", [f"'{k}' of '{p}" for k in ("read", "write", "readline", "readlines", "readinto", "recv", "recv_into",
                                        "send", "sendall") for p in ("_io.", "_socket", "socket", "_ssl", "ssl")]),
]
_DEFAULT_INDEX = {p: j for j, (_, p) in enumerate(KIND_RULES)}
# Python's re folds these onto ASCII letters under (?i); str.lower() does not (or, for
# U+0130, makes two characters): map them first, then lower().
_FOLD = str.maketrans({"\u0130": "i", "\u0131": "i", "\u017f": "s", "\u212a": "k"})
_TABLES: dict = {}


def _char_tables(top: int):
    """(word, space) uint8 tables over code points [0, top): what ``re`` calls \\w and \\s.  ASCII
    names (the usual case; lowering keeps them ASCII) need 128 entries, not the 65,536 whose
    tables took 0.1 s of a process's first load."""
    size = 0x80 if top <= 0x80 else 0x10000 if top <= 0x10000 else 0x110000
    if size not in _TABLES:
        chars = [chr(c) for c in range(size)]
        word = np.fromiter((ch.isalnum() or ch == "_" for ch in chars), np.uint8, size)
        space = np.fromiter((ch.isspace() for ch in chars), np.uint8, size)
        _TABLES[size] = (word, space)
    return _TABLES[size]


def _literals(words):
    """Literal list → (code points uint32, offsets int64, first-character table over ASCII)."""
    cps = np.array([ord(c) for c in "".join(words)], np.uint32)
    ptr = np.concatenate([[0], np.cumsum([len(w) for w in words])]).astype(np.int64)
    first = np.zeros(128, np.bool_)
    for w in words:
        first[ord(w[0])] = True
    return cps, ptr, first


def _joined(names: Sequence[str]):
    """(lowered code points, code points, starts) of all names joined, or Nones."""
    joined = "".join(names)
    low = joined.translate(_FOLD).lower()
    if len(low) != len(joined):
        return None, None, None
    starts = np.zeros(len(names) + 1, np.int64)
    np.cumsum(np.fromiter(map(len, names), np.int64, len(names)), out=starts[1:])
    t_low = np.frombuffer(low.encode("utf-32-le", "surrogatepass"), np.uint32)
    t_orig = np.frombuffer(joined.encode("utf-32-le", "surrogatepass"), np.uint32)
    return t_low, t_orig, starts


def _default_rule_hits(names: Sequence[str], which) -> dict:
    """{default rule index: bool per name} for the rules in ``which``."""
    from .kernels import kindmatch as km

    t_low, t_orig, starts = _joined(names)
    if t_low is None:  # a lowering that changes length: not expected, use the regexes
        return {}
    word, space = _char_tables(int(t_orig.max()) + 1 if t_orig.size else 0)
    none = _literals(["\x00"])
    empty = (np.zeros(0, np.uint32), np.zeros(1, np.int64), np.zeros(128, np.bool_))
    out = {}
    for j in which:
        form = _FAST_FORMS[j]
        kind = form[0]
        if kind in ("xwy", "xwy+lit"):
            xs = _literals(form[1])
            ys = _literals([w for w, _ in form[2]])
            yb = np.array([b for _, b in form[2]], np.bool_)
            alt = form[4] if kind == "xwy" else None
            ls = _literals([alt[0]]) if alt else empty
            zs = _literals(alt[1]) if alt else none
            hit = km.match_xwy(t_low, starts, word, space, *xs, ys[0], ys[1], yb, ys[2], form[3], ls[0], ls[1],
                               zs[0], zs[1], zs[2])
            if kind == "xwy+lit":
                hit |= km.match_literals(t_low, starts, *_literals(form[4]))
        elif kind == "sep":
            hit = km.match_sep_keyword(t_low, starts, word, space, *_literals(form[1]))
        elif kind == "anchored":
            hit = km.match_anchored(t_orig, starts, *_literals(form[1])[:2])
        else:
            hit = km.match_literals(t_low, starts, *_literals(form[1]))
        out[j] = hit
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


_NAME_OBJECT_WORDS = ["lock", "mutex", "queue", "event", "file", "fd", "socket", "stream"]


def objects_from_names(names: Sequence[str]) -> list[list[str]]:
    """`objects_from_name` of every name; the regex runs only on the names that
    contain one of its words (found by one numba scan over all names)."""
    from .kernels import kindmatch as km

    if not names:
        return []
    t_low, _, starts = _joined(names)
    if t_low is None:
        return [objects_from_name(s) for s in names]
    has = km.match_literals(t_low, starts, *_literals(_NAME_OBJECT_WORDS))
    return [objects_from_name(s) if h else [] for s, h in zip(names, has.tolist())]


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
            for k2, v2 in (v.items() if len(v) <= _MAX_ARG_ITEMS else islice(v.items(), _MAX_ARG_ITEMS)):
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
           "MAX_OBJECTS_PER_CALL", "objects_from_names",
           "classify_functions", "objects_from_name", "objects_from_args", "working_waits", "WORKING_SHARE"]
