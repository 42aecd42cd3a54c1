"""Hostile JSON profiles for the readers of speedscope, Firefox (processed and Gecko), stackprof,
Safari, GHC and V8 heap profiles: damaged or adversarial files, each with what must come of it.

`CASES` is a list of ``(name, factory, expected)``: ``factory()`` returns the file's bytes;
``expected`` is a regular expression that the one-line `TraceFormatError` raised by
``tracevis3d.load`` must match (searched), or, for a file that is repaired, one of the
`TraceWarning` messages of its load; None: the file loads without error.  Every case must
finish within a few seconds in memory linear in its size: tests/test_other_profiles.py runs
them all, the fuzzer (tests/support/fuzz_hostile.py) may draw from them.
"""
from __future__ import annotations

import json

SCHEMA = "https://www.speedscope.app/file-format-schema.json"


def _j(doc) -> bytes:
    return json.dumps(doc, separators=(",", ":")).encode()


# ----------------------------------------------------------------------------- speedscope
def _ss(profiles, frames=None) -> dict:
    return {"$schema": SCHEMA, "shared": {"frames": frames if frames is not None else
                                          [{"name": n} for n in "abcd"]}, "profiles": profiles}


def _sampled(samples, weights, unit="seconds"):
    return {"type": "sampled", "name": "p", "unit": unit, "startValue": 0, "endValue": 10, "samples": samples,
            "weights": weights}


def _evented(events, unit="milliseconds", end=100):
    return {"type": "evented", "name": "p", "unit": unit, "startValue": 0, "endValue": end,
            "events": [{"type": t, "frame": f, "at": a} for t, f, a in events]}


def ss_valid() -> bytes:
    return _j(_ss([_sampled([[0, 1], [0, 2], [0]], [1, 2, 3]),
                   _evented([("O", 0, 0), ("O", 1, 1), ("C", 1, 2), ("C", 0, 3)])]))


def ss_truncated() -> bytes:
    b = ss_valid()
    return b[: len(b) // 2]


def ss_frame_out_of_range() -> bytes:
    return _j(_ss([_sampled([[0, 1], [0, 99]], [1, 1])]))


def ss_event_frame_out_of_range() -> bytes:
    return _j(_ss([_evented([("O", 0, 0), ("O", 99, 1), ("C", 99, 2), ("C", 0, 3)])]))


def ss_negative_weight() -> bytes:
    return _j(_ss([_sampled([[0], [1]], [1, -1])]))


def ss_huge_weight() -> bytes:
    return _j(_ss([_sampled([[0], [1]], [1, 1e300])]))


def ss_weights_past_limit_in_sum() -> bytes:
    return _j(_ss([_sampled([[0]] * 2000, [1e14] * 2000)]))  # 1e14 s each: 1e20 µs, 2e23 µs in all


def ss_huge_at() -> bytes:
    return _j(_ss([_evented([("O", 0, 0), ("C", 0, 1e300)])]))


def ss_times_backwards() -> bytes:
    return _j(_ss([_evented([("O", 0, 5), ("O", 1, 6), ("C", 1, 2), ("C", 0, 7)])]))


def ss_samples_not_a_list() -> bytes:
    return _j(_ss([_sampled({"0": [0]}, [1])]))


def ss_sample_not_a_list() -> bytes:
    return _j(_ss([_sampled([[0], 3, [1]], [1, 1, 1])]))


def ss_frame_index_a_string() -> bytes:
    return _j(_ss([_sampled([[0], [0, "x"]], [1, 1])]))


def ss_bad_event_type() -> bytes:
    return _j(_ss([_evented([("O", 0, 0), ("X", 0, 1)])]))


def ss_event_not_object() -> bytes:
    d = _ss([_evented([("O", 0, 0), ("C", 0, 1)])])
    d["profiles"][0]["events"][1] = [0, 1]
    return _j(d)


def ss_close_empty() -> bytes:
    return _j(_ss([_evented([("O", 0, 0), ("C", 0, 1), ("C", 0, 2)])]))


def ss_unclosed() -> bytes:
    return _j(_ss([_evented([("O", 0, 0), ("O", 1, 1)])]))


def ss_weights_length() -> bytes:
    return _j(_ss([_sampled([[0], [1]], [1])]))


def ss_bad_unit() -> bytes:
    return _j(_ss([_sampled([[0]], [1], unit="parsecs")]))


def ss_no_profiles() -> bytes:
    return _j(_ss([]))


def ss_million_frames() -> bytes:
    """10^6 frames (10^6 strings), two samples using three of them: loads, costing the three."""
    frames = [{"name": f"function_number_{k}", "file": f"f{k}.py", "line": k} for k in range(1_000_000)]
    return _j(_ss([_sampled([[0, 999_999], [5]], [1, 1])], frames))


def ss_deep_nesting() -> bytes:
    return b'{"shared":{"frames":[]},"profiles":' + b"[" * 5000 + b"]" * 5000 + b"}"


def ss_deep_stack() -> bytes:
    """One sample 200 000 frames deep: past max_stack_depth (100 000), cut with a warning."""
    return _j(_ss([_sampled([[k % 4 for k in range(200_000)], [0]], [1, 1])]))


# ----------------------------------------------------------------------------- Firefox processed
def _ff_thread(**over):
    th = {"name": "GeckoMain", "pid": "1", "tid": 1, "processType": "default",
          "stringArray": ["root", "f", "g", "file.js"],
          "funcTable": {"length": 3, "name": [0, 1, 2], "fileName": [None, 3, 3], "lineNumber": [None, 1, 2],
                        "isJS": [False, True, True]},
          "frameTable": {"length": 3, "func": [0, 1, 2]},
          "stackTable": {"length": 3, "frame": [0, 1, 2], "prefix": [None, 0, 1]},
          "samples": {"length": 4, "stack": [0, 1, 2, None], "time": [0.0, 1.0, 2.0, 3.0], "weight": None},
          "markers": {"length": 1, "name": [1], "startTime": [0.5], "endTime": [None], "phase": [0],
                      "data": [None], "category": [0]}}
    for k, v in over.items():
        if "." in k:
            a, b = k.split(".")
            th[a] = dict(th[a], **{b: v})
        else:
            th[k] = v
    return th


def _ff(*threads, meta=None):
    return _j({"meta": dict({"interval": 1, "startTime": 0, "preprocessedProfileVersion": 48, "version": 24},
                            **(meta or {})), "threads": list(threads)})


def ff_valid() -> bytes:
    return _ff(_ff_thread())


def ff_truncated() -> bytes:
    b = ff_valid()
    return b[: len(b) - 30]


def ff_cyclic_prefix() -> bytes:
    return _ff(_ff_thread(**{"stackTable.prefix": [2, 0, 1]}))


def ff_stack_frame_out_of_range() -> bytes:
    return _ff(_ff_thread(**{"stackTable.frame": [0, 1, 7]}))


def ff_func_out_of_range() -> bytes:
    return _ff(_ff_thread(**{"frameTable.func": [0, 1, 9]}))


def ff_string_out_of_range() -> bytes:
    return _ff(_ff_thread(**{"funcTable.name": [0, 1, 40]}))


def ff_sample_stack_out_of_range() -> bytes:
    return _ff(_ff_thread(**{"samples.stack": [0, 1, 5, None]}))


def ff_prefix_out_of_range() -> bytes:
    return _ff(_ff_thread(**{"stackTable.prefix": [None, 0, 12]}))


def ff_times_backwards() -> bytes:
    return _ff(_ff_thread(**{"samples.time": [0.0, 3.0, 1.0, 2.0]}))


def ff_huge_time() -> bytes:
    return _ff(_ff_thread(**{"samples.time": [0.0, 1.0, 1e300, 2.0]}))


def ff_threads_not_a_list() -> bytes:
    return _j({"meta": {"interval": 1, "preprocessedProfileVersion": 48}, "threads": {"0": _ff_thread()}})


def ff_time_strings() -> bytes:
    return _ff(_ff_thread(**{"samples.time": ["0", "1", "2", "3"]}))


def ff_stack_not_list() -> bytes:
    return _ff(_ff_thread(**{"samples.stack": 7}))


def ff_million_strings() -> bytes:
    """10^6 strings, 10^6 functions; the samples use three: loads."""
    n = 1_000_000
    th = _ff_thread(**{"stringArray": ["root", "f", "g", "file.js"] + [f"s{k}" for k in range(n)],
                       "funcTable.name": [0, 1, 2] + list(range(4, n + 4)),
                       "funcTable.fileName": [None, 3, 3] + [None] * n,
                       "funcTable.lineNumber": [None, 1, 2] + [None] * n,
                       "funcTable.isJS": [False, True, True] + [False] * n})
    return _ff(th)


def ff_prefix_offset_before_table() -> bytes:
    doc = json.loads(ff_valid())
    th = doc["threads"][0]
    st = th.pop("stackTable")
    doc["shared"] = {"stackTable": {"frame": st["frame"], "prefixOffset": [0, 1, 9]},
                     "frameTable": th.pop("frameTable"), "funcTable": th.pop("funcTable"),
                     "stringArray": th.pop("stringArray")}
    doc["meta"]["preprocessedProfileVersion"] = 66
    return _j(doc)


# ----------------------------------------------------------------------------- Gecko
def _gecko_thread(strings=None, frames=None, stacks=None, samples=None):
    return {"name": "GeckoMain", "pid": 1, "tid": 1, "processType": "default",
            "stringTable": strings if strings is not None else ["(root)", "f (a.js:1:1)", "g (a.js:5:1)"],
            "frameTable": {"schema": {"location": 0, "line": 1}, "data": frames if frames is not None else
                           [[0], [1], [2]]},
            "stackTable": {"schema": {"prefix": 0, "frame": 1}, "data": stacks if stacks is not None else
                           [[None, 0], [0, 1], [1, 2]]},
            "samples": {"schema": {"stack": 0, "time": 1}, "data": samples if samples is not None else
                        [[0, 0.0], [1, 1.0], [2, 2.0], [None, 3.0]]},
            "markers": {"schema": {"name": 0, "startTime": 1, "endTime": 2, "phase": 3, "category": 4, "data": 5},
                        "data": [[1, 0.5, None, 0, 0, None]]}}


def _gecko(*threads, processes=()):
    return {"meta": {"version": 27, "interval": 1, "startTime": 1000.0}, "libs": [], "threads": list(threads),
            "processes": list(processes)}


def gk_valid() -> bytes:
    return _j(_gecko(_gecko_thread()))


def gk_string_out_of_range() -> bytes:
    return _j(_gecko(_gecko_thread(frames=[[0], [1], [77]])))


def gk_row_too_short() -> bytes:
    return _j(_gecko(_gecko_thread(samples=[[0, 0.0], [1]])))


def gk_cyclic_prefix() -> bytes:
    return _j(_gecko(_gecko_thread(stacks=[[2, 0], [0, 1], [1, 2]])))


def gk_nested_processes() -> bytes:
    """Sub-profiles nested 100 deep (300 levels of JSON)."""
    inner = _gecko(_gecko_thread())
    for _ in range(100):
        inner = _gecko(processes=[inner])
    return _j(inner)


def gk_nested_process_text() -> bytes:
    """Sub-profiles nested 4 deep, each as JSON text inside the one above (the oldest files)."""
    inner = _gecko(_gecko_thread())
    for _ in range(4):
        inner = _gecko(processes=[json.dumps(inner)])
    return _j(inner)


def gk_bad_nested_text() -> bytes:
    return _j(_gecko(_gecko_thread(), processes=['{"meta": {"startTime": 1}, "threads": [']))


def gk_million_strings() -> bytes:
    n = 1_000_000
    return _j(_gecko(_gecko_thread(strings=["(root)", "f (a.js:1:1)", "g (a.js:5:1)"] + ["x"] * n,
                                   frames=[[0], [1], [2]] + [[3 + (k % 50)] for k in range(n)])))


# ----------------------------------------------------------------------------- stackprof
def _sp(**over):
    doc = {"version": 1.2, "mode": "wall", "interval": 1000, "samples": 3,
           "frames": {"11": {"name": "main", "file": "a.rb", "line": 1}, "12": {"name": "work", "file": "a.rb"},
                      "13": {"name": "(garbage collection)"}},
           "raw": [2, 11, 12, 2, 1, 13, 1], "raw_timestamp_deltas": [10, 20, 30]}
    doc.update(over)
    return _j(doc)


def sp_valid() -> bytes:
    return _sp()


def sp_raw_cut() -> bytes:
    return _sp(raw=[2, 11, 12, 2, 5, 11, 12])


def sp_negative_height() -> bytes:
    return _sp(raw=[-3, 11, 12, 2])


def sp_huge_height() -> bytes:
    return _sp(raw=[10 ** 9, 11, 12, 2])


def sp_unknown_frame() -> bytes:
    return _sp(raw=[2, 11, 99, 2])


def sp_no_raw() -> bytes:
    doc = json.loads(_sp())
    del doc["raw"]
    return _j(doc)


def sp_short_deltas() -> bytes:
    return _sp(raw_timestamp_deltas=[10])


def sp_negative_delta() -> bytes:
    return _sp(raw_timestamp_deltas=[10, -500, 30])


def sp_raw_strings() -> bytes:
    return _sp(raw=[2, "11", 12, 2])


def sp_many_gc() -> bytes:
    """10^5 lone GC samples in a row after one deep stack: each stands on that stack (speedscope
    would stack them on each other, 10^5 deep)."""
    raw = [50] + [11] * 49 + [12] + [1]
    for _ in range(100_000):
        raw += [1, 13, 1]
    return _sp(raw=raw, raw_timestamp_deltas=[1] * 100_001)


# ----------------------------------------------------------------------------- Safari
def _sf(samples, durations):
    return _j({"version": 1, "recording": {"displayName": "r", "sampleStackTraces": samples,
                                           "sampleDurations": durations}})


def _sf_sample(t, names):
    return {"timestamp": t, "stackFrames": [{"name": n, "url": "a.js", "line": 1, "column": 1} for n in names]}


def sf_valid() -> bytes:
    return _sf([_sf_sample(1.0, ["g", "f"]), _sf_sample(1.001, ["f"])], [0.001, 0.001])


def sf_durations_length() -> bytes:
    return _sf([_sf_sample(1.0, ["f"]), _sf_sample(1.001, ["f"])], [0.001])


def sf_negative_duration() -> bytes:
    return _sf([_sf_sample(1.0, ["f"])], [-0.5])


def sf_frames_not_list() -> bytes:
    return _sf([{"timestamp": 1.0, "stackFrames": "f"}], [0.001])


def sf_frame_not_object() -> bytes:
    return _sf([{"timestamp": 1.0, "stackFrames": [{"name": "f"}, 3]}], [0.001])


def sf_huge_timestamp() -> bytes:
    return _sf([_sf_sample(1e300, ["f"])], [0.001])


def sf_unhashable_name() -> bytes:
    return _sf([{"timestamp": 1.0, "stackFrames": [{"name": ["f"], "url": {"a": 1}, "line": 1}]}], [0.001])


def sf_empty() -> bytes:
    return _sf([], [])


# ----------------------------------------------------------------------------- GHC
def _ghc(tree, centres=None):
    return _j({"program": "p", "total_ticks": 10, "cost_centres": centres if centres is not None else
               [{"id": 1, "label": "MAIN", "module": "MAIN", "src_loc": "<built-in>"},
                {"id": 2, "label": "f", "module": "Main", "src_loc": "a.hs:1:1"}], "profile": tree})


def gh_valid() -> bytes:
    return _ghc({"id": 1, "ticks": 1, "alloc": 0, "entries": 0, "children": [
        {"id": 2, "ticks": 5, "alloc": 10, "entries": 1, "children": []}]})


def gh_unknown_centre() -> bytes:
    return _ghc({"id": 1, "ticks": 1, "children": [{"id": 7, "ticks": 5, "children": []}]})


def gh_negative_ticks() -> bytes:
    return _ghc({"id": 1, "ticks": 1, "children": [{"id": 2, "ticks": -5, "children": []}]})


def gh_children_not_list() -> bytes:
    return _ghc({"id": 1, "ticks": 1, "children": {"id": 2}})


def _ghc_chain(depth: int) -> bytes:
    s = b'{"id":2,"ticks":1,"children":[]}'
    for _ in range(depth - 1):
        s = b'{"id":2,"ticks":1,"children":[' + s + b"]}"
    return b'{"program":"p","cost_centres":[{"id":2,"label":"f","module":"M","src_loc":"x"}],"profile":' + s + b"}"


def gh_deep_tree() -> bytes:
    """A chain 500 nodes deep (orjson parses 1024 levels of nesting; each node takes two)."""
    return _ghc_chain(500)


def gh_too_deep() -> bytes:
    return _ghc_chain(600)


# ----------------------------------------------------------------------------- V8 heap profile
def _heap(head):
    return _j({"head": head})


def _cf(name):
    return {"functionName": name, "url": "a.js", "lineNumber": 0, "columnNumber": 0, "scriptId": "1"}


def hp_valid() -> bytes:
    return _heap({"callFrame": _cf("(root)"), "selfSize": 0, "children": [
        {"callFrame": _cf("f"), "selfSize": 100, "children": []}]})


def hp_negative_size() -> bytes:
    return _heap({"callFrame": _cf("(root)"), "selfSize": 0, "children": [
        {"callFrame": _cf("f"), "selfSize": -100, "children": []}]})


def hp_children_not_list() -> bytes:
    return _heap({"callFrame": _cf("(root)"), "selfSize": 0, "children": 5})


def hp_child_not_object() -> bytes:
    return _heap({"callFrame": _cf("(root)"), "selfSize": 0, "children": [None]})


def hp_huge_size() -> bytes:
    return _heap({"callFrame": _cf("(root)"), "selfSize": 0, "children": [
        {"callFrame": _cf("f"), "selfSize": 1e299, "children": []}]})


def hp_sizes_past_the_limit_in_sum() -> bytes:
    return _heap({"callFrame": _cf("(root)"), "selfSize": 0, "children": [
        {"callFrame": _cf(f"f{k}"), "selfSize": 5e20, "children": []} for k in range(10)]})


def hp_weightless() -> bytes:
    return _heap({"callFrame": _cf("(root)"), "selfSize": 0, "children": []})


#: (name, factory, expected): module docstring
CASES = [
    ("speedscope valid", ss_valid, None),
    ("speedscope truncated", ss_truncated, r"not valid JSON: .*line 1 column \d+ \(char \d+\)"),
    ("speedscope frame out of range", ss_frame_out_of_range, r"profiles\[0\]\.samples\[1\]\[1\]: frame 99 is out of range"),
    ("speedscope event frame out of range", ss_event_frame_out_of_range,
     r"profiles\[0\]\.events\[1\]\.frame: 99 is out of range"),
    ("speedscope negative weight", ss_negative_weight, r"profiles\[0\]\.weights\[1\]: -1 is not a weight"),
    ("speedscope huge weight", ss_huge_weight, r"profiles\[0\]\.weights\[1\]: 1e\+300 is not a weight"),
    ("speedscope weights past the limit in sum", ss_weights_past_limit_in_sum,
     r"profiles\[0\]\.weights: the samples add up to .* past the limit"),
    ("speedscope huge event value", ss_huge_at, r"profiles\[0\]\.events\[1\]\.at: 1e\+300 is past the limit"),
    ("speedscope values going backwards", ss_times_backwards,
     r"profiles\[0\]\.events\[2\]\.at: 2 comes before the previous event's 6"),
    ("speedscope samples not a list", ss_samples_not_a_list, r"profiles\[0\]\.samples: expected a list, got an object"),
    ("speedscope sample not a list", ss_sample_not_a_list, r"profiles\[0\]\.samples\[1\]: expected a list"),
    ("speedscope frame index a string", ss_frame_index_a_string,
     r"profiles\[0\]\.samples\[1\]\[1\]: expected a frame index, got a string"),
    ("speedscope bad event type", ss_bad_event_type, r"profiles\[0\]\.events\[1\]\.type: 'X' is not 'O' or 'C'"),
    ("speedscope event not an object", ss_event_not_object, r"profiles\[0\]\.events\[1\]: expected an object"),
    ("speedscope close with nothing open", ss_close_empty, r"profiles\[0\]\.events\[2\]: closes frame 0 \('a'\) when no"),
    ("speedscope unclosed frames", ss_unclosed, r"2 × unclosed_frames .*closed at endValue"),
    ("speedscope weights length", ss_weights_length, r"profiles\[0\]\.weights: 1 weights for 2 samples"),
    ("speedscope bad unit", ss_bad_unit, r"profiles\[0\]\.unit: 'parsecs' is not one of"),
    ("speedscope no profiles", ss_no_profiles, r"profiles: empty"),
    ("speedscope 10^6 frames", ss_million_frames, None),
    ("speedscope nested 5000 deep", ss_deep_nesting, r"not valid JSON: .*(depth|recursion)"),
    ("speedscope stack 200000 deep", ss_deep_stack, r"stack_deep"),
    ("firefox valid", ff_valid, None),
    ("firefox truncated", ff_truncated, r"not valid JSON: .*\(char \d+\)"),
    ("firefox cyclic prefixes", ff_cyclic_prefix, r"stack_cycle"),
    ("firefox stack frame out of range", ff_stack_frame_out_of_range,
     r"threads\[0\]\.stackTable\.frame\[2\]: 7 is out of range"),
    ("firefox func out of range", ff_func_out_of_range, r"threads\[0\]\.frameTable\.func\[2\]: 9 is out of range"),
    ("firefox string out of range", ff_string_out_of_range, r"threads\[0\]\.funcTable\.name\[2\]: 40 is out of range"),
    ("firefox sample stack out of range", ff_sample_stack_out_of_range,
     r"threads\[0\]\.samples\.stack\[2\]: 5 is out of range"),
    ("firefox prefix out of range", ff_prefix_out_of_range, r"threads\[0\]\.stackTable\.prefix\[2\]: 12 is out of range"),
    ("firefox sample times going backwards", ff_times_backwards, r"sample_order"),
    ("firefox huge sample time", ff_huge_time, r"threads\[0\]\.samples\.time\[2\]: time 1e\+300 ms is past the limit"),
    ("firefox threads not a list", ff_threads_not_a_list, r"threads: expected a list, got an object"),
    ("firefox times as strings", ff_time_strings, r"threads\[0\]\.samples\.time\[0\]: expected a number, got a string"),
    ("firefox sample stacks not a list", ff_stack_not_list, r"threads\[0\]\.samples\.stack: expected a list, got a number"),
    ("firefox 10^6 strings", ff_million_strings, None),
    ("firefox prefixOffset before the table", ff_prefix_offset_before_table,
     r"shared\.stackTable\.prefixOffset\[2\]: 9 reaches before the table"),
    ("gecko valid", gk_valid, None),
    ("gecko string out of range", gk_string_out_of_range,
     r"threads\[0\]\.frameTable\.data\[2\]\[0\]: string index 77 is out of the string table"),
    ("gecko sample row too short", gk_row_too_short, r"threads\[0\]\.samples\.data\[1\]: has no time"),
    ("gecko cyclic prefixes", gk_cyclic_prefix, r"stack_cycle"),
    ("gecko processes nested 100 deep", gk_nested_processes, r"nested more than 64 deep"),
    ("gecko processes nested as text", gk_nested_process_text, None),
    ("gecko process text that does not parse", gk_bad_nested_text, r"processes\[0\]: its JSON text does not parse"),
    ("gecko 10^6 strings and frames", gk_million_strings, None),
    ("stackprof valid", sp_valid, None),
    ("stackprof raw cut", sp_raw_cut, r"raw\[4\]: a stack of 5 frames runs past the end of raw"),
    ("stackprof negative height", sp_negative_height, r"raw\[0\]: -3 is not a stack height"),
    ("stackprof huge height", sp_huge_height, r"raw\[0\]: 1000000000 is not a stack height"),
    ("stackprof unknown frame", sp_unknown_frame, r"raw\[2\]: frame id 99 is not in frames"),
    ("stackprof without raw", sp_no_raw, r"raw: missing: .*raw: true"),
    ("stackprof too few deltas", sp_short_deltas, r"raw_timestamp_deltas: 1 deltas for the 3 samples"),
    ("stackprof negative delta", sp_negative_delta, r"raw_timestamp_deltas: sample 0 of raw lasts -490 µs"),
    ("stackprof raw as strings", sp_raw_strings, r"raw\[1\]: expected an integer, got a string"),
    ("stackprof 10^5 GC samples in a row", sp_many_gc, None),
    ("safari valid", sf_valid, None),
    ("safari durations length", sf_durations_length, r"recording\.sampleDurations: 1 durations for 2 samples"),
    ("safari negative duration", sf_negative_duration, r"recording\.sampleDurations\[0\]: -0\.5 s is not a duration"),
    ("safari stack frames not a list", sf_frames_not_list,
     r"recording\.sampleStackTraces\[0\]\.stackFrames: expected a list of frames, got a string"),
    ("safari frame not an object", sf_frame_not_object,
     r"recording\.sampleStackTraces\[0\]\.stackFrames\[1\]: expected a frame, got a number"),
    ("safari huge timestamp", sf_huge_timestamp, r"recording\.sampleStackTraces\[0\]\.timestamp: 1e\+300 s is past"),
    ("safari unhashable frame fields", sf_unhashable_name, None),
    ("safari no samples", sf_empty, r"recording\.sampleStackTraces: empty"),
    ("ghc valid", gh_valid, None),
    ("ghc unknown cost centre", gh_unknown_centre, r"profile\.children\[0\]\.id: cost centre 7 is not in cost_centres"),
    ("ghc negative ticks", gh_negative_ticks, r"profile\.children\[0\]\.ticks: expected a number ≥ 0, got -5"),
    ("ghc children not a list", gh_children_not_list, r"profile\.children: expected a list, got an object"),
    ("ghc tree 500 deep", gh_deep_tree, None),
    ("ghc tree 600 deep", gh_too_deep, r"not valid JSON: .*(depth|recursion)"),
    ("heapprofile valid", hp_valid, None),
    ("heapprofile negative size", hp_negative_size, r"head\.children\[0\]\.selfSize: expected a byte count ≥ 0, got -100"),
    ("heapprofile children not a list", hp_children_not_list, r"head\.children: expected a list, got a number"),
    ("heapprofile child not an object", hp_child_not_object, r"head\.children\[0\]: expected an object, got null"),
    ("heapprofile huge size", hp_huge_size, r"head\.children\[0\]\.selfSize: expected a byte count ≥ 0 within"),
    ("heapprofile sizes past the limit in sum", hp_sizes_past_the_limit_in_sum, r"weights sum to .* past"),
    ("heapprofile weightless", hp_weightless, r"weigh nothing"),
]
