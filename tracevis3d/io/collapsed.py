"""Collapsed stacks (Brendan Gregg's folded format: ``a;b;c 12``) → one merged `Trace`.

Each line is a stack, root first, frames split at ``;``, then white space and a count
(`tracevis3d.kernels.textscan.collapsed_scan` gives the exact grammar).  The stacks are laid
out as speedscope's Left Heavy view does (`tracevis3d.io.stacks.merged_trace`): x is the
count summed ("samples"), every distinct frame path one call.

Encodings: UTF-8 (a byte order mark is skipped), and UTF-16 LE or BE with a byte order mark
(speedscope's ``TextFileContent`` decodes them; stackcollapse output saved by Windows tools
is UTF-16), which is transcoded to UTF-8 first.  Line ends LF or CRLF.

Lanes: speedscope shows one profile.  py-spy's raw output (``py-spy record -f raw``) opens
every stack with ``process N:"cmd"`` frames (``--subprocesses``) and a ``thread (tid)`` or
``thread (tid): name`` frame (``--threads``); Austin's (3.x: ``austin -o out.txt python …``)
with ``P<pid>`` and ``T<interpreter>:<tid>`` frames (``T<tid>`` in older versions); those
leading frames become lanes here (one per thread, named and numbered from them: Austin's
``thread <tid>``) instead of frames.  Files without them are one lane.

Austin's header: a file that opens with ``# austin: <version>`` has its lines opening with
``#`` before the first stack and after the last taken as a header, not as stacks (Austin writes
``# interval: 1000``, ``# mode: wall`` first and ``# duration: …`` last, whose numbers would
read as counts); its ``# key: value`` lines go to ``meta["collapsed_header"]``.  In any other
file such a line is a line that is not a stack (repair ``collapsed_line``), as speedscope reads it.
Austin's counts are µs of wall or CPU time (``mode: wall``/``cpu``: ``meta["x_unit"]`` "µs")
or bytes (``mode: memory``, ``-m``: "bytes"; a negative count, memory a sample saw freed,
is left out, repair ``collapsed_freed``); any other file's are "samples".  Austin's frames
``file:qualname:line`` are named by `tracevis3d.names` (``module.qualname``); each line of a
function is its own frame, as in Austin's own flame graphs and py-spy's raw output.

Repairs (``trace.meta["repairs"]``): lines that are not ``stack count`` (comments, cut lines)
are skipped (``collapsed_line``, first line number given); a frame that is not valid UTF-8
is decoded with U+FFFD (``invalid_utf8``); a UTF-16 file with an odd byte or a lone surrogate
likewise (``invalid_utf16``); stacks deeper than ``max_stack_depth`` are cut (``stack_deep``).
Counts past ``max_abs_time`` or not finite weigh 0 (``sample_weight``, from the builder).
"""
from __future__ import annotations

import re

import numpy as np

from ..filenumbers import read_id
from ..model import TraceFormatError
from .limits import DEFAULT_LIMITS
from .stacks import FrameTable, Repairs, StackProfile, gc_paused, merged_trace, source_name

__all__ = ["load_collapsed", "text_buffer", "Repairs", "frame_table", "decode_spans", "lane_tables"]

#: lanes beyond ``limits.max_lanes_read`` (this by default) are not made: the thread frames stay
#: frames (a file of a million distinct "thread (...)" frames would otherwise cost a profile each)
MAX_LANES_READ = DEFAULT_LIMITS.max_lanes_read

_LANE_FRAME = re.compile(r'^(?:process ([0-9]+):|thread \((0x[0-9A-Fa-f]+|[0-9]+)\))')
#: Austin's process and thread frames (``P4242``; ``T0:4243``, ``T7f3a2b4c5700``)
_AUSTIN_LANE = re.compile(r'^(?:P([0-9]+)|T(?:([0-9]+):)?(0x[0-9A-Fa-f]+|[0-9A-Fa-f]+))$')
_AUSTIN_FIRST = re.compile(rb'^P\d+;T(?:\d+:)?(?:0x)?[0-9A-Fa-f]+[; ]')
#: the most header or trailer comment bytes looked at
MAX_COMMENT_BYTES = 1 << 16


def text_buffer(data, source: str, rep: Repairs) -> tuple:
    """The bytes of a text file as a uint8 array of UTF-8 and the encoding they came in.

    A UTF-8 byte order mark is dropped; UTF-16 (LE or BE, told by its byte order mark) is
    transcoded to UTF-8 (memory: the text twice); an odd last byte or a lone surrogate
    half becomes U+FFFD (repair ``invalid_utf16``, first byte offset given)."""
    buf = np.frombuffer(data, np.uint8) if not isinstance(data, np.ndarray) else data.reshape(-1).view(np.uint8)
    head = bytes(buf[:4])
    if head[:3] == b"\xef\xbb\xbf":
        return buf[3:], "utf-8"
    if head[:2] in (b"\xff\xfe", b"\xfe\xff") and head[:4] != b"\xff\xfe\x00\x00":
        codec = "utf-16-le" if head[:2] == b"\xff\xfe" else "utf-16-be"
        raw = buf[2:]
        if raw.size % 2:
            rep.add("invalid_utf16", 1, f"byte {buf.size - 1}", "an odd last byte of UTF-16 text: dropped")
            raw = raw[:-1]
        raw_b = raw.tobytes()
        try:
            text = raw_b.decode(codec)
        except UnicodeDecodeError as e:
            text = raw_b.decode(codec, "replace")
            rep.add("invalid_utf16", 1, f"byte {e.start + 2}", "UTF-16 that is not valid (a lone surrogate half): "
                                                               "U+FFFD")
        del raw_b
        return np.frombuffer(text.encode("utf-8", "surrogatepass"), np.uint8), codec
    return buf, "utf-8"


def decode_spans(buf, off, ln, where, rep: Repairs, sep: int = 10) -> list:
    """The text of each byte span (``buf[off:off+ln]``; spans hold no ``sep`` byte): one
    join, one decode, one split.  Spans that are not valid UTF-8 are decoded with U+FFFD
    (repair ``invalid_utf8``; ``where(k)`` names span k's place)."""
    from ..kernels.textscan import join_spans

    n = int(off.shape[0])
    if n == 0:
        return []
    blob = join_spans(buf, np.asarray(off, np.int64), np.asarray(ln, np.int64), sep).tobytes()
    try:
        return blob.decode("utf-8").split(chr(sep))
    except UnicodeDecodeError as e:
        k = blob.count(bytes([sep]), 0, e.start)
        names = blob.decode("utf-8", "replace").split(chr(sep))
        bad = 0
        for j in range(k, n):  # the spans from the first bad one on
            if "\ufffd" in names[j]:
                try:
                    bytes(buf[off[j]: off[j] + ln[j]]).decode("utf-8")
                except UnicodeDecodeError:
                    bad += 1
        rep.add("invalid_utf8", max(bad, 1), where(k), "a name that is not valid UTF-8: undecodable bytes as U+FFFD")
        return names


def frame_table(names: list, limits, files: list | None = None, lines: list | None = None) -> FrameTable:
    """A `FrameTable` of frames already distinct (one per name, or per (name, file, line)),
    filled in bulk: names longer than ``max_name_chars`` are cut as `FrameTable` cuts them."""
    ft = FrameTable(limits.max_name_chars)
    cap = limits.max_name_chars
    if names and max(map(len, names)) > cap:
        names = [ft._clean(s) if len(s) > cap else s for s in names]
    else:
        names = list(names)  # the table's own list (FrameTable.add may grow it)
    names = [s or "(anonymous)" for s in names] if "" in names else names
    n = len(names)
    ft.names = names
    ft.files = list(files) if files is not None else [""] * n
    ft.lines = list(lines) if lines is not None else [-1] * n
    ft.index = dict(zip(zip(ft.names, ft.files, ft.lines), range(n)))
    return ft


def _python_scan(buf, max_depth: int):
    """The scan of `collapsed_scan` in plain Python dictionaries (SipHash, keyed per
    process): used only when the numba tables were flooded by crafted collisions."""
    text = buf.tobytes()
    f_index: dict = {}
    f_off, f_len, f_line = [], [], []
    n_index: dict = {}
    n_parent, n_frame = [], []
    l_node, l_weight = [], []
    counts = np.zeros(7, np.int64)
    counts[3] = counts[5] = -1
    pos = 0
    lineno = 0
    n = len(text)
    while pos < n:
        lineno += 1
        e = text.find(b"\n", pos)
        e = n if e < 0 else e
        p, pos = pos, e + 1
        line = text[p:e].rstrip(b"\r \t")
        if not line:
            counts[1] += 1
            continue
        cut = max(line.rfind(b" "), line.rfind(b"\t"), line.rfind(b"\r"))
        tok = line[cut + 1:]
        if cut < 0 or not re.fullmatch(rb"\d+(?:\.\d*)?", tok):
            counts[2] += 1
            counts[3] = lineno if counts[3] < 0 else counts[3]
            continue
        stack = line[:cut].rstrip(b" \t")
        w = float(tok)
        if not stack:
            l_node.append(-1)
            l_weight.append(w)
            continue
        parts = stack.split(b";")
        if len(parts) > 1 and parts[-1] == b"":
            parts.pop()
        if len(parts) > max_depth:
            counts[4] += 1
            counts[5] = lineno if counts[5] < 0 else counts[5]
            parts = parts[:max_depth]
        parent = -1
        at = p
        for fr in parts:
            fid = f_index.get(fr)
            if fid is None:
                fid = f_index[fr] = len(f_off)
                f_off.append(at)
                f_len.append(len(fr))
                f_line.append(lineno)
            key = (parent, fid)
            node = n_index.get(key)
            if node is None:
                node = n_index[key] = len(n_parent)
                n_parent.append(parent)
                n_frame.append(fid)
            parent = node
            at += len(fr) + 1
        l_node.append(parent)
        l_weight.append(w)
    counts[0] = lineno
    a = np.asarray
    return (a(f_off, np.int64), a(f_len, np.int64), a(f_line, np.int64), a(n_parent, np.int64),
            a(n_frame, np.int64), a(l_node, np.int64), a(l_weight, np.float64), np.zeros((0, 3), np.int64), counts)


def lane_tables(lanes, node_lane, node_parent, node_frame, sample_lane, sample_node, sample_weight=None):
    """Split one stack table that holds several lanes' stacks into each lane's own table.

    ``node_lane[v]``: the lane of node v; ``node_parent[v]``: its parent (-1: a root), in the
    same lane.  ``sample_lane``/``sample_node``/``sample_weight``: the samples (node -1: an
    empty stack).  Returns, for each key of ``lanes`` in that order, (stack_parent,
    stack_frame, sample_stack, sample_weight or None) in the lane's own numbering (its nodes
    in their global order).  Numpy only: a few calls per lane."""
    n = node_parent.size
    by_lane = np.argsort(node_lane, kind="stable")
    sorted_lane = node_lane[by_lane]
    s_order = np.argsort(sample_lane, kind="stable")
    s_sorted = sample_lane[s_order]
    local = np.empty(n, np.int64)
    out = []
    for key in lanes:
        a, b = np.searchsorted(sorted_lane, [key, key + 1])
        nodes = by_lane[a:b]
        local[nodes] = np.arange(nodes.size)
        par = node_parent[nodes]
        sp = np.where(par >= 0, local[np.maximum(par, 0)], -1)
        sa, sb = np.searchsorted(s_sorted, [key, key + 1])
        mine = s_order[sa:sb]
        sn = sample_node[mine]
        ss = np.full(sn.size, -1, np.int64)  # (a lane of empty stacks only may have no nodes at all)
        has = sn >= 0
        ss[has] = local[sn[has]]
        out.append((sp, node_frame[nodes], ss, None if sample_weight is None else sample_weight[mine]))
    return out


def _lane_frame(fr: str, austin: bool):
    """(pid or None, process name, tid or None, thread name) of a lane frame (py-spy's or,
    with ``austin``, Austin's); None when ``fr`` is none.  An id too long for int64 is 0
    (`filenumbers.read_id`)."""
    if austin:
        m = _AUSTIN_LANE.match(fr)
        if m:
            if m.group(1) is not None:
                return read_id(m.group(1), 0), "", None, ""
            t, iid = m.group(3), read_id(m.group(2) or "0", 0)
            return None, "", read_id(t, 0, hex_ok=True), f"thread {t[:40]}" + (f" (interpreter {iid})" if iid else "")
    m = _LANE_FRAME.match(fr)
    if m is None:
        return None
    if m.group(1) is not None:
        return read_id(m.group(1), 0), fr[m.end():].strip().strip('"') or fr, None, ""
    return None, "", read_id(m.group(2), 0, hex_ok=True), fr[m.end():].lstrip(": ").strip()


def _lanes(names: list, node_parent, node_frame, line_node, line_weight, default_name: str, rep: Repairs,
           austin: bool = False, max_lanes_read: int = MAX_LANES_READ) -> list:
    """The stack profiles of the file: one per thread told by py-spy's (or, with ``austin``,
    Austin's) leading process and thread frames, else one."""
    from ..kernels.textscan import peel_lanes

    # the scan's trie (or the plain-dictionary one) interns (parent, frame): canonical already;
    # one search over all the names first: most files have no lane frame at all
    one = [StackProfile(thread_name=default_name, stack_parent=node_parent, stack_frame=node_frame,
                        sample_stack=line_node, sample_weight=line_weight, distinct_paths=True)]
    if austin:
        is_lane = np.fromiter((s[:1] in ("P", "T") and bool(_AUSTIN_LANE.match(s)) for s in names), np.bool_,
                              len(names))
    else:
        joined = "\n" + "\n".join(names)
        if "\nprocess " not in joined and "\nthread (" not in joined:
            return one
        del joined
        is_lane = np.fromiter((s.startswith(("process ", "thread (")) and bool(_LANE_FRAME.match(s)) for s in names),
                              np.bool_, len(names))
    if not is_lane.any():
        return one
    lane, parent = peel_lanes(node_parent, node_frame, is_lane)
    keys = np.unique(lane[lane != -2])
    if not keys.size:  # every frame is a thread frame: no stack to show
        return []
    if keys.size > max_lanes_read:
        rep.add("collapsed_lanes", int(keys.size), "the whole file",
                f"more than {max_lanes_read} threads (max_lanes_read=): one lane, the thread frames kept as frames")
        return one
    # each lane's thread: its chain of lane frames, outermost first; lanes of one (pid, tid)
    # are one (py-spy names a thread once Python knows its name: "thread (7)", then
    # "thread (7): MainThread")
    groups, info, lane_of = {}, {}, []
    for key in keys.tolist():
        name, tid, proc, pid, named = default_name, 0, "", 0, False
        if key >= 0:
            chain = []
            v = int(key)
            while v >= 0:
                chain.append(names[int(node_frame[v])])
                v = int(node_parent[v])
            for fr in reversed(chain):
                f_pid, f_proc, f_tid, f_name = _lane_frame(fr, austin)
                if f_pid is not None:
                    pid, proc = f_pid, f_proc
                else:
                    tid = f_tid
                    name, named = f_name or fr, bool(f_name) and not austin
        g = groups.setdefault((pid, tid, proc) if key >= 0 else None, key)
        if g == key or (named and not info[g][4]):
            info[g] = (name, tid, proc, pid, named)
        lane_of.append(g)
    lane_of = np.asarray(lane_of, np.int64)
    lane = np.where(lane == -2, -2, lane_of[np.clip(np.searchsorted(keys, lane), 0, keys.size - 1)])
    keep = line_node >= 0
    s_node, s_w = line_node[keep], line_weight[keep]
    s_lane = lane[s_node]
    keep = s_lane != -2  # a stack of lane frames only: nothing to show
    s_lane, s_node, s_w = s_lane[keep], s_node[keep], s_w[keep]
    # lanes in order of first use by a line
    used, first = np.unique(s_lane, return_index=True)
    order = used[np.argsort(first, kind="stable")].tolist()
    out = []
    for key, (sp, sf, ss, sw) in zip(order, lane_tables(order, lane, parent, node_frame, s_lane, s_node, s_w)):
        name, tid, proc, pid, _ = info[key]
        out.append(StackProfile(thread_name=name, stack_parent=sp, stack_frame=sf, sample_stack=ss, sample_weight=sw,
                                process_name=proc, pid=pid, tid=tid))
    return out


def load_collapsed(data, *, source: str = "<bytes>", limits=None, kind_rules=None, warn: bool = True, **_common):
    """Load collapsed stacks (``data``: the file's bytes) as one merged trace (module
    docstring); x is the counts summed, ``meta["x_unit"] = "samples"``."""
    with gc_paused():  # a few objects per distinct frame, none per line (`stacks.gc_paused`)
        return _load_collapsed(data, source, limits, kind_rules, warn)


def _load_collapsed(data, source: str, limits, kind_rules, warn: bool):
    from ..kernels.gamma import process_hash_seed
    from ..kernels.textscan import FLOODED, collapsed_scan

    lim = limits if limits is not None else DEFAULT_LIMITS
    rep = Repairs()
    n_input = len(data) if not isinstance(data, np.ndarray) else data.nbytes
    buf, encoding = text_buffer(data, source, rep)
    lo, hi, skipped_lines, header = _comments(buf) if bytes(buf[:9]) == b"# austin:" else (0, buf.size, 0, {})
    austin = "austin" in header or bool(_AUSTIN_FIRST.match(bytes(buf[lo: lo + 200])))
    mode = header.get("mode", "wall") if austin else ""
    res = collapsed_scan(buf, lo, hi, process_hash_seed(), int(lim.max_stack_depth))
    status, res = res[0], res[1:]
    if status == FLOODED:
        res = _python_scan(buf[lo:hi], int(lim.max_stack_depth))
        res[0][:] += lo  # frame offsets into buf
    f_off, f_len, f_line, node_parent, node_frame, line_node, line_weight, reparse, counts = res
    f_line = f_line + skipped_lines
    for row in reparse:  # counts of more than 15 digits: converted exactly
        line_weight[row[0]] = float(buf[row[1]: row[2]].tobytes())
    n_lines, n_invalid = int(counts[0]), int(counts[2])
    first_invalid = int(counts[3]) + skipped_lines
    n_freed = _freed_lines(buf, lo, hi) if mode == "memory" and n_invalid else 0
    rep.add("collapsed_freed", n_freed, "the memory samples",
            "a memory sample with a negative count (memory freed): left out (x: bytes allocated)")
    rep.add("collapsed_line", n_invalid - n_freed, f"line {first_invalid}",
            "a line that is not 'frame;frame;... count': skipped")
    rep.add("stack_deep", int(counts[4]), f"line {int(counts[5]) + skipped_lines}",
            f"a stack deeper than {lim.max_stack_depth} frames: cut (max_stack_depth= to allow more)")
    if not line_node.size:
        what = f"none of its {n_lines} lines is" if n_lines else \
            ("it holds only Austin's '#' header, not" if header else "it is empty, not")
        first = f" (line {first_invalid}: {_line_text(buf, first_invalid)!r})" if n_invalid else ""
        raise TraceFormatError(f"{source}: {what} a collapsed stack 'frame;frame;... count'{first}")
    names = decode_spans(buf, f_off, f_len, lambda k: f"line {int(f_line[k])}", rep)
    profiles = _lanes(names, node_parent, node_frame, line_node, line_weight, source_name(source), rep, austin,
                      int(lim.max_lanes_read))
    frames = frame_table(names, lim)
    meta = {"collapsed_lines": int(line_node.size), "encoding": encoding,
            "skipped": {"collapsed_line": n_invalid} if n_invalid else {}}
    if header:
        meta["collapsed_header"] = header
    unit = {"wall": "µs", "cpu": "µs", "memory": "bytes"}.get(mode, "samples")
    trace = merged_trace(frames, profiles, unit=unit, source=source, fmt="collapsed", limits=lim,
                         input_bytes=n_input, kind_rules=kind_rules, meta=meta, warn=warn)
    return rep.apply(trace, source, warn)


def _comments(buf) -> tuple:
    """(lo, hi, lines before lo, header) of an Austin file: ``buf[lo:hi]`` is the file without
    its leading and trailing comment lines (lines opening with ``#``, and blank lines among them), each block
    looked for in at most `MAX_COMMENT_BYTES`; header: the ``# key: value`` comments."""
    hi = int(buf.size)
    header: dict = {}

    def note(line: bytes):
        key, sep, value = line[1:].decode("utf-8", "replace").partition(":")
        key = key.strip().lower()
        if sep and key and " " not in key:
            header.setdefault(key, value.strip())

    lo = n_before = 0
    if hi and buf[0] in (35, 10, 13):  # '#', or blank lines before one
        head = bytes(buf[:MAX_COMMENT_BYTES])
        lines = head.split(b"\n")
        for k, line in enumerate(lines[:-1] if len(head) < hi else lines):
            line = line.strip()
            if line and not line.startswith(b"#"):
                break
            if line:
                note(line)
            lo, n_before = min(lo + len(lines[k]) + 1, hi), n_before + 1
    if hi > lo:
        tail_from = max(lo, hi - MAX_COMMENT_BYTES)
        tail = bytes(buf[tail_from:hi])
        lines = tail.split(b"\n")
        k = cut = len(lines)
        while k > (0 if tail_from == lo else 1):
            line = lines[k - 1].strip()
            if line and not line.startswith(b"#"):
                break
            if line:
                note(line)
                cut = k - 1  # the trailer starts at the first comment line
            k -= 1
        if cut < len(lines):
            hi = tail_from + (len(b"\n".join(lines[:cut])) + 1 if cut else 0)
    return lo, max(hi, lo), n_before, header


def _freed_lines(buf, lo: int, hi: int) -> int:
    """The lines of ``buf[lo:hi]`` whose count is negative (Austin's memory mode: freed)."""
    return len(re.findall(rb"[ \t]-\d+(?:\.\d*)?\r?$", bytes(buf[lo:hi]), re.M))


def _line_text(buf, lineno: int, limit: int = 80) -> str:
    """The start of line ``lineno`` (1-based) of ``buf``, for a message."""
    if lineno <= 0:
        return ""
    ends = np.flatnonzero(buf[: min(buf.size, 1 << 26)] == 10)
    start = int(ends[lineno - 2]) + 1 if lineno >= 2 and lineno - 2 < ends.size else 0
    return bytes(buf[start: start + limit]).split(b"\n", 1)[0].decode("utf-8", "replace")
