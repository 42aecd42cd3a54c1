"""pyinstrument's JSON call tree (``pyinstrument -r json``): a real profile of docutils against a
naive Left Heavy reading of the same tree (every frame a stack weighing its time less its
children's), the names and files pyinstrument gives, and bad input in one line naming the
file and the JSON path."""
from __future__ import annotations

import pathlib

import orjson
import pytest

import tracevis3d
from collapsed_twins import left_heavy
from refusals import refusal
from speedscope_twins import calls_of
from tracevis3d.io import formats
from tracevis3d.io.pyinstrument import load_pyinstrument

DATA = pathlib.Path(__file__).resolve().parents[1] / "data" / "formats" / "pyinstrument" / "docutils.pyinstrument.json"


def naive_stacks(root) -> tuple:
    """[(path of frame keys, self µs)] of a pyinstrument tree, and each key's first appearance."""
    out, order = [], {}

    def key(f):
        name = f"{f['class_name']}.{f['function']}" if f.get("class_name") and not f["function"].startswith("[") \
            else f["function"]
        return (name, f.get("file_path") or "", f.get("line_no", -1))

    def walk(f, prefix):
        k = key(f)
        order.setdefault(k, len(order))
        path = prefix + (k,)
        kids = f.get("children") or []
        out.append((path, max(f["time"] * 1e6 - sum(c["time"] * 1e6 for c in kids), 0.0)))
        for c in kids:
            walk(c, path)

    walk(root, ())
    return out, order


def test_a_real_profile_is_read_as_its_left_heavy_tree():
    data = DATA.read_bytes()
    assert formats.detect(data).key == "pyinstrument"
    trace = tracevis3d.load(DATA, warn=False)
    assert trace.meta["merged"] and trace.meta["x_unit"] == "µs" and trace.meta["format"] == "pyinstrument"
    doc = orjson.loads(data)
    stacks, order = naive_stacks(doc["root_frame"])
    want = sorted(left_heavy(stacks, order))
    got = sorted(calls_of(trace, key=lambda f: (trace.function_names[f], trace.function_files[f],
                                                 int(trace.function_lines[f]))))
    assert len(got) == len(want) > 200
    for (pa, sa, ea), (pb, sb, eb) in zip(got, want):
        assert pa == pb and sa == pytest.approx(sb, abs=1e-6) and ea == pytest.approx(eb, abs=1e-6)
    assert trace.end.max() == pytest.approx(doc["root_frame"]["time"] * 1e6, rel=1e-4)  # rounded child times
    assert trace.thread_names == [doc["target_description"]]
    k = trace.function_names.index("Publisher.publish")
    assert trace.function_files[k].endswith("docutils/core.py") and trace.function_paths[k][:2] == ("docutils", "core")


def _frame(name, t, kids=(), **kw):
    return {"function": name, "file_path": "/x/app.py", "line_no": 1, "time": t, "children": list(kids), **kw}


def test_self_time_is_time_less_children_never_negative():
    root = _frame("main", 1.0, [_frame("a", 0.7), _frame("b", 0.5, class_name="K")])  # children over the parent
    t = load_pyinstrument(orjson.dumps({"duration": 1.0, "root_frame": root}), source="x.json", warn=False)
    assert t.end.max() == pytest.approx(1.2e6)
    assert "K.b" in t.function_names


BAD = [
    (b'{"duration": 1, "root_frame": null}', "root_frame: null"),
    (b'{"duration": 1, "root_frame": []}', "root_frame: expected an object"),
    (b'{"duration": 1, "root_frame": {"function": "m", "time": -1, "children": []}}', "root_frame.time: expected"),
    (b'{"duration": 1, "root_frame": {"function": "m", "time": 1, "children": [{"time": "x"}]}}',
     "root_frame.children[0].time"),
    (b'{"duration": 1, "root_frame": {"function": "m", "time": 1, "children": 5}}', "root_frame.children: expected"),
    (b'{"duration": 1, "root_frame": {"function": "m", "time": 1, "children": [3]}}', "root_frame.children[0]"),
    (b'{"duration": 1, "root_frame": {"function": "m", "time": 1, "chi', "not valid JSON"),
    (b'{"duration": 1}', "no 'root_frame'"),
    (b'{"duration": 1, "root_frame": {"function": "m", "time": 0, "children": []}}', "weigh nothing"),
    (b'{"root_frame": ' + b'{"time": 1, "children": [' * 1100 + b']}' * 1100 + b'}', "not valid JSON"),
]


@pytest.mark.parametrize("data,what", BAD)
def test_bad_profiles_are_refused_in_one_line_naming_the_place(data, what):
    msg = refusal(load_pyinstrument, data, "bad.json")
    assert what in msg, msg


def test_the_sniffer_takes_pyinstrument_and_leaves_other_json():
    assert formats.detect(b'{"start_time": 1, "duration": 2, "root_frame": {}}').key == "pyinstrument"
    assert formats.detect(b'{"root": {}, "duration": 2}').key == "chrome"
