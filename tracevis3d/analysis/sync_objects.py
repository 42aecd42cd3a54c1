"""Which object each wait / release call acts on (SyncTrace Sec. III-A: O(f)).

Real Python traces rarely say it on the call itself: VizTracer records no args for C
functions, so ``_thread.lock.acquire`` inside ``Condition.wait`` has no identity.  The rule,
in order (first that gives an object wins), for every wait or release call f:

1. **own** — f's own ``self`` repr names an object (`object_from_self`), or the importer
   found objects in f's args/name (``trace.obj_ids``);
2. **ancestor** — the nearest ancestor whose ``self`` repr names an object: the wrapper
   (``Condition.wait``, ``Queue.get``/``put``, ``Semaphore.acquire``, ``Event.wait``,
   ``_ModuleLock.acquire`` ...) whose C lock calls these are;
3. **call site** — a pseudo-object named ``site:<receiver> in <caller>``: the receiver type
   (the function name without its last component, ``_thread.lock`` for
   ``_thread.lock.acquire``, ``_imp`` for ``_imp.acquire_lock``) and the caller: its class
   when the caller is a method (``_CompilerLock`` for ``_CompilerLock.acquire`` and
   ``_CompilerLock.release``: a lock class's acquire and release are two methods of one
   object, numba's compiler lock, logging's ``Handler``), else its function, so waits and
   releases of the same kind of object called from the same class or function share it
   (``_imp.acquire_lock``/``release_lock`` in ``_get_module_lock``) and unrelated ones do
   not.

Object names are those of `tracevis3d.kinds` (``cls@0xADDR``) so they agree with the
importer's; a Condition is named by its lock (the lock is what is shared).  No
acquire/release pairing is assumed anywhere (CPython 3.11 records only ``__exit__`` of
``with lock:``).
"""
from __future__ import annotations

import re

import numpy as np

from ..model import KIND_RELEASE, KIND_WAIT, Trace

SOURCE_NONE, SOURCE_OWN, SOURCE_ANCESTOR, SOURCE_SITE = 0, 1, 2, 3
SOURCE_NAMES = ("none", "own", "ancestor", "call site")

_HEX = r"(?P<addr>0x[0-9a-fA-F]+)"
# first match wins; each yields a canonical name
_SELF_RULES = [
    # <Condition(<locked _thread.RLock object owner=.. count=1 at 0x..>, 0)>: its lock
    (re.compile(r"^<Condition\(<(?:un)?locked (?P<cls>[\w.]+) object[^<>]*? at " + _HEX + ">"), "{cls}@{addr}"),
    # _ModuleLock('docutils.parsers.rst') at 140426794383056
    (re.compile(r"^(?P<cls>_ModuleLock|_DummyModuleLock)\('(?P<name>[^']{0,200})'\)"), "{cls}('{name}')"),
    # <queue.Queue object at 0x..>, <threading.Event at 0x..: unset>, <Future at 0x.. state=..>
    (re.compile(r"^<(?P<cls>[\w.]+)(?: object)? at " + _HEX), "{cls}@{addr}"),
    # <Thread(parse_2, started 1396..)>
    (re.compile(r"^<(?P<cls>[\w.]*Thread)\((?P<name>[^,()]{1,200})"), "{cls}({name})"),
    # anything else with an address: <_StderrHandler <stderr> (WARNING)> has none
    (re.compile(r"^<(?P<cls>[\w.]+) [^<>]*?\bat " + _HEX), "{cls}@{addr}"),
]


def object_from_self(text: str) -> str | None:
    """The object a ``self`` repr names, or None: ``"<Condition(<locked _thread.lock object
    at 0x7f..>, 0)>"`` → ``"_thread.lock@0x7f.."``; ``"_ModuleLock('json') at 1404.."`` →
    ``"_ModuleLock('json')"``; ``"<threading.Event at 0x7f..: unset>"`` →
    ``"threading.Event@0x7f.."``; ``"<Thread(parse_2, started 1..)>"`` → ``"Thread(parse_2)"``."""
    if not isinstance(text, str) or not text:
        return None
    text = text[:400]
    for rx, fmt in _SELF_RULES:
        m = rx.search(text)
        if m:
            return fmt.format(**m.groupdict())
    return None


def self_of(blob: bytes):
    """The ``self`` repr string in one call's JSON args (at the top or under ``func_args``), or None."""
    import orjson

    try:
        args = orjson.loads(blob)
    except orjson.JSONDecodeError:
        return None
    if isinstance(args, dict):
        inner = args.get("func_args", args)
        if isinstance(inner, dict):
            s = inner.get("self")
            return s if isinstance(s, str) else None
    return None


def named_by_self(trace: Trace, wanted: np.ndarray, names: list, index: dict) -> np.ndarray:
    """Per call, the object id its own ``self`` repr names (-1 when none), looked at only
    where ``wanted`` (sync calls and their ancestors); new names are appended to
    ``names``/``index``.  One JSON decode per args entry looked at, one regex pass per
    distinct repr."""
    named = np.full(len(trace), -1, np.int32)
    if trace.args_call.size == 0:
        return named
    sel = np.flatnonzero(wanted[trace.args_call])
    ptr, blob = trace.args_ptr, trace.args_blob
    seen: dict = {}
    for k in sel.tolist():
        s = self_of(blob[ptr[k]:ptr[k + 1]].tobytes())
        if s is None:
            continue
        oid = seen.get(s)
        if oid is None:
            name = object_from_self(s)
            oid = -1 if name is None else index.setdefault(name, len(names))
            if oid == len(names):
                names.append(name)
            seen[s] = oid
        named[trace.args_call[k]] = oid
    return named


def receiver_of(function_name: str) -> str:
    """``_thread.lock.acquire`` → ``_thread.lock``; ``Condition.wait (f.py:3)`` →
    ``Condition``; a bare ``acquire`` stays ``acquire``."""
    from ..naming import describe_function

    short = function_name.split(" (", 1)[0].strip() or describe_function(function_name)[4]
    head, _, _ = short.rpartition(".")
    return head or short


#: classes whose instances are many locks told apart only by their args (importlib's lock of
#: each module): their calls keep the caller's function as the site, not the class (one
#: pseudo-object for every module's lock paired imports of unrelated modules)
PER_INSTANCE_CLASSES = frozenset({"_ModuleLock", "_ModuleLockManager", "_DummyModuleLock"})


def caller_site(function_name: str) -> str:
    """Where a C lock call is made, for its pseudo-object: the caller's class when the caller
    is a method (``_CompilerLock.acquire (compiler_lock.py:21)`` → ``_CompilerLock``; the
    last dotted part before the method's name, a nested function's ``<locals>`` skipped; not
    for `PER_INSTANCE_CLASSES`), else the caller's function (``_get_module_lock``)."""
    short = function_name.split(" (", 1)[0].strip()
    parts = [p for p in short.split(".") if p and p != "<locals>"]
    if len(parts) >= 2 and parts[-2].lstrip("_")[:1].isupper() and parts[-2] not in PER_INSTANCE_CLASSES:
        return parts[-2]  # Class.method (a module's name is lower case)
    return short


def site_objects(trace: Trace, calls: np.ndarray, names: list, index: dict) -> np.ndarray:
    """Pseudo-object ids ``site:<receiver> in <caller>`` for ``calls`` (one name per distinct
    (function, caller function); the caller by `caller_site`)."""
    out = np.empty(calls.size, np.int32)
    if calls.size == 0:
        return out
    par = trace.parent[calls]
    pfunc = np.where(par >= 0, trace.func[np.maximum(par, 0)], -1).astype(np.int64)
    keys = trace.func[calls].astype(np.int64) * (trace.n_functions + 1) + (pfunc + 1)
    uniq, inv = np.unique(keys, return_inverse=True)
    ids = np.empty(uniq.size, np.int32)
    for j, key in enumerate(uniq.tolist()):
        f, pf = divmod(key, trace.n_functions + 1)
        caller = caller_site(trace.function_names[pf - 1]) if pf > 0 else "<thread root>"
        name = f"site:{receiver_of(trace.function_names[f])} in {caller}"
        oid = index.setdefault(name, len(names))
        if oid == len(names):
            names.append(name)
        ids[j] = oid
    out[:] = ids[inv]
    return out


def attribute_objects(trace: Trace):
    """(obj_ptr, obj_ids, source, object_names): the objects of every call in CSR form
    (only wait and release calls have any), how each was found (SOURCE_*), and the
    object table: ``trace.object_names`` first (same indices), then the names found here."""
    from ..kernels.correspondence import nearest_named, sync_below

    names = list(trace.object_names)
    index = {s: k for k, s in enumerate(names)}
    kind = trace.kind
    wanted = sync_below(kind, trace.parent)
    own_self = named_by_self(trace, wanted, names, index)
    near = nearest_named(trace.parent, own_self)
    sync = np.flatnonzero((kind == KIND_WAIT) | (kind == KIND_RELEASE)).astype(np.int64)
    n_imp = (trace.obj_ptr[sync + 1] - trace.obj_ptr[sync]).astype(np.int64)
    source = np.zeros(len(trace), np.uint8)
    # 1. own: self repr, else the importer's objects
    has_self = own_self[sync] >= 0
    use_imp = ~has_self & (n_imp > 0)
    counts = np.where(has_self, 1, np.where(use_imp, n_imp, 1))
    # 2. ancestor, 3. call site
    anc = ~has_self & ~use_imp & (near[sync] >= 0)
    site = ~has_self & ~use_imp & ~anc
    single = np.full(sync.size, -1, np.int32)
    single[has_self] = own_self[sync[has_self]]
    single[anc] = near[sync[anc]]
    single[site] = site_objects(trace, sync[site].astype(np.int32), names, index)
    source[sync[has_self | use_imp]] = SOURCE_OWN
    source[sync[anc]] = SOURCE_ANCESTOR
    source[sync[site]] = SOURCE_SITE
    per_call = np.zeros(len(trace), np.int64)
    per_call[sync] = counts
    obj_ptr = np.zeros(len(trace) + 1, np.int64)
    np.cumsum(per_call, out=obj_ptr[1:])
    obj_ids = np.empty(int(obj_ptr[-1]), np.int32)
    one = ~use_imp
    obj_ids[obj_ptr[sync[one]]] = single[one]
    if use_imp.any():
        c = sync[use_imp]
        lens = n_imp[use_imp]
        within = np.arange(int(lens.sum()), dtype=np.int64) - np.repeat(np.cumsum(lens) - lens, lens)
        obj_ids[np.repeat(obj_ptr[c], lens) + within] = trace.obj_ids[np.repeat(trace.obj_ptr[c], lens) + within]
    return obj_ptr, obj_ids, source, names
