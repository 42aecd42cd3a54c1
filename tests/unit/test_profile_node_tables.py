"""The vectorised steps of the pprof and V8 profile readers against brute-force twins: a
location id's location (`pprof._locations_of_ids`: one table when ids are dense, a search when
they are not, as the sample kernel finds them), a profile's (owner, child) pairs (`chrome_profile._child_pairs`),
and the nodes of a profile as `_add_nodes` reads them (every odd form of a field)."""
from __future__ import annotations

import random

import numpy as np
import pytest

from tracevis3d.io import chrome_profile as cp
from tracevis3d.io.pprof import _locations_of_ids


def _locations_of_ids_twin(ids, wanted):
    """The last location with each wanted id, -1 when none has it: a dict."""
    of = {}
    for k, i in enumerate(ids.tolist()):
        of[i] = k
    return np.array([of.get(w, -1) for w in wanted.tolist()], np.int64)


@pytest.mark.timeout(60)
@pytest.mark.parametrize("seed", range(12))
def test_locations_of_ids_match_their_twin(seed):
    rng = np.random.default_rng(seed)
    n = int(rng.integers(0, 50))
    if seed % 3 == 0:  # dense: Go numbers locations 1..n
        ids = np.arange(1, n + 1, dtype=np.uint64)
    elif seed % 3 == 1:  # sparse: one table would be too big
        ids = rng.integers(0, 2 ** 63, n, dtype=np.uint64)
    else:  # dense with repeats (the last location of an id wins)
        ids = rng.integers(0, max(n, 1) + 3, n).astype(np.uint64)
    pool = np.concatenate([ids, np.array([0, 1, 2 ** 64 - 1, 2 ** 63, n + 5000], np.uint64)])
    wanted = pool[rng.integers(0, pool.size, 300)] if pool.size else np.zeros(0, np.uint64)
    got = _locations_of_ids(ids, wanted)
    assert got.dtype == np.int64
    np.testing.assert_array_equal(got, _locations_of_ids_twin(ids, wanted))


def _child_pairs_twin(owners, kid_lists):
    out = [(o, c) for o, kids in zip(owners, kid_lists) for c in kids
           if type(c) is int and -cp.MAX_ID < c < cp.MAX_ID]
    return np.array(out, np.int64).reshape(-1, 2)


@pytest.mark.timeout(60)
@pytest.mark.parametrize("seed", range(10))
def test_child_pairs_match_their_twin(seed):
    rng = random.Random(seed)
    odd = [True, False, 2 ** 62, -(2 ** 62), 2 ** 70, 1.0, "3", None, [4], {"a": 1}]
    owners, kid_lists = [], []
    for k in range(rng.randint(1, 40)):
        owners.append(k + 1)
        kid_lists.append([rng.choice(odd) if seed % 2 and rng.random() < 0.2 else rng.randint(-5, 10 ** 6)
                          for _ in range(rng.randint(0, 6))])
    np.testing.assert_array_equal(cp._child_pairs(owners, kid_lists), _child_pairs_twin(owners, kid_lists))


def _add_nodes_twin(nodes, text):
    """(index, parents, frames, children pairs) of ``nodes`` read node by node with `cp._line`."""
    index, parents, frames, pairs = {}, [], [], []
    for nd in nodes:
        nid = nd.get("id") if type(nd) is dict else None
        if type(nid) is not int or not -cp.MAX_ID < nid < cp.MAX_ID or nid in index:
            continue
        cf = nd.get("callFrame") if type(nd.get("callFrame")) is dict else {}
        parent = nd.get("parent")
        if parent is not None and (type(parent) is not int or not -cp.MAX_ID < parent < cp.MAX_ID):
            parent = cp.BAD_PARENT
        index[nid] = len(frames)
        parents.append(parent)
        name, url = cf.get("functionName"), cf.get("url")
        frames.append((text(name) if type(name) is str else "", text(url) if type(url) is str else "",
                       cp._line(cf.get("lineNumber")), cp._line(cf.get("columnNumber"))))
        if type(nd.get("children")) is list:
            pairs += [(nid, c) for c in nd["children"] if type(c) is int and -cp.MAX_ID < c < cp.MAX_ID]
    return index, parents, frames, np.array(pairs, np.int64).reshape(-1, 2)


@pytest.mark.timeout(60)
@pytest.mark.parametrize("seed", range(10))
def test_add_nodes_reads_every_odd_field_as_node_by_node(seed):
    rng = random.Random(seed)
    numbers = [0, 5, -1, -7, 2 ** 31 - 2, 2 ** 31 - 1, 2 ** 40, 2 ** 70, 3.7, -0.5, float("nan"), True, None, "4"]
    nodes = []
    for k in range(rng.randint(1, 80)):
        nd = {"id": k + 1 if rng.random() < 0.9 else rng.choice([k, 2 ** 63, "x", None, True])}
        if rng.random() < 0.9:
            nd["callFrame"] = {"functionName": rng.choice(["f", "", "(root)", "n" * 30, 7, None]),
                               "url": rng.choice(["a.js", "", None, 3]),
                               "lineNumber": rng.choice(numbers), "columnNumber": rng.choice(numbers)}
        else:
            nd["callFrame"] = rng.choice([None, "cf", [1]])
        if rng.random() < 0.5:
            nd["parent"] = rng.choice([k, k - 1, None, 2 ** 62, 2 ** 70, "1", True])
        if rng.random() < 0.5:
            nd["children"] = rng.choice([[k + 2, k + 3], [True, 2 ** 70, k + 4], None, 5, []])
        nodes.append(nd if rng.random() < 0.95 else rng.choice([None, 3, "node"]))
    calls = []

    def text(s):  # a cleaner that counts its calls, as the Chrome reader's does
        calls.append(s)
        return s[:20]

    p = cp._Profile(pid=0)
    cp._add_nodes(p, nodes, text, lambda: None)
    twin_calls = []

    def twin_text(s):
        twin_calls.append(s)
        return s[:20]

    index, parents, frames, pairs = _add_nodes_twin(nodes, twin_text)
    assert list(p.node_index.items()) == list(index.items())
    assert p.node_parent_id == parents
    assert p.node_frame == frames
    assert sorted(calls) == sorted(twin_calls)
    got = np.concatenate(p.children) if p.children else np.zeros((0, 2), np.int64)
    np.testing.assert_array_equal(got, pairs)
