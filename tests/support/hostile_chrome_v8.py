"""Hostile V8 CPU profiles (`tracevis3d.io.chrome_profile`): .cpuprofile files of both forms and
Chrome traces whose Profile/ProfileChunk events are built to break the reader.

`CASES` lists (name, bytes factory, expected): ``expected`` is a regular expression the one-line
`TraceFormatError` must match, or None when the file must load (repaired: what did not fit is
left out and counted).  tests/test_chrome_versions.py loads each, with a hang guard, and checks
the error names the file or the trace stays within the time range (no call ends past
``max_abs_time``, 1e21 µs).
"""
from __future__ import annotations

import json

ROOT = {"id": 1, "callFrame": {"functionName": "(root)", "url": "", "lineNumber": -1, "columnNumber": -1}}


def _frame(name, line=0, url="file:///app.js"):
    return {"functionName": name, "url": url, "lineNumber": line, "columnNumber": 0, "scriptId": "1"}


def _node(nid, name, parent=None, children=None):
    nd = {"id": nid, "callFrame": _frame(name, nid)}
    if parent is not None:
        nd["parent"] = parent
    if children is not None:
        nd["children"] = children
    return nd


def _profile(nodes, samples, deltas, start=0, **extra) -> bytes:
    doc = {"nodes": nodes, "startTime": start, "endTime": start + 1, "samples": samples, "timeDeltas": deltas}
    doc.update(extra)
    return json.dumps(doc, separators=(",", ":")).encode()


def _three(samples, deltas, start=0):
    """(root) › main › work › inner, by parent links."""
    nodes = [ROOT, _node(2, "main", 1), _node(3, "work", 2), _node(4, "inner", 3)]
    return _profile(nodes, samples, deltas, start)


def cyclic_parents():
    """main's parent is inner, inner's is work, work's is main: the cycle is cut where it closes."""
    nodes = [ROOT, _node(2, "main", 4), _node(3, "work", 2), _node(4, "inner", 3)]
    return _profile(nodes, [2, 3, 4, 3, 2] * 20, [10] * 100)


def cyclic_children():
    """The children form with a cycle 2 → 3 → 2 and a node that is its own child."""
    nodes = [_node(1, "(root)", children=[2]), _node(2, "main", children=[3]), _node(3, "work", children=[2, 3])]
    return _profile(nodes, [2, 3, 3, 2] * 25, [10] * 100)


def ids_out_of_range():
    """Node ids past int64, negative, floats, strings, bools; parents and children likewise."""
    nodes = [ROOT, {"id": 2 ** 70, "callFrame": _frame("huge")}, {"id": -5, "callFrame": _frame("neg"), "parent": 1},
             {"id": 1.5, "callFrame": _frame("float")}, {"id": "7", "callFrame": _frame("text")},
             {"id": True, "callFrame": _frame("bool")}, _node(8, "ok", 1), _node(9, "kid", 2 ** 80),
             _node(10, "kids", 1, children=[2 ** 90, -1, "x", 8])]
    return _profile(nodes, [8, -5, 9, 2 ** 70, 10, 8] * 10, [5] * 60)


def samples_of_missing_nodes():
    """Half of the samples name nodes the profile does not hold: empty stacks, counted."""
    return _three([4, 99, 3, 12345, 2, -1] * 20, [10] * 120)


def only_missing_nodes():
    """Every sample names a node the profile does not hold: no JavaScript."""
    return _three([99, 100, 101] * 10, [10] * 30)


def no_nodes():
    """Samples but no nodes at all (chrome-85-parcel's first profile, as a file)."""
    return _profile([], [2, 3] * 10, [10] * 20)


def deltas_backwards():
    """Every delta negative: time runs backwards; sorted into time order."""
    return _three([4, 3, 2, 4] * 50, [-100] * 200, start=1e9)


def huge_deltas():
    """±1e300 deltas: the running time leaves the range (and overflows): those samples are left out."""
    return _three([4, 3, 2, 4, 3, 2, 4, 3], [10, 1e300, -1e300, 10, 1e300, 1e300, -1e300, 10])


def deltas_near_the_range_end():
    """Samples just inside ±1e21 µs with a huge median step: the last call is clipped at the end of the range."""
    return _three([4, 3, 2, 4], [9.0e20, 3e19, 3e19, 3e19])


def start_past_the_range():
    """startTime 1e300: every sample past the time range."""
    return _three([4, 3, 2], [10, 10, 10], start=1e300)


def nan_and_text_deltas():
    """Deltas that are NaN (Python's json reads it), strings, null: 0 each, counted."""
    return (b'{"nodes":' + json.dumps([ROOT, _node(2, "main", 1)]).encode()
            + b',"startTime":0,"endTime":1,"samples":[2,2,2,2],"timeDeltas":[NaN,"5",null,Infinity]}')


def unequal_lists():
    """More samples than deltas: the shorter length is kept."""
    return _three([4, 3, 2, 4, 3, 2], [10, 10])


def duplicate_ids():
    """One id twice with different frames: the first stays."""
    nodes = [ROOT, _node(2, "main", 1), {"id": 2, "callFrame": _frame("impostor"), "parent": 1}, _node(3, "work", 2)]
    return _profile(nodes, [3, 2, 3] * 10, [10] * 30)


def chain_of_a_million_nodes():
    """10^6 nodes in one parent chain (deeper than max_stack_depth: cut there) of 97 functions,
    sampled at its leaf and its root in turn: each swing opens and closes ~10^5 calls."""
    n = 1_000_000
    parts = [b'{"nodes":[{"id":1,"callFrame":{"functionName":"(root)"}}']
    parts += [b',{"id":%d,"parent":%d,"callFrame":{"functionName":"f%d","url":"a.js","lineNumber":%d}}'
              % (k, k - 1, k % 97, k % 97) for k in range(2, n + 1)]
    samples = [n, 2] * 5
    parts.append(b'],"startTime":0,"endTime":1,"samples":' + json.dumps(samples).encode()
                 + b',"timeDeltas":' + json.dumps([10] * len(samples)).encode() + b"}")
    return b"".join(parts)


def star_of_a_million_nodes():
    """10^6 nodes of 1000 functions, all children of the root (the children form), each sampled once."""
    n = 1_000_000
    parts = [b'{"nodes":[{"id":1,"callFrame":{"functionName":"(root)"},"children":' +
             json.dumps(list(range(2, n + 2))).encode() + b"}"]
    parts += [b',{"id":%d,"callFrame":{"functionName":"g%d","url":"b.js","lineNumber":%d}}' % (k, k % 1000, k % 1000)
              for k in range(2, n + 2)]
    parts.append(b'],"startTime":0,"endTime":1,"samples":' + json.dumps(list(range(2, n + 2))).encode()
                 + b',"timeDeltas":' + json.dumps([3] * n).encode() + b"}")
    return b"".join(parts)


def old_form_deep_tree():
    """The old form's node tree nested 5000 levels deep: no JSON parser reads that far."""
    depth = 5000
    s = b'{"functionName":"leaf","url":"","lineNumber":1,"callUID":1,"id":%d,"hitCount":1,"children":[]}' % depth
    for k in range(depth - 1, 0, -1):
        s = b'{"functionName":"f","url":"","lineNumber":1,"callUID":1,"id":%d,"hitCount":0,"children":[' % k + s + b"]}"
    return b'{"head":' + s + b',"startTime":0,"endTime":1,"samples":[%d],"timestamps":[5]}' % depth


def old_form_timestamps_backwards():
    """The old form (head tree, seconds, absolute µs timestamps) with timestamps running backwards
    and one that is no number."""
    head = {"functionName": "(root)", "url": "", "lineNumber": 0, "callUID": 1, "id": 1, "hitCount": 0,
            "children": [{"functionName": "main", "url": "x.js", "lineNumber": 3, "callUID": 2, "id": 2,
                          "hitCount": 3, "children": [{"functionName": "work", "url": "x.js", "lineNumber": 9,
                                                       "callUID": 3, "id": 3, "hitCount": 2, "children": []}]}]}
    return json.dumps({"head": head, "startTime": 10, "endTime": 11, "samples": [3, 3, 2, 3, 2, 2],
                       "timestamps": [10_000_900, 10_000_800, 10_000_700, "x", 10_000_500, 10_000_400]}).encode()


def old_form_bad_children():
    """The old form whose children are not node objects, whose ids repeat, and a head without id."""
    head = {"functionName": "(root)", "id": 1, "hitCount": 0, "callUID": 1,
            "children": [5, "x", None, {"functionName": "a", "id": 2, "hitCount": 1, "callUID": 2, "children": {}},
                         {"functionName": "b", "id": 2, "hitCount": 1, "callUID": 3, "children": []},
                         {"functionName": "c", "hitCount": 1, "callUID": 4, "children": []}]}
    return json.dumps({"head": head, "startTime": 0, "endTime": 1, "samples": [2, 2, 1],
                       "timestamps": [1, 2, 3]}).encode()


def not_a_profile():
    return b'{"nodes": {"id": 1}, "samples": [1], "timeDeltas": [1]}'


def cut_short():
    return _three([4, 3, 2], [1, 1, 1])[:-20]


def no_samples():
    return _three([], [])


def trace_chunks_cyclic_and_missing():
    """A Chrome trace: a profile whose chunks form a parent cycle, name missing parents and
    missing nodes, with a huge delta; the trace's own events load beside it."""
    nodes = [ROOT, _node(2, "main", 3), _node(3, "work", 2), _node(4, "orphan", 777)]
    ev = [{"ph": "X", "name": "host", "pid": 1, "tid": 1, "ts": 0, "dur": 10},
          {"ph": "P", "name": "Profile", "id": "0x1", "pid": 1, "tid": 1, "ts": 0, "args": {"data": {"startTime": 0}}},
          {"ph": "P", "name": "ProfileChunk", "id": "0x1", "pid": 1, "tid": 2, "ts": 0,
           "args": {"data": {"cpuProfile": {"nodes": nodes, "samples": [2, 3, 4, 55, 3, 2, 4]},
                             "timeDeltas": [5, 5, 5, 1e300, -1e300, 5, 5]}}},
          {"ph": "P", "name": "ProfileChunk", "id": "0x1", "pid": 1, "tid": 2, "ts": 0, "args": {}}]
    return json.dumps({"traceEvents": ev}).encode()


def trace_chunks_without_nodes():
    """A Chrome trace whose only profile's chunks carry samples but no node (no Profile event):
    its events load, with no JavaScript lane."""
    ev = [{"ph": "X", "name": "host", "pid": 1, "tid": 1, "ts": 0, "dur": 10}]
    ev += [{"ph": "P", "name": "ProfileChunk", "id": "0x3", "pid": 1, "tid": 2, "ts": 5,
            "args": {"data": {"cpuProfile": {"samples": [8, 2] * 50}, "timeDeltas": [100] * 100}}}] * 3
    return json.dumps(ev).encode()


CASES = [
    ("cyclic_parents", cyclic_parents, None),
    ("cyclic_children", cyclic_children, None),
    ("ids_out_of_range", ids_out_of_range, None),
    ("samples_of_missing_nodes", samples_of_missing_nodes, None),
    ("only_missing_nodes", only_missing_nodes, r"hold no JavaScript.*js_sample_node"),
    ("no_nodes", no_nodes, r"hold no JavaScript"),
    ("deltas_backwards", deltas_backwards, None),
    ("huge_deltas", huge_deltas, None),
    ("deltas_near_the_range_end", deltas_near_the_range_end, None),
    ("start_past_the_range", start_past_the_range, r"hold no JavaScript.*js_sample_time"),
    ("nan_and_text_deltas", nan_and_text_deltas, None),
    ("unequal_lists", unequal_lists, None),
    ("duplicate_ids", duplicate_ids, None),
    ("chain_of_a_million_nodes", chain_of_a_million_nodes, None),
    ("star_of_a_million_nodes", star_of_a_million_nodes, None),
    ("old_form_deep_tree", old_form_deep_tree, r"cannot be read as JSON.*nested deeper|cannot be read as JSON"),
    ("old_form_timestamps_backwards", old_form_timestamps_backwards, None),
    ("old_form_bad_children", old_form_bad_children, None),
    ("not_a_profile", not_a_profile, r"not a V8 \.cpuprofile: it needs a 'nodes' list"),
    ("cut_short", cut_short, r"cut short or not JSON"),
    ("no_samples", no_samples, r"without samples"),
    ("trace_chunks_cyclic_and_missing", trace_chunks_cyclic_and_missing, None),
    ("trace_chunks_without_nodes", trace_chunks_without_nodes, None),
]
