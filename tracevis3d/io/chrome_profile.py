"""V8's sampled JavaScript stacks: the ``Profile``/``ProfileChunk`` events of a Chrome trace, and
the ``.cpuprofile`` files of every version.

**In a Chrome trace.**  ``Profile`` and ``ProfileChunk`` events (phase ``P``), as Chrome DevTools'
Performance panel records them and Chromium writes with the ``disabled-by-default-v8.cpu_profiler``
category (and the older form, 2016-2017: one instant ``CpuProfile`` event holding a whole
profile, ``args.data.cpuProfile`` with its ``startTime``).  A profile is keyed by its process and
``id``.  Its ``Profile`` event stands on the thread it samples and gives ``args.data.startTime``
(µs, the trace clock); its ``ProfileChunk`` events (on V8's profiler thread, in file order) bring
``args.data.cpuProfile.nodes`` (``id``, ``parent``, ``callFrame``: ``functionName``, ``url``,
``lineNumber`` and ``columnNumber`` 0-based), ``cpuProfile.samples`` (the leaf node of each
sample) and ``timeDeltas`` (µs from the previous sample; the first from ``startTime``).  Nodes
accumulate over the chunks; older profiles give ``children`` lists instead of ``parent`` links.
A chunk may name nodes that were sent before the trace began (a recording started mid-profile):
a sample of such a node is an empty stack, a node whose parent is missing starts its stack
(both counted as repairs, as speedscope's ``importFromChromeCPUProfile`` reads them).

**A .cpuprofile** (`io.cpuprofile.load_cpuprofile`): what ``node --cpu-prof`` and DevTools' JavaScript profiler
save.  The current form is one profile as above at the top level (``nodes``, ``startTime``,
``endTime``, ``samples``, ``timeDeltas``).  The old form (Node ≤ 10, Chrome ≤ 58, v8-profiler)
nests the nodes as a tree under ``head`` (``functionName``, ``url``, ``lineNumber``, ``id``,
``children``: node objects), gives ``startTime``/``endTime`` in seconds and the samples' absolute
times in µs as ``timestamps`` (speedscope's ``v8cpuFormatter.ts`` reads it the same way).

**Samples → calls** go through the shared builder (`stacks.timed_trace`: speedscope's time-ordered
reading, stacks compared by frame path; a frame is (name, URL, line, column), as speedscope's
``frameInfoForCallFrame`` keys it), after DevTools' own rules of its CPU profile model
(`sample_leaves`): ``(root)`` is no frame; ``(idle)`` and ``(program)`` (V8 outside JavaScript:
the browser's own work, which the trace's events show) are empty stacks, except a lone
``(program)`` sample inside a stack; ``(garbage collector)`` stands on the stack it interrupted.
Samples are taken in time order (a delta may be negative: V8's sampler thread and its clock
disagree by a few µs, DevTools sorts them too); the last sample lasts the profile's median
interval (1 µs when it has none), clipped at ``max_abs_time``.  A sample whose time is not
finite or past ``max_abs_time`` is left out (a repair).  Each profile that holds JavaScript gets
a lane of its own, "<thread> (JS)", in the sampled thread's process: the trace's own events on
that thread keep theirs, and sampled intervals need not nest with them.  `calls_trace` gives the
calls of a Chrome trace's ``samples``/``stackFrames`` that stand beside its events the same
kind of lanes, "<thread> (samples)" (they need not be JavaScript).

**Hermes** (React Native's engine) writes Chrome traces too: `hermes_locations` gives its B/E
events' functions the file and line of their args (speedscope's ``isHermesTraceEvent``),
`located` those of a sampled frame whose name carries them (``fn(url:line:column)``).

Every profile event is parsed by orjson (they are few: one a ~100 ms of sampling); what does
not fit the form above is left out and counted (``js_profile`` repair), never guessed.

Over 600 lines: one topic, V8's node tables (the in-trace chunks and the .cpuprofile forms
share every step from nodes to stacks); its per-node checks are inline in one loop, which a
10^6-node profile needs (`_add_nodes`), and cost lines.
"""
from __future__ import annotations

import json
import math
from dataclasses import dataclass, field
from itertools import chain, repeat
from operator import itemgetter

import numpy as np

from ..kernels import jsonevent as jev
from .lanes import kept_lanes, merge_profiles
from .stacks import FrameTable, StackProfile, timed_trace

PROFILE_EVENTS = ("Profile", "ProfileChunk", "CpuProfile")
#: a whole profile in one event (DevTools traces of 2016-2017: an instant ``CpuProfile``) may be this
#: many times the size of a chunk
WHOLE_PROFILE_BYTES_FACTOR = 32
#: V8's pseudo frames that are no JavaScript running (an empty stack); ``(root)`` is every stack's root
NOT_JS = frozenset(("(idle)", "(program)"))
ROOT = "(root)"
GC = "(garbage collector)"
#: profiles read from one trace (a browser profiles a thread each: a page and its workers); the
#: events of more are left out, counted (each profile holds a few tables: a flood of ids is no trace)
MAX_PROFILES = 10_000
#: the lane of a profile's calls
LANE_SUFFIX = " (JS)"
#: the lane of the calls of a trace's ``samples``/``stackFrames`` when the trace has events too
SAMPLES_LANE_SUFFIX = " (samples)"
#: node ids beyond this magnitude are no ids (numpy keeps them as int64; V8 counts from 1)
MAX_ID = 2 ** 62
#: a sample that names no node (not an integer id)
NO_NODE = -(2 ** 63)
#: a parent link that names no possible node (an id past MAX_ID)
BAD_PARENT = MAX_ID
REPAIRS = {
    "js_profile": "V8 profile event (Profile/ProfileChunk) not of the documented form: left out what did not fit",
    "js_profile_no_start": "V8 profile chunks without their Profile event (no startTime): timed from the first "
                           "chunk's ts",
    "js_sample_node": "V8 profile samples of a node the profile does not hold (sent before the recording began): "
                      "empty stacks",
    "js_node_parent": "V8 profile nodes whose parent the profile does not hold: their stacks start at them",
    "js_sample_time": "V8 profile samples whose time is not finite or past max_abs_time (max_abs_time= to widen "
                      "it): left out",
    "samples_unread": "a 'samples'/'stackFrames' beside the events that could not be read: left them out (the "
                      "events load)",
    "lanes_capped": "V8 profiles past max_lanes_read (max_lanes_read= to allow more): those of the fewest samples merged "
                    "into one lane",
}
#: stacks.timed_trace's repair codes → the Chrome reader's (`chrome.REPAIRS`) for the same repair
_BUILDER_CODES = {"stack_cycle": "frame_cycle", "stack_deep": "deep_stack"}
#: Hermes' sampled frame names carry their location: ``function1(http://host/index.bundle?x=1:17:3)``


@dataclass
class _Profile:
    pid: int
    tid: int | None = None  # the sampled thread (the Profile event's), None when unknown
    start: float | None = None  # startTime, µs
    first_chunk_ts: float | None = None
    first_row: int = -1
    node_index: dict = field(default_factory=dict)  # node id -> index
    node_parent_id: list = field(default_factory=list)  # parent id, None for none
    node_frame: list = field(default_factory=list)  # (name, url, line 1-based, column 1-based) per node
    samples: list = field(default_factory=list)  # node ids, an int64 array a chunk
    deltas: list = field(default_factory=list)  # µs, a float64 array a chunk
    times: np.ndarray | None = None  # absolute µs per sample (the old .cpuprofile's timestamps), else deltas
    children: list = field(default_factory=list)  # (parent id, child id) of the older form: int64 (k, 2) arrays
    nodes: "NodeArrays | None" = None  # the node table in arrays (a byte-level reader's), else the lists above


@dataclass
class NodeArrays:
    """A profile's node table as arrays, per node in order: ``ids``, ``par_ids`` (`BAD_PARENT`
    where none is given), ``given`` (a parent link is given), ``is_root`` (named ``(root)``),
    ``kind_of`` (`sample_leaves`' kind by its name); ``pairs``: (owner id, child id) rows or None;
    ``frames(table)``: each node's frame in the file's frame table ``table`` (`ColumnFrames`;
    added there when called: only for a profile that holds JavaScript); ``gc_node()``: the first node named ``(garbage
    collector)``."""
    ids: np.ndarray
    par_ids: np.ndarray
    given: np.ndarray
    is_root: np.ndarray
    kind_of: np.ndarray
    pairs: "np.ndarray | None"
    frames: object
    gc_node: object


def _num(v) -> bool:
    """A finite JSON number (not a bool; an int past a float's range is none)."""
    if isinstance(v, bool) or not isinstance(v, (int, float)):
        return False
    try:
        return math.isfinite(v)
    except OverflowError:
        return False


def _node_id(v) -> bool:
    return isinstance(v, int) and not isinstance(v, bool) and -MAX_ID < v < MAX_ID


def _flat_array(v, empty_dtype):
    """``v`` (a list from JSON) as numpy makes it, None where it cannot (lists of uneven shape
    inside: numpy refuses them, it does not make an object array)."""
    if not len(v):
        return np.zeros(0, empty_dtype)
    try:
        return np.asarray(v)
    except (ValueError, TypeError, OverflowError):
        return None


def _int_array(v):
    """``v`` (a list from JSON) as int64 when every item is an int (not a bool) within ±MAX_ID, else None."""
    a = _flat_array(v, np.int64)
    if a is None or a.ndim != 1 or a.dtype.kind not in "iu":
        return None
    if a.size and (a.max() >= MAX_ID or (a.dtype.kind == "i" and a.min() <= -MAX_ID)):
        return None
    return a.astype(np.int64)


def _finite_array(v):
    """``v`` as float64 when every item is a finite number (not a bool), else None."""
    a = _flat_array(v, np.float64)
    if a is None or a.ndim != 1 or a.dtype.kind not in "iuf":
        return None
    a = a.astype(np.float64)
    return a if np.isfinite(a).all() else None


#: the deepest JSON nesting a profile event or file may have: orjson's own limit (1024 levels: an
#: old-form ``.cpuprofile``'s stacks up to ~510 frames, two levels a frame)
ORJSON_MAX_DEPTH = 1024


def _parse(raw: bytes):
    """``raw`` parsed as JSON, or None: orjson, and Python's json for what orjson refuses (a lone
    surrogate, bytes not UTF-8)."""
    return _parse_why(raw)[0]


def _parse_why(raw: bytes) -> tuple:
    """(document, None) or (None, why it is no JSON document)."""
    import orjson

    try:
        return orjson.loads(raw), None
    except Exception as e:  # a lone surrogate, bytes not UTF-8: Python's parser takes them
        first = str(e)
    if first.startswith("depth limit exceeded"):  # never Python's parser: how deep it goes depends on
        # the process's recursion limit (another library may have raised it), so the same file loaded
        # in one process and not in another
        return None, f"nested deeper than {ORJSON_MAX_DEPTH} levels ({first.split(':', 1)[1].strip()}; an " \
                     f"old-form profile's tree that deep?)"
    try:
        return json.loads(raw.decode("utf-8", "replace")), None
    except RecursionError:
        return None, "nested deeper than a JSON parser goes (an old-form profile's tree that deep?)"
    except ValueError:
        return None, first.split("\n", 1)[0][:160]


def _line(v) -> int:
    """A 0-based line or column from JSON as 1-based (-1 when it is no number in range)."""
    t = type(v)
    if t is int:
        return v + 1 if 0 <= v < 2 ** 31 - 1 else -1
    return int(v) + 1 if t is float and 0 <= v < 2 ** 31 - 1 else -1  # (NaN is not in range)


_NO_FRAME: dict = {}


def _add_node(p: _Profile, nid: int, parent, cf: dict, text) -> bool:
    """Add node ``nid`` (``cf``: its call frame's fields) to ``p``; False when ``nid`` was sent before
    (the first stays)."""
    if nid in p.node_index:
        return False
    name, url = cf.get("functionName"), cf.get("url")
    p.node_index[nid] = len(p.node_frame)
    p.node_parent_id.append(parent)
    p.node_frame.append((text(name) if type(name) is str else "", text(url) if type(url) is str else "",
                         _line(cf.get("lineNumber")), _line(cf.get("columnNumber"))))
    return True


def _add_nodes(p: _Profile, nodes, text, bad) -> None:
    """A chunk's (or a .cpuprofile's) ``nodes`` added to ``p``: a node that is no object or whose
    id is no integer within ±MAX_ID is left out (``bad()``); a parent link that is no such id
    names no node (the node's stack starts there, counted later).  One pass over the nodes, the
    checks inline (a profile may hold 10^6: passes a field at a time over the node objects were
    measured slower, each pass fetching every object from memory again)."""
    if not isinstance(nodes, list):
        bad()
        return
    index, parents, frame = p.node_index, p.node_parent_id, p.node_frame
    owners, kid_lists = [], []
    top = 2 ** 31 - 1
    for nd in nodes:
        nid = nd.get("id") if type(nd) is dict else None
        if type(nid) is not int or not -MAX_ID < nid < MAX_ID:
            bad()
            continue
        if nid in index:  # a node sent again: the first stays
            continue
        cf = nd.get("callFrame")
        if type(cf) is not dict:
            cf = _NO_FRAME
        name, url, line, col = cf.get("functionName"), cf.get("url"), cf.get("lineNumber"), cf.get("columnNumber")
        parent = nd.get("parent")
        if parent is not None and (type(parent) is not int or not -MAX_ID < parent < MAX_ID):
            parent = BAD_PARENT
        index[nid] = len(frame)
        parents.append(parent)
        frame.append((text(name) if type(name) is str else "", text(url) if type(url) is str else "",
                      line + 1 if type(line) is int and 0 <= line < top else _line(line),
                      col + 1 if type(col) is int and 0 <= col < top else _line(col)))
        kids = nd.get("children")
        if type(kids) is list:  # the older form: children, not parent links
            owners.append(nid)
            kid_lists.append(kids)
    if kid_lists:
        pairs = _child_pairs(owners, kid_lists)
        if pairs.size:
            p.children.append(pairs)


def _child_pairs(owners: list, kid_lists: list) -> np.ndarray:
    """(owner id, child id) rows, int64, of each owner's list of children, in order; a child
    that is no integer within ±MAX_ID is left out."""
    flat = list(chain.from_iterable(kid_lists))
    owner = np.repeat(np.array(owners, np.int64), np.fromiter(map(len, kid_lists), np.int64, len(kid_lists)))
    child = None
    if set(map(type, flat)) <= {int}:
        try:
            child = np.array(flat, np.int64) if flat else np.zeros(0, np.int64)
        except OverflowError:
            child = None
        if child is not None and child.size and not (int(child.min()) > -MAX_ID and int(child.max()) < MAX_ID):
            child = None
    if child is None:  # (not every child an id: the others left out)
        ok = np.array([type(c) is int and -MAX_ID < c < MAX_ID for c in flat], bool)
        child = np.array([c if k else 0 for c, k in zip(flat, ok.tolist())], np.int64)
        owner, child = owner[ok], child[ok]
    return np.stack([owner, child], axis=1)


def _add_tree(p: _Profile, head, text, bad) -> None:
    """The old form's node tree under ``head`` (each node its call frame's fields and its
    ``children`` as node objects), walked without recursion."""
    todo = [(head, None)]
    while todo:
        nd, parent = todo.pop()
        if not isinstance(nd, dict) or not _node_id(nd.get("id")):
            bad()
            continue
        nid = nd["id"]
        if not _add_node(p, nid, parent, nd, text):
            bad()  # an id twice in one tree: its second subtree is left out
            continue
        kids = nd.get("children")
        if isinstance(kids, list):
            todo.extend((c, nid) for c in reversed(kids))
        elif kids is not None:
            bad()


def _add_samples(p: _Profile, samples: list, deltas: list, bad, no_number: float = 0.0) -> int:
    """Append a chunk's ``samples`` (node ids) and ``timeDeltas`` (µs) to ``p`` as int64 / float64
    arrays (not lists of Python ints: 8 bytes a sample); ``bad()`` once for lists of unequal
    length (the shorter length is kept) and once for items that are no node id or no finite
    number (a sample without a node id keeps its time, the deltas run on, as an empty stack; a
    delta that is no number is ``no_number``: 0, or NaN for absolute times, which leaves the
    sample out).  Returns the samples added."""
    m = min(len(samples), len(deltas))
    if len(samples) != len(deltas):
        bad()
    s_arr, d_arr = _int_array(samples[:m]), _finite_array(deltas[:m])
    if s_arr is None or d_arr is None:
        bad()
        if s_arr is None:
            s_arr = np.array([s if _node_id(s) else NO_NODE for s in samples[:m]], np.int64)
        if d_arr is None:
            d_arr = np.array([float(d) if _num(d) else no_number for d in deltas[:m]], np.float64)
    p.samples.append(s_arr)
    p.deltas.append(d_arr)
    return m


def read_profiles(buf, ii, ss, rows, key_id, key_pid, key_tid, text, max_bytes: int = 1 << 20) -> tuple:
    """The profiles of the ``P`` event rows ``rows`` (their bytes at ``ii[r, I_EV_OFF]``, length
    ``ss[r, S_EV_LEN]``; ``key_id[r]``: the event's thread key, ``key_pid``/``key_tid``: a key's
    process and thread; ``text``: a name's cleaning).  Returns (profiles in order of first
    appearance, the number of ``P`` events that are not profile events (samples of other kinds:
    skipped, as before), repairs as (code, count, first row)).  An event longer than
    ``max_bytes`` (the limit of an event's args) is left out, counted as a ``js_profile`` repair:
    its Python objects would take ~10 times its bytes (V8 writes chunks of ~100 samples).  A
    chunk without ``args.data`` carries nothing (Chrome writes such chunks): passed over."""
    profiles: dict = {}
    other = 0
    bad = {"n": 0, "first": None}
    cur_row = [-1]

    def note_bad():
        bad["n"] += 1
        if bad["first"] is None:
            bad["first"] = cur_row[0]

    rows = np.asarray(rows, np.int64)
    # each column read once for all rows (an element at a time, 10^4 profiles took seconds)
    offs, lens = ii[rows, jev.I_EV_OFF].tolist(), ss[rows, jev.S_EV_LEN].tolist()
    wholes = (ss[rows, jev.S_PH] != ord("P")).tolist()  # an instant: the older form, a whole profile in one event
    keys = np.asarray(key_id[rows], np.int64)
    pids, tids = np.asarray(key_pid)[keys].tolist(), np.asarray(key_tid)[keys].tolist()
    for j, r in enumerate(rows.tolist()):
        cur_row[0] = r
        off, ln, whole = int(offs[j]), int(lens[j]), wholes[j]
        if ln > (WHOLE_PROFILE_BYTES_FACTOR * max_bytes if whole else max_bytes):
            note_bad()
            continue
        ev = _parse(bytes(buf[off: off + ln]))
        if not isinstance(ev, dict) or ev.get("name") not in PROFILE_EVENTS:
            other += 1
            continue
        pid = int(pids[j])
        pkey = (pid, f"CpuProfile@{r}") if whole else (pid, str(ev.get("id")))
        p = profiles.get(pkey)
        if p is None:
            if len(profiles) >= MAX_PROFILES:
                note_bad()
                continue
            p = profiles[pkey] = _Profile(pid=pid, first_row=r)
        args = ev.get("args") if isinstance(ev.get("args"), dict) else {}
        if "data" not in args and ev["name"] == "ProfileChunk":
            continue
        data = args.get("data") if isinstance(args.get("data"), dict) else None
        if data is None:
            note_bad()
            continue
        if ev["name"] in ("Profile", "CpuProfile"):
            p.tid = int(tids[j])
            cpu_ = data.get("cpuProfile") if isinstance(data.get("cpuProfile"), dict) else {}
            if _num(data.get("startTime")):
                p.start = float(data["startTime"])
            elif _num(cpu_.get("startTime")):  # the older form keeps it in the profile
                p.start = float(cpu_["startTime"])
            elif _num(ev.get("ts")):
                p.start = float(ev["ts"])
        elif p.first_chunk_ts is None and _num(ev.get("ts")):
            p.first_chunk_ts = float(ev["ts"])
        cpu = data.get("cpuProfile")
        if cpu is None:
            continue
        if not isinstance(cpu, dict):
            note_bad()
            continue
        if "nodes" in cpu:
            _add_nodes(p, cpu["nodes"], text, note_bad)
        samples, deltas = cpu.get("samples", []), data.get("timeDeltas", cpu.get("timeDeltas", []))
        if not isinstance(samples, list) or not isinstance(deltas, list):
            note_bad()
            continue
        _add_samples(p, samples, deltas, note_bad)
    reps = [("js_profile", bad["n"], bad["first"])]
    no_start = [p for p in profiles.values() if p.start is None and any(a.size for a in p.samples)]
    reps.append(("js_profile_no_start", len(no_start), no_start[0].first_row if no_start else None))
    return list(profiles.values()), other, reps


#: `sample_leaves`' kind of a node by its name: 0 an empty stack, 1 (program), 2 GC, else 3 (JavaScript)
_NAME_KIND = {ROOT: 0, "(idle)": 0, "(program)": 1, GC: 2}


def sample_leaves(raw: np.ndarray, parent: np.ndarray, names: list) -> tuple:
    """The leaf node each sample (in time order) stands for, by the rules of DevTools' CPU
    profile model: ``(root)``, ``(idle)``, an unknown node: an empty stack (-1); a lone
    ``(program)`` sample between two JavaScript stacks with the same bottom frame takes the
    previous sample's stack (the sampler failed to walk the stack: "fixMissingSamples"), other
    ``(program)`` samples are empty; ``(garbage collector)`` samples stand on top of the stack
    of the last sample before them that is no GC sample (V8 reports GC under the root: without
    this every collection cut every open frame in two).  ``parent``: the nodes' parents
    (``(root)`` already cut off).  Returns (leaf per sample, the parents of the GC nodes to
    append: one per stack a collection interrupted; leaf n + k is the k-th)."""
    if not parent.size:
        return np.full(raw.size, -1, np.int64), np.zeros(0, np.int64)
    return leaves_of_kinds(raw, parent, name_kinds(names))


def name_kinds(names) -> np.ndarray:
    """`sample_leaves`' kind of each name: 0 an empty stack, 1 ``(program)``, 2 GC, 3 JavaScript."""
    return np.fromiter(map(_NAME_KIND.get, names, repeat(3)), np.int8, len(names))


def leaves_of_kinds(raw: np.ndarray, parent: np.ndarray, kind_of: np.ndarray) -> tuple:
    """`sample_leaves` with each node's kind given (`name_kinds`)."""
    n_nodes, n = parent.size, raw.size
    if not n_nodes:
        return np.full(n, -1, np.int64), np.zeros(0, np.int64)
    kind = np.where(raw >= 0, kind_of[np.maximum(raw, 0)], 0)  # 0 empty, 1 program, 2 GC, 3 JS
    leaf = np.where(kind == 3, raw, -1)
    if n > 2:
        mid = np.arange(1, n - 1)
        lone = (kind[mid] == 1) & (kind[mid - 1] == 3) & (kind[mid + 1] == 3)
        if lone.any():  # (each node's top-level frame only then: 10^4 small profiles spent a second on it)
            bottom = np.where(parent >= 0, parent, np.arange(n_nodes))  # pointer jumping
            for _ in range(int(n_nodes).bit_length() + 1):  # (a parent cycle just stops somewhere in the cycle)
                nxt = bottom[bottom]
                if np.array_equal(nxt, bottom):
                    break
                bottom = nxt
            lone &= bottom[np.maximum(raw[mid - 1], 0)] == bottom[np.maximum(raw[mid + 1], 0)]
            leaf[mid[lone]] = raw[mid[lone] - 1]
    is_gc = kind == 2
    gc_parent = np.zeros(0, np.int64)
    if is_gc.any():
        last = np.maximum.accumulate(np.where(~is_gc, np.arange(n), -1))  # the last non-GC sample at or before
        under = np.where(last >= 0, leaf[np.maximum(last, 0)], -1)
        on_stack = is_gc & (under >= 0)
        gc_parent, slot = np.unique(under[on_stack], return_inverse=True)
        leaf[on_stack] = n_nodes + slot
        leaf[is_gc & ~on_stack] = raw[is_gc & ~on_stack]  # after an empty stack: GC alone
    return leaf, gc_parent.astype(np.int64)


class _Counts:
    """Repairs of the profiles' tables: code → [count, first profile's first row]."""

    def __init__(self):
        self.items: dict = {}

    def add(self, code: str, count: int, row: int):
        if count > 0:
            it = self.items.setdefault(code, [0, row])
            it[0] += int(count)


class ColumnFrames(FrameTable):
    """A `FrameTable` whose frames are told apart by column too: V8 calls every anonymous function
    of a minified script "(anonymous)" on its one line, only the column separates them (a frame
    is speedscope's ``name:file:line:col``)."""

    def __init__(self, max_name_chars: int = 4096):
        super().__init__(max_name_chars)
        self.by_column: dict = {}

    def add_all(self, keys: list) -> list:
        """The id of each frame (name, file, line, column) of ``keys`` (names and files already
        cleaned by the reader), added when new."""
        index = self.by_column
        n0 = len(index)
        ids = [index.setdefault(k, len(index)) for k in keys]  # (a new key's id: the size before it)
        for name, file, line, _ in list(index)[n0:]:
            self.names.append(name or "(anonymous)")
            self.files.append(file)
            self.lines.append(line)
        return ids


def _lookup(ids_sorted: np.ndarray, at: np.ndarray, q: np.ndarray) -> np.ndarray:
    """The node index of each id in ``q`` (-1 when the profile has no such node)."""
    if not ids_sorted.size:
        return np.full(q.size, -1, np.int64)
    pos = np.minimum(np.searchsorted(ids_sorted, q), ids_sorted.size - 1)
    return np.where(ids_sorted[pos] == q, at[pos], -1)


def _node_arrays(p: _Profile) -> NodeArrays:
    """The node table of ``p``'s lists (`_add_nodes`, `_add_tree`) as `NodeArrays`."""
    n_nodes = len(p.node_frame)
    names = list(map(itemgetter(0), p.node_frame))
    return NodeArrays(
        ids=np.fromiter(p.node_index.keys(), np.int64, n_nodes),
        par_ids=np.array([BAD_PARENT if x is None else x for x in p.node_parent_id], np.int64),
        given=np.array([x is not None for x in p.node_parent_id], bool),
        is_root=np.array([nm == ROOT for nm in names], bool) if n_nodes else np.zeros(0, bool),
        kind_of=name_kinds(names), pairs=np.concatenate(p.children) if p.children else None,
        frames=lambda table: np.array(table.add_all(p.node_frame), np.int64), gc_node=lambda: names.index(GC))


def _median(x: np.ndarray) -> float:
    """``np.median(x)`` of finite floats (0.0 when empty), the same value without its per-call
    cost (a profile's step: 10^4 small profiles spent a second in `np.median`)."""
    n = x.size
    if not n:
        return 0.0
    s = np.sort(x)
    return float(s[n // 2]) if n % 2 else float((s[n // 2 - 1] + s[n // 2]) / 2)


def _stack_profile(p: _Profile, frames: ColumnFrames, max_abs_time: float, counts: _Counts):
    """One profile's node table and samples as a `StackProfile` (DevTools' rules applied:
    `sample_leaves`), with (samples, interval µs); None when it holds no JavaScript."""
    samples = np.concatenate(p.samples) if p.samples else np.zeros(0, np.int64)
    if not samples.size:
        return None
    nt = p.nodes if p.nodes is not None else _node_arrays(p)
    n_nodes = nt.ids.size
    o_ids = np.argsort(nt.ids, kind="stable")
    ids_sorted, at = nt.ids[o_ids], o_ids.astype(np.int64)
    parent = np.where(nt.given, _lookup(ids_sorted, at, nt.par_ids), -1)
    missing_parent = nt.given & (parent < 0)
    if nt.pairs is not None:
        pa, ch = _lookup(ids_sorted, at, nt.pairs[:, 0]), _lookup(ids_sorted, at, nt.pairs[:, 1])
        ok = (pa >= 0) & (ch >= 0)
        parent[ch[ok]] = pa[ok]
        missing_parent[ch[ok]] = False
    is_root = nt.is_root
    missing_parent &= ~is_root
    counts.add("js_node_parent", int(missing_parent.sum()), p.first_row)
    parent = np.where((parent >= 0) & is_root[np.maximum(parent, 0)], -1, parent) if n_nodes else parent
    raw = _lookup(ids_sorted, at, samples)
    counts.add("js_sample_node", int(((raw < 0) & (samples != NO_NODE)).sum()), p.first_row)
    if p.times is not None:
        t = p.times
    else:
        start = p.start if p.start is not None else (p.first_chunk_ts if p.first_chunk_ts is not None else 0.0)
        with np.errstate(over="ignore", invalid="ignore"):
            t = start + np.cumsum(np.concatenate(p.deltas))
    ok = np.abs(t) <= max_abs_time  # (NaN and ±inf are not)
    n_out = t.size - int(np.count_nonzero(ok))
    counts.add("js_sample_time", n_out, p.first_row)
    if n_out:
        t, raw = t[ok], raw[ok]
    if not t.size:
        return None
    d = np.diff(t)
    if (d < 0).any():  # (already in order: the stable sort would leave it as it is)
        o = np.argsort(t, kind="stable")
        t, raw = t[o], raw[o]
        d = np.diff(t)
    step = _median(d[d > 0])
    leaf, gc_parent = leaves_of_kinds(raw, parent, nt.kind_of)
    end = min(float(t[-1]) + step, max_abs_time) if step > 0 else float(t[-1]) + 1.0
    # a frame runs for a while only if some sample with a stack is followed by a later one
    if not ((leaf >= 0) & (np.append(t[1:], end) > t)).any():
        return None
    frame = nt.frames(frames)
    if gc_parent.size:  # GC on top of the stack it interrupted: a node of its own per stack
        parent = np.concatenate([parent, gc_parent])
        frame = np.concatenate([frame, np.full(gc_parent.size, frame[nt.gc_node()], np.int64)])
    sp = StackProfile(thread_name="", stack_parent=parent, stack_frame=frame, sample_stack=leaf, sample_time=t,
                      end_time=end if step > 0 else None, pid=p.pid, tid=p.tid if p.tid is not None else 0,
                      interval_us=step if step > 0 else None)
    return sp, int(t.size), step


def profile_trace(profiles: list, *, source: str, limits, input_bytes: int, kind_rules=None) -> tuple:
    """The calls of ``profiles`` (`read_profiles`, or the profile of a .cpuprofile) by
    `stacks.timed_trace`, one thread per profile that holds JavaScript.  Returns (the trace, or
    None when no profile holds JavaScript; its lanes [(pid, sampled tid or None, samples,
    interval µs)], one per thread; repairs [(code, count, first profile's row)], the
    builder's codes named as `chrome.REPAIRS` names them).  Raises `TraceFormatError` (naming
    ``source``) when the samples expand to more than ``limits.sample_calls(input_bytes)`` calls."""
    frames = ColumnFrames(limits.max_name_chars)
    counts = _Counts()
    stacks, lanes = [], []
    for p in profiles:
        got = _stack_profile(p, frames, limits.max_abs_time, counts)
        if got is not None:
            stacks.append(got[0])
            lanes.append((p.pid, p.tid, got[1], got[2]))
    reps = [(code, c, row) for code, (c, row) in counts.items.items()]
    if not stacks:
        return None, [], reps
    if len(stacks) > limits.max_lanes_read:  # past it, the profiles of the fewest samples are one lane
        keep = kept_lanes(np.array([ln[2] for ln in lanes], np.float64), limits.max_lanes_read - 1).tolist()
        rest = [s for s, k in zip(stacks, keep) if not k]
        n_rest = sum(ln[2] for ln, k in zip(lanes, keep) if not k)
        stacks = [s for s, k in zip(stacks, keep) if k] + [merge_profiles(rest, source)]
        lanes = [ln for ln, k in zip(lanes, keep) if k] + [(0, None, n_rest, None)]
        reps.append(("lanes_capped", len(rest), profiles[0].first_row))
    trace = timed_trace(frames, stacks, source=source, fmt="v8-profile", limits=limits, input_bytes=input_bytes,
                        kind_rules=kind_rules, warn=False, cat="js-sample")
    first = profiles[0].first_row if profiles else -1
    reps += [(_BUILDER_CODES.get(code, "js_profile"), r["count"], first) for code, r in trace.meta["repairs"].items()]
    return trace, lanes, reps


def calls_trace(frames: FrameTable, frame, start, end, lane, n_lanes: int, kind_rules=None, cat: str = "sample"):
    """A Trace of calls already expanded from samples: ``frame`` (into ``frames``), ``start`` and
    ``end`` (absolute µs), ``lane`` (0 … ``n_lanes`` - 1), in the order the samples opened them
    (a parent before its children); calls of no duration are left out.  Thread k is lane k
    (pid 0, tid k: `with_profile_lanes` gives it its place); ``meta["clock_origin"]`` 0."""
    from ..kernels.tree import nest_sorted_intervals, preorder_sort
    from ..kinds import classify_functions
    from ..model import Trace
    from ..names import parse_function_name
    from .hermes import located

    keep = end > start
    frame, start, end, lane = frame[keep], start[keep], end[keep], lane[keep]
    order = preorder_sort(lane, start, end, np.arange(lane.size), n_lanes)
    frame, start, end, lane = frame[order], start[order], end[order], lane[order]
    parent, depth, end_index, end, _ = nest_sorted_intervals(lane, start, end)
    parsed = [located(parse_function_name(nm, file=fl, line=ln), nm) for nm, fl, ln in zip(frames.names, frames.files,
                                                                                             frames.lines)]
    f_kind = classify_functions(frames.names, kind_rules) if frames.names else np.zeros(0, np.uint8)
    n = frame.size
    return Trace(func=frame.astype(np.int32), start=start, end=end, depth=depth.astype(np.int32),
                 parent=parent.astype(np.int32), end_index=end_index.astype(np.int32), thread=lane.astype(np.int32),
                 kind=f_kind[frame].astype(np.uint8) if n else np.zeros(0, np.uint8),
                 obj_ptr=np.zeros(n + 1, np.int64), obj_ids=np.zeros(0, np.int32),
                 function_names=list(frames.names), function_files=[q.file or f for q, f in zip(parsed, frames.files)],
                 function_lines=np.array([q.line if q.line >= 0 else ln for q, ln in zip(parsed, frames.lines)],
                                         np.int32),
                 function_cats=[cat] * len(frames.names), function_paths=[q.path for q in parsed],
                 thread_pid=np.zeros(n_lanes, np.int64), thread_tid=np.arange(n_lanes, dtype=np.int64),
                 thread_names=[""] * n_lanes, thread_sort=np.zeros(n_lanes, np.int32), process_names=[""] * n_lanes,
                 meta={"clock_origin": 0.0})


def with_profile_lanes(trace, lanes_trace, t0: float, lanes: list, sampled_names: dict | None = None,
                       suffix: str = LANE_SUFFIX, meta_key: str = "js_profiles"):
    """``trace`` with the calls of ``lanes_trace`` (`profile_trace`, `calls_trace`) appended, each of
    its threads a lane of its own after the trace's threads: "<sampled thread><suffix>" in the
    sampled thread's process (tid -1, -2, ...: no real thread has it), its functions added to the
    function table.  ``lanes``: [(pid, sampled tid or None, samples, interval µs)], one per thread
    of ``lanes_trace``.  Times on the trace's clock (``t0``: its origin).  ``sampled_names``:
    (pid, tid) → a thread's name from the metadata, for a sampled thread that has no lane of its
    own in ``trace`` (a worker without trace events).  ``meta[meta_key]`` lists the lanes."""
    import dataclasses

    lt = lanes_trace
    n0, nt0, nf0 = len(trace), trace.n_threads, trace.n_functions
    t_pid, t_tid, t_names, t_proc, t_sort = [], [], [], [], []
    pids = trace.thread_pid.tolist()
    tids = trace.thread_tid.tolist()
    lanes_meta = list(trace.meta.get(meta_key, []))
    ranges = lt.thread_ranges()
    k0 = sum(1 for nm in trace.thread_names if nm.endswith(suffix))  # lanes of this kind already there
    neg0 = int((trace.thread_tid < 0).sum())  # lanes of any kind already there
    first_of: dict = {}  # (pid, tid) and pid -> the first thread that has it (one pass: lanes × threads was slow)
    for j in range(nt0 - 1, -1, -1):
        first_of[(pids[j], tids[j])] = first_of[pids[j]] = j
    for k, (pid, tid, n_samples, step) in enumerate(lanes):
        same = [first_of[(pid, tid)]] if tid is not None and (pid, tid) in first_of else []
        of_pid = [first_of[pid]] if pid in first_of else []
        sampled = trace.thread_names[same[0]] if same else (sampled_names or {}).get((pid, tid)) or (
            str(tid) if tid is not None else f"V8 profile {k0 + k + 1}")
        t_pid.append(pid)
        t_tid.append(-(neg0 + k + 1))
        t_names.append(sampled + suffix)
        t_proc.append(trace.process_names[of_pid[0]] if of_pid else str(pid))
        t_sort.append(int(trace.thread_sort[same[0]]) if same else 0)
        lanes_meta.append({"thread": sampled + suffix, "sampled_thread": sampled, "pid": pid,
                           "samples": n_samples, "interval_us": step,
                           "calls": int(ranges[k, 1] - ranges[k, 0])})
    par = lt.parent
    meta = dict(trace.meta)
    meta[meta_key] = lanes_meta
    shift = float(lt.meta.get("clock_origin", 0.0)) - t0
    return dataclasses.replace(
        trace,
        func=np.concatenate([trace.func, (nf0 + lt.func).astype(np.int32)]),
        start=np.concatenate([trace.start, lt.start + shift]),
        end=np.concatenate([trace.end, lt.end + shift]),
        depth=np.concatenate([trace.depth, lt.depth.astype(np.int32)]),
        parent=np.concatenate([trace.parent, np.where(par >= 0, par + n0, -1).astype(np.int32)]),
        end_index=np.concatenate([trace.end_index, (lt.end_index + n0).astype(np.int32)]),
        thread=np.concatenate([trace.thread, (nt0 + lt.thread).astype(np.int32)]),
        kind=np.concatenate([trace.kind, lt.kind.astype(np.uint8)]),
        obj_ptr=np.concatenate([trace.obj_ptr, np.full(len(lt), trace.obj_ptr[-1], np.int64)]),
        function_names=list(trace.function_names) + list(lt.function_names),
        function_files=list(trace.function_files) + list(lt.function_files),
        function_lines=np.concatenate([trace.function_lines, lt.function_lines.astype(np.int32)]),
        function_cats=list(trace.function_cats) + list(lt.function_cats),
        function_paths=list(trace.function_paths) + list(lt.function_paths),
        thread_pid=np.concatenate([trace.thread_pid, np.array(t_pid, np.int64)]),
        thread_tid=np.concatenate([trace.thread_tid, np.array(t_tid, np.int64)]),
        thread_names=list(trace.thread_names) + t_names,
        thread_sort=np.concatenate([trace.thread_sort, np.array(t_sort, np.int32)]),
        process_names=list(trace.process_names) + t_proc,
        meta=meta,
    )
