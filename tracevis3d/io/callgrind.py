"""callgrind profiles (``valgrind --tool=callgrind``, KCachegrind's format) → one merged `Trace`.

A callgrind file is a call graph: the self cost of each function by source position, and for
each call site the inclusive cost of the call (``cfn=``/``cfi=``/``calls=`` then one cost
line).  speedscope's ``callgrind.ts`` turns it into a tree, and so does this reader:

- frames are (file, function): ``fl=`` names the file of the functions that follow,
  ``fn=`` the function; a callee's file is ``cfi=``/``cfl=`` or else the caller's; ``fi=``/
  ``fe=`` (inlined code) do not change the frame; ``ob=``/``cob=`` are not part of it;
- name compression: ``(id) name`` defines a name, ``(id)`` uses it (files, functions and
  objects each have their own ids); after each ``calls=`` the callee's names are
  forgotten (KCachegrind's and speedscope's reading);
- cost lines: the positions (as many as ``positions:`` names, ``line`` by default), then
  one cost per event of ``events:``; ``*``/``+n``/``-n`` compression is undone column by
  column (`tracevis3d.kernels.textscan.callgrind_costs`); the event shown is the first of
  ``events:`` or the one named by the option ``event=`` (name or 0-based index);
- a function's total is its self cost plus the inclusive costs of the calls it makes;
  the tree (`tracevis3d.kernels.textscan.callgraph_tree`) starts from every function that
  no call line calls, in order of first appearance, with its total (speedscope's roots),
  and gives each callee the caller's weight times the callee's share of the caller's total
  (speedscope's assumption that every call of a function splits its cost alike); recursion
  is cut where a function is already on the stack, shares under 1e-4 of the heaviest
  function's total are dropped, and the tree stops growing at
  ``limits.sample_calls(file bytes)`` nodes (repair ``callgrind_tree_cut``);
- unlike speedscope, a function that is called but whose total exceeds the costs of the
  call lines that call it (by at least that 1e-4) is a root too, with the excess: a
  thread's start routine is called by ``clone`` in the new thread, and callgrind charges
  that call to no caller, so speedscope's roots miss every thread but the first (92 % of
  the cost of tests/data/formats/callgrind/prog.callgrind).  The excess is the speedscope
  comment's "option 2"; a file whose call lines give more than a total makes no root.  Not
  for Xdebug's ``Memory_(bytes)``: memory is not additive (a call's net growth is less than
  its callees' when it frees what they allocated), so its roots are speedscope's.

Below the first calls the tree is that estimate, not measured stacks: ``meta["estimated_from"]``
is "a call graph (callgrind)" (Xdebug, yappi: by the ``creator:`` line) and titles say so.

x is the event's cost (``meta["x_unit"]``: the event's name, e.g. "Ir"; Xdebug's
``Time_(10ns)`` becomes µs and ``Memory_(bytes)`` bytes; yappi's ``Ticks``, which it writes
as whole µs of its clock, ``int(seconds * 1e6)``, µs).  Positions are not kept (a cost
line's line is where a call was made, not where the function is, as speedscope notes).

Writers met: valgrind's callgrind; Xdebug's profiler (``cachegrind.out.%p``: one ``fn=``
block per call, written when the call ends, so callers follow their callees; PHP's own
functions in the file ``php:internal``; see `tracevis3d.names` for its names); yappi's
``save(path, type="callgrind")`` (all names defined first, a function's name followed by its
file and first line, ``run /usr/lib/python3.11/threading.py:971``: that suffix, when it is the
frame's own file, becomes the frame's line; its threads are summed in one profile, each
thread's start function a root; a call line may give a call more than its callee's own lines
hold, time blocked in C: the callee's callees keep their own costs, the rest is its self).

Repairs: a cost line with a token that is not a number (``callgrind_line``), a compressed
name used before it is defined or defined twice (``callgrind_name``), ``calls=`` not
followed by a cost line (``callgrind_calls``).  Other unknown lines are errors: they mean
the file is not callgrind's.
"""
from __future__ import annotations

import re

import numpy as np

from ..filenumbers import is_digits, read_id, read_int, read_line
from ..model import TraceFormatError
from .collapsed import Repairs, frame_table, text_buffer
from .limits import DEFAULT_LIMITS
from .stacks import StackProfile, merged_trace, source_name

__all__ = ["load_callgrind"]

_HEADER = re.compile(r"^\s*(\w+):\s*(.*)$")
_ASSIGN = re.compile(r"^(\w+)=\s*(.*)$")
#: the keys of the name and call lines read (``key=value``; others are skipped)
_ASSIGN_KEYS = frozenset({"fl", "fn", "fi", "fe", "jfi", "jfn", "cfi", "cfl", "cfn", "ob", "cob", "calls"})
#: the first byte of a cost line: a digit, a relative position or ``*``
_COST_FIRST = np.zeros(256, np.bool_)
_COST_FIRST[list(b"0123456789+-*")] = True


class _Names:
    """One name-compression namespace (files, functions or objects)."""

    def __init__(self, what: str, rep: Repairs):
        self.ids: dict = {}
        self.uses: dict = {}  # "(id)" -> its name
        self.what = what
        self.rep = rep

    def read(self, value: str, lineno: int) -> str:
        """The name ``value`` (stripped) stands for: ``(id) name`` (``\\((\\d+)\\)\\s*(.+)``)
        defines and gives name, ``(id)`` gives the name defined, anything else is the name
        itself (read without regular expressions: Xdebug writes a few name lines per call)."""
        name = self.uses.get(value)  # "(12)" defined already: most name lines
        if name is not None:
            return name
        close = value.find(")") if value[:1] == "(" else -1
        ident = value[1:close] if close > 1 else ""
        if not ident.isdecimal():
            return value
        rest = value[close + 1:]
        if rest:  # "(id) name"
            name = rest.lstrip()
            old = self.ids.get(ident)
            if old is not None and old != name:
                self.rep.add("callgrind_name", 1, f"line {lineno}",
                             f"a {self.what} id defined twice: the later name used from there on")
            self.ids[ident] = name
            self.uses[f"({ident})"] = name
            return name
        name = self.ids.get(ident)
        if name is None:
            self.rep.add("callgrind_name", 1, f"line {lineno}",
                         f"a {self.what} id used before it is defined: named as written")
            return value
        return name


def _unit(event: str, creator: str = "") -> tuple:
    """(x unit, multiplier) of an event: Xdebug's time and memory events in µs and bytes
    (speedscope formats those two as time and bytes), yappi's ``Ticks`` (whole µs) in µs,
    any other by its name."""
    if event == "Time_(10ns)":
        return "µs", 0.01
    if event == "Memory_(bytes)":
        return "bytes", 1.0
    if event == "Ticks" and creator.split(" ", 1)[0] == "yappi":
        return "µs", 1.0
    return event, 1.0


def _located_names(keys: list) -> tuple:
    """(names, lines) of the frames ``keys`` ((file, function) pairs): a function name that
    ends with its own file and a line (yappi: ``run /usr/lib/python3.11/threading.py:971``)
    is cut to the name, the line kept (ASCII digits, `filenumbers.read_line`); other names as
    written, line -1."""
    names, lines = [], []
    for file, fn in keys:
        head, sep, tail = fn.rpartition(":")
        if sep and is_digits(tail) and file and head.endswith(" " + file) and len(head) > len(file) + 1:
            names.append(head[: -len(file) - 1])
            lines.append(read_line(tail))
        else:
            names.append(fn)
            lines.append(-1)
    return names, lines


def _event_index(events: list, event, source: str) -> int:
    """The index of ``event`` (a name, or a 0-based index; None: the first) among ``events``."""
    if event is None:
        return 0
    if isinstance(event, int) or is_digits(event):
        ev = int(event) if isinstance(event, int) else read_int(event, default=len(events))
        if not 0 <= ev < len(events):
            raise TraceFormatError(f"{source}: event index {ev} out of range: its events are {', '.join(events)}")
        return ev
    if event in events:
        return events.index(event)
    raise TraceFormatError(f"{source}: no event {event!r}: its events are {', '.join(events)}")


def load_callgrind(data, *, source: str = "<bytes>", limits=None, kind_rules=None, warn: bool = True,
                   event=None, **_common):
    """Load a callgrind profile (``data``: its bytes) as one merged trace (module docstring).
    ``event``: the event to show, by name or 0-based index (default: the first)."""
    from ..kernels.callgrind_scan import callgraph_tree, callgrind_costs
    from ..kernels.textscan import join_spans

    lim = limits if limits is not None else DEFAULT_LIMITS
    rep = Repairs()
    n_input = len(data) if not isinstance(data, np.ndarray) else data.nbytes
    buf, _ = text_buffer(data, source, rep)
    nl = np.flatnonzero(buf == 10)
    starts = np.concatenate([[0], nl + 1]).astype(np.int64)
    ends = np.concatenate([nl, [buf.size]]).astype(np.int64)
    cr = (ends > starts) & (buf[np.maximum(ends - 1, 0)] == 13)
    ends = ends - cr
    n_lines = int(starts.size)
    first = np.where(ends > starts, buf[np.minimum(starts, max(buf.size - 1, 0))], 10) if buf.size else \
        np.zeros(0, np.uint8)
    is_cost = (ends > starts) & _COST_FIRST[first]
    # lines read in Python: names, calls, headers (not cost lines, blank lines or jump lines)
    second = np.where(ends > starts + 1, buf[np.minimum(starts + 1, max(buf.size - 1, 0))], 10) if buf.size else \
        np.zeros(0, np.uint8)
    jump = (first == ord("j")) & (second != ord("f"))  # jump=/jcnd= (jfi=/jfn= define names: read)
    py_lines = np.flatnonzero(~is_cost & (ends > starts) & ~jump & (first != ord("#")))
    files, fns, objs = _Names("file", rep), _Names("function", rep), _Names("object", rep)
    cur_file = cur_fn = None
    callee_file = callee_fn = None
    events = None
    n_pos = 1
    header = {}
    key_of: dict = {}  # (file, function) -> provisional id
    ctx_line, ctx_key = [], []  # the (file, function) in force from each fl=/fn= line on
    call_line, call_from, call_to = [], [], []

    def key(file, fn) -> int:
        k = (file or "(unknown)", fn or "(unknown)")
        v = key_of.get(k)
        if v is None:
            v = key_of[k] = len(key_of)
        return v

    # the text of every line read here: one join, one decode, one split (Xdebug writes a few
    # name lines per call: a decode per line was most of its reading time)
    texts = join_spans(buf, starts[py_lines], ends[py_lines] - starts[py_lines], 10).tobytes() \
        .decode("utf-8", "replace").split("\n") if py_lines.size else []
    for i, text in zip(py_lines.tolist(), texts):
        k, eq, value = text.partition("=")
        if not (eq and k in _ASSIGN_KEYS):  # not "fn=(12)", "cfl=(3) /src/a.php", "calls=1 0 0", ...
            s = text.strip()
            if not s or s.startswith("#"):
                continue
            m = _HEADER.match(text)
            if m and "=" not in m.group(1):
                name, value = m.group(1), m.group(2).strip()
                if name == "events":
                    evs = value.split()
                    if events is not None and evs != events:
                        raise TraceFormatError(f"{source}: line {i + 1}: a second 'events:' line ({value!r}) that "
                                               f"differs from the first ({' '.join(events)!r})")
                    events = evs
                elif name == "positions":
                    n_pos = max(1, len(value.split()))
                elif name in ("cmd", "pid", "creator", "version"):
                    header.setdefault(name, value)
                continue
            m = _ASSIGN.match(text)
            if not m:
                raise TraceFormatError(f"{source}: line {i + 1}: not a callgrind line: {text[:80]!r}")
            k, value = m.group(1), m.group(2)
        value = value.strip()
        if k == "fl":
            cur_file = files.read(value, i + 1)
            ctx_line.append(i)
            ctx_key.append(key(cur_file, cur_fn))
        elif k == "fn":
            cur_fn = fns.read(value, i + 1)
            ctx_line.append(i)
            ctx_key.append(key(cur_file, cur_fn))
        elif k in ("fi", "fe", "jfi"):
            files.read(value, i + 1)
        elif k == "jfn":
            fns.read(value, i + 1)
        elif k in ("cfi", "cfl"):
            callee_file = files.read(value, i + 1)
        elif k == "cfn":
            callee_fn = fns.read(value, i + 1)
        elif k in ("ob", "cob"):
            objs.read(value, i + 1)
        elif k == "calls":
            if i + 1 < n_lines and is_cost[i + 1]:
                call_line.append(i + 1)
                call_from.append(key(cur_file, cur_fn))
                call_to.append(key(callee_file or cur_file, callee_fn))
            else:
                rep.add("callgrind_calls", 1, f"line {i + 1}", "'calls=' without a cost line after it: the call dropped")
            callee_file = callee_fn = None
    if events is None:
        raise TraceFormatError(f"{source}: no 'events:' line: not a callgrind profile (or cut before its header)")
    ev = _event_index(events, event, source)
    cost_idx = np.flatnonzero(is_cost)
    values, ok = callgrind_costs(buf, starts[cost_idx], ends[cost_idx], n_pos + ev)
    if not ok.all():
        rep.add("callgrind_line", int((~ok).sum()), f"line {int(cost_idx[~ok][0]) + 1}",
                "a cost line with a token that is not a number: skipped")
    unit, mult = _unit(events[ev], header.get("creator", ""))
    # call cost lines (inclusive costs of calls) and self cost lines
    call_line = np.asarray(call_line, np.int64)
    at_call = np.searchsorted(cost_idx, call_line)
    call_ok = ok[at_call] if at_call.size else np.zeros(0, np.bool_)
    call_w = values[at_call] * mult if at_call.size else np.zeros(0)
    is_self = ok.copy()
    is_self[at_call] = False
    self_idx = cost_idx[is_self]
    ctx_line = np.asarray(ctx_line, np.int64)
    ctx = np.searchsorted(ctx_line, self_idx, side="right") - 1
    ctx_key = np.asarray(ctx_key + [key(None, None)], np.int64)  # -1: before any fl=/fn= line
    self_key = ctx_key[ctx]
    self_w = values[is_self] * mult
    c_from = np.asarray(call_from, np.int64)[call_ok]
    c_to = np.asarray(call_to, np.int64)[call_ok]
    c_line = call_line[call_ok]
    c_w = call_w[call_ok]
    # frames in order of their first cost (speedscope inserts a frame at its first cost line)
    ev_line = np.concatenate([self_idx, c_line, c_line])
    ev_rank = np.concatenate([np.zeros(self_idx.size, np.int64), np.zeros(c_line.size, np.int64),
                              np.ones(c_line.size, np.int64)])
    ev_key = np.concatenate([self_key, c_from, c_to])
    order = np.lexsort((ev_rank, ev_line))
    used, first_at = np.unique(ev_key[order], return_index=True)
    if not used.size:
        raise TraceFormatError(f"{source}: no cost lines: nothing to show")
    by_first = used[np.argsort(first_at, kind="stable")]
    final = np.full(len(key_of), -1, np.int64)
    final[by_first] = np.arange(by_first.size)
    nf = int(by_first.size)
    total = np.bincount(final[self_key], weights=self_w, minlength=nf) + \
        np.bincount(final[c_from], weights=c_w, minlength=nf)
    # edges (caller, callee), each caller's in order of first appearance, their weights summed
    ef, et = final[c_from], final[c_to]
    pair = ef * nf + et
    upair, pfirst, pinv = np.unique(pair, return_index=True, return_inverse=True)
    pw = np.bincount(pinv, weights=c_w, minlength=upair.size)
    eorder = np.argsort(pfirst, kind="stable")
    eorder = eorder[np.argsort(upair[eorder] // max(nf, 1), kind="stable")]
    e_from, e_to, e_w = upair[eorder] // max(nf, 1), upair[eorder] % max(nf, 1), pw[eorder]
    child_ptr = np.zeros(nf + 1, np.int64)
    np.add.at(child_ptr, e_from + 1, 1)
    child_ptr = np.cumsum(child_ptr)
    # roots: the functions no call line calls (speedscope), with their totals, and the functions
    # whose total exceeds what their callers' call lines give them (a thread's start routine,
    # called by clone from no caller that callgrind charges), with that excess
    called = np.bincount(e_to, weights=e_w, minlength=nf)
    is_callee = np.zeros(nf, np.bool_)
    is_callee[e_to] = True
    threshold = 1e-4 * float(total.max()) if total.size else 0.0
    root_w = np.where(is_callee, total - called, total)
    # (not for Xdebug's memory: a call's net memory growth is below its callees' when it frees
    # what they allocated, so that excess is no unseen caller's)
    additive = events[ev] != "Memory_(bytes)"
    roots = np.flatnonzero(~is_callee | (additive & (root_w >= max(threshold, 1e-300))))
    bad = ~np.isfinite(total) | (np.abs(total) > lim.max_abs_time)
    if bad.any():
        raise TraceFormatError(f"{source}: a function's {events[ev]} cost is {float(total[bad][0]):.3g}, past "
                               f"{lim.max_abs_time:g}: not a cost")
    max_nodes = int(lim.sample_calls(n_input))
    # yappi: a callee's share of a node is its edge over the larger of the function's total and
    # what its callers' call lines claim for it: yappi charges a call time its callee's own lines
    # do not hold (a worker blocked in a C call: 6.1 s on the call line, 3.2 s in the callee's),
    # and speedscope's shares would inflate the callee's callees by that ratio (2x); the rest is
    # the function's self time, and no callee gets more than its call lines say
    share_total = np.maximum(total, called) if header.get("creator", "").split(" ", 1)[0] == "yappi" else total
    n_parent, n_frame, n_self, n_cut = callgraph_tree(share_total, child_ptr, e_to.astype(np.int64),
                                                      e_w.astype(np.float64),
                                                      roots.astype(np.int64), root_w[roots].astype(np.float64),
                                                      threshold, max_nodes)
    rep.add("callgrind_tree_cut", int(n_cut), "the call tree",
            f"the call tree reached {max_nodes} nodes: calls past it left in their caller's self cost "
            f"(sample_bytes_per_call= or max_events= to allow more)")
    inv = {v: k for k, v in key_of.items()}
    keys = [inv[int(k)] for k in by_first]
    names, lines = _located_names(keys)
    frames = frame_table(names, lim, files=[k[0] for k in keys], lines=lines)
    pid = read_id(header.get("pid", "0").strip(), 0)  # ASCII digits that fit, else no pid
    cmd = header.get("cmd", "").strip()
    profile = StackProfile(thread_name=cmd or source_name(source), stack_parent=n_parent, stack_frame=n_frame,
                           sample_stack=np.arange(n_parent.size, dtype=np.int64),
                           sample_weight=np.maximum(n_self, 0.0), process_name=cmd, pid=pid, tid=pid)
    creator = header.get("creator", "").split(" ", 1)[0].lower()
    writer = {"xdebug": "Xdebug", "yappi": "yappi"}.get(creator.split("/", 1)[0], "callgrind")
    # the tree below the first calls is speedscope's estimate (every call of a function splits
    # its cost alike), not measured stacks: the title says so, as pstats' does
    meta = {"estimated_from": f"a call graph ({writer})", "callgrind_events": list(events), "callgrind_event": events[ev], "creator": header.get("creator", ""),
            "callgrind_functions": nf, "callgrind_calls": int(upair.size), "lines": n_lines}
    trace = merged_trace(frames, [profile], unit=unit, source=source, fmt="callgrind", limits=lim,
                         input_bytes=n_input, kind_rules=kind_rules, meta=meta, warn=warn)
    return rep.apply(trace, source, warn)
