"""The byte-level `.cpuprofile` reader (`kernels.cpuprofile_scan`, `io.cpuprofile._scanned`)
against the field-by-field reader it stands in for (orjson, then `chrome_profile._add_nodes`):
random profiles written in every form JSON allows (key orders, white space, escapes, non-ASCII
names, children lists or parent links, unknown keys holding nested values, ids out of order,
samples and deltas of unequal lengths, a missing or odd startTime) load to the same trace both
ways; the documents the scanner hands back (a node sent twice, floats where integers are read,
a lone surrogate escape, bytes not UTF-8, deep nesting, the old ``head`` form, not JSON) are
read by the old reader, with the same trace or the same error."""
from __future__ import annotations

import json
import random

import numpy as np
import pytest

from tracevis3d.io import cpuprofile as cpm
from tracevis3d.io.limits import DEFAULT_LIMITS
from tracevis3d.model import TraceFormatError


def _load(data: bytes, scanner: bool, monkeypatch):
    with monkeypatch.context() as m:
        if not scanner:
            m.setattr(cpm, "_scanned", lambda data, lim: None)
        try:
            return cpm.load_cpuprofile(data, "p.cpuprofile", DEFAULT_LIMITS, warn=False)
        except TraceFormatError as e:
            return str(e)


def _same(a, b):
    if isinstance(a, str) or isinstance(b, str):
        assert a == b
        return
    for k, v in vars(a).items():
        w = getattr(b, k)
        if isinstance(v, np.ndarray):
            assert v.dtype == w.dtype and np.array_equal(v, w, equal_nan=v.dtype.kind == "f"), k
        else:
            assert v == w, k


_NAMES = ["(root)", "(program)", "(idle)", "(garbage collector)", "main", "fib", "", "réduire", "名前", "a\"b",
          "x\\\\y", "tab\there", "λ", "(anonymous)"]


def _profile(rng: random.Random) -> dict:
    n = rng.randint(1, 60)
    ids = list(range(1, n + 1))
    if rng.random() < 0.3:
        rng.shuffle(ids)
    nodes = []
    use_parent = rng.random() < 0.3
    for k, nid in enumerate(ids):
        cf = {"functionName": _NAMES[0] if k == 0 else rng.choice(_NAMES[1:]),
              "scriptId": str(rng.randint(0, 9)), "url": rng.choice(["", "file:///a.js", "node:internal/x", "ü.js"]),
              "lineNumber": rng.choice([-1, 0, 5, 2 ** 31, None, "7", True]),
              "columnNumber": rng.choice([-1, 0, 3, 2 ** 40])}
        if rng.random() < 0.1:
            del cf["url"]
        if rng.random() < 0.05:
            cf["codeType"] = {"nested": [1, {"a": [True, None, 1.5e3]}]}
        nd = {"id": nid, "callFrame": cf, "hitCount": rng.randint(0, 3)}
        if rng.random() < 0.05:
            del nd["callFrame"]
        if k and use_parent:
            nd["parent"] = rng.choice(ids[:k]) if rng.random() < 0.9 else rng.choice([None, 10 ** 6])
        if rng.random() < 0.2:
            nd["positionTicks"] = [{"line": 3, "ticks": 2}]
        nodes.append(nd)
    if not use_parent:
        for k in range(1, n):
            owner = nodes[rng.randrange(k)]
            owner.setdefault("children", []).append(ids[k])
        if rng.random() < 0.2:
            nodes[0].setdefault("children", []).append(10 ** 7)  # a child the profile does not hold
    m = rng.randint(1, 200)
    samples = [rng.choice(ids + [10 ** 6]) for _ in range(m)]
    deltas = [rng.randint(-5, 300) for _ in range(m + rng.choice([0, 0, 0, 1, -1]))]
    doc = {"nodes": nodes, "samples": samples, "timeDeltas": deltas}
    r = rng.random()
    if r < 0.7:
        doc["startTime"] = rng.randint(0, 10 ** 12)
    elif r < 0.8:
        doc["startTime"] = None
    doc["endTime"] = 5
    if rng.random() < 0.2:
        doc["meta"] = {"x": [[], {}, "s", -0.5e-3]}
    return doc


def _write(doc: dict, rng: random.Random) -> bytes:
    items = list(doc.items())
    rng.shuffle(items)
    kw = rng.choice([{}, {"indent": 1}, {"separators": (", ", ": ")}, {"separators": (",", ":")}])
    text = json.dumps(dict(items), ensure_ascii=rng.random() < 0.5, **kw)
    return text.encode("utf-8")


@pytest.mark.timeout(300)
@pytest.mark.parametrize("seed", range(40))
def test_scanner_reads_as_the_field_by_field_reader(seed, monkeypatch):
    rng = random.Random(seed)
    data = _write(_profile(rng), rng)
    if seed % 4 == 0:  # most must be taken by the scanner (the test would prove little otherwise)
        assert cpm._scanned(data, DEFAULT_LIMITS) is not None
    _same(_load(data, True, monkeypatch), _load(data, False, monkeypatch))


_HANDED_BACK = [
    b'{"nodes":[{"id":1,"callFrame":{"functionName":"(root)"}},{"id":1,"callFrame":{"functionName":"a"}}],'
    b'"samples":[1],"timeDeltas":[1]}',  # a node sent twice
    b'{"nodes":[{"id":1.0,"callFrame":{"functionName":"(root)"}}],"samples":[1],"timeDeltas":[1]}',
    b'{"nodes":[{"id":1,"callFrame":{"functionName":"(root)","lineNumber":2.5}}],"samples":[1],"timeDeltas":[1]}',
    b'{"nodes":[{"id":1,"callFrame":{"functionName":"\\ud800"}}],"samples":[1],"timeDeltas":[1]}',
    b'{"nodes":[{"id":1,"callFrame":{"functionName":"\xff"}}],"samples":[1],"timeDeltas":[1]}',
    b'{"nodes":[{"id":1,"callFrame":{"functionName":"a\x01b"}}],"samples":[1],"timeDeltas":[1]}',
    b'{"nodes":[{"id":1,"callFrame":{"functionName":"a"},"x":' + b"[" * 100 + b"]" * 100 + b'}],'
    b'"samples":[1],"timeDeltas":[1]}',
    b'{"head":{"id":1,"functionName":"(root)","children":[]},"samples":[1],"timestamps":[1]}',
    b'{"nodes":[{"id":1,"callFrame":{"functionName":"a"}}],"samples":[1],"timeDeltas":[1.5]}',
    b'{"nodes":[{"id":1,"callFrame":{"functionName":"a"}}],"samples":[1],"timeDeltas":[1],"nodes":[]}',
    b'{"nodes":[{"id":1,"callFrame":{"functionName":"a"}}],"samples":[1],"timeDeltas":[1]',
    b'{"nodes":[{"id":1,"callFrame":{"functionName":"a"}}],"samples":[1],"timeDeltas":[1],}',
    b'{"nodes":[{"id":01,"callFrame":{"functionName":"a"}}],"samples":[1],"timeDeltas":[1]}',
    b'{"nodes":[{"id":1,"callFrame":{"functionName":"a"}}],"samples":[],"timeDeltas":[]}',
    b'{"nodes":[{"id":1,"callFrame":{"functionName":"a"}}],"samples":[1],"timeDeltas":[1],"startTime":1.5}',
    b'{"nodes":[{"id":1,"callFrame":{"functionName":"a"}}],"samples":[1],"timeDeltas":[1]} x',
    b'[1, 2]',
    b'{"nodes":[{"id":1,"callFrame":{"functionName":"a"}}],"samples":[1],"timeDeltas":[NaN]}',
]


@pytest.mark.timeout(300)
@pytest.mark.parametrize("k", range(len(_HANDED_BACK)))
def test_documents_handed_back_read_as_before(k, monkeypatch):
    data = _HANDED_BACK[k]
    assert cpm._scanned(data, DEFAULT_LIMITS) is None
    _same(_load(data, True, monkeypatch), _load(data, False, monkeypatch))
