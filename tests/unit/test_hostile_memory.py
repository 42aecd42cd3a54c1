"""Memory captures with deep, shared stacks (issue 78, case 2): every stack walk is linear in the
input (the stacks a trie, `kernels.stack_trie`; a line table walked once for all its frames,
`kernels.memray_scan.frame_lines`; a thread's stack its top node, not an array as deep as the
deepest), bounded by ``limits.max_stack_depth``.  The kernels against brute-force twins; the
crafted captures of `tests/support/hostile_memory.py` loaded in a fresh process under 2 GiB of
address space and a hang guard (before: minutes to hours, or gigabytes)."""
import json
import socket
import threading
import warnings

import numpy as np
import pytest

import hostile_memory as hm
from time_limits import time_limit

from tracevis3d.errors import TraceFormatError
from tracevis3d.io.limits import Limits
from tracevis3d.io import load_memory
from tracevis3d.kernels import stack_trie as kt

# ----------------------------------------------------------------------------- twins


def _random_trie(rng, n_nodes, n_labels, n_stacks):
    parent = np.full(n_nodes, -1, np.int64)
    for k in range(1, n_nodes):
        if rng.random() < 0.9:
            parent[k] = int(rng.integers(max(0, k - 30), k))
    label = rng.integers(0, n_labels, n_nodes).astype(np.int64)
    stack_node = rng.integers(-1, n_nodes, n_stacks).astype(np.int64)
    depth = np.array([_chain_len(parent, k) for k in range(n_nodes)], np.int64)
    full = np.where(stack_node >= 0, depth[np.maximum(stack_node, 0)], 0)
    cut = np.where(rng.random(n_stacks) < 0.3, np.maximum(full - 2, 0), full)  # memray's skipped frames
    return parent, label, stack_node, cut.astype(np.int64)


def _chain_len(parent, k):
    d = 0
    while k >= 0:
        d, k = d + 1, parent[k]
    return d


def _walk(parent, x, r):
    out = []
    while x >= 0 and r > 0:
        out.append(x)
        x, r = parent[x], r - 1
    return out


@pytest.mark.parametrize("seed", [0, 1, 2, 3])
def test_trie_kernels_match_full_walks(seed):
    rng = np.random.default_rng(seed)
    parent, label, stack_node, stack_len = _random_trie(rng, 400, 25, 300)
    assert kt.trie_depths(parent).tolist() == [_chain_len(parent, k) for k in range(parent.size)]
    # first-seen order of the labels: the full walk of every stack, innermost first
    want_order = []
    for x, r in zip(stack_node.tolist(), stack_len.tolist()):
        for y in _walk(parent, x, r):
            if label[y] not in want_order:
                want_order.append(int(label[y]))
    rank, order = kt.first_seen_labels(parent, label, stack_node, stack_len, 25)
    assert order.tolist() == want_order
    assert [int(rank[lab]) for lab in want_order] == list(range(len(want_order)))
    assert all(rank[lab] == -1 for lab in range(25) if lab not in want_order)
    # stacks holding a node that hits
    hit = rng.random(parent.size) < 0.05
    want = [any(hit[y] for y in _walk(parent, x, r)) for x, r in zip(stack_node.tolist(), stack_len.tolist())]
    assert kt.stacks_touching(parent, hit, stack_node, stack_len).tolist() == want


def test_frame_lines_match_memrays_table_walk():
    """`frame_lines` (each table walked once for all its frames) gives `memray_own._line_311`'s
    line (memray's ``parseLinetable311``, per frame) for tables of CPython and random bytes,
    offsets in and past them, negative offsets and frames without a code object."""
    from tracevis3d.io.memray_own import _line_311
    from tracevis3d.kernels.memray_scan import frame_lines

    rng = np.random.default_rng(5)
    tables = [f.__code__.co_linetable for f in (_random_trie, _walk, test_frame_lines_match_memrays_table_walk)]
    tables += [bytes(rng.integers(0, 256, int(rng.integers(0, 80)), dtype=np.uint8)) for _ in range(40)]
    tables += [bytes([0xE8, 0x02]) * 50, b"", bytes([0xF0]) + bytes([0x7F]) * 30]  # long varints
    buf, t0, t1, first = bytearray(), [], [], []
    for k, t in enumerate(tables):
        buf += b"\xAA" * 3  # bytes around each table: never read as part of it
        t0.append(len(buf))
        buf += t
        t1.append(len(buf))
        first.append(int(rng.integers(-100, 5000)) if k else 1)
    buf += b"\xAA" * 3
    n = 3000
    row = rng.integers(-1, len(tables), n).astype(np.int64)
    off = rng.integers(-4, 260, n).astype(np.int64)
    got = frame_lines(np.frombuffer(bytes(buf), np.uint8), np.array(t0, np.int64), np.array(t1, np.int64),
                      np.array(first, np.int64), row, off)
    want = [0 if r < 0 or o < 0 else _line_311(tables[r], o, first[r]) for r, o in zip(row.tolist(), off.tolist())]
    assert got.tolist() == want
    assert len(set(want)) > 20  # the tables give many lines, not only 0


# ----------------------------------------------------------------------------- crafted captures
_LOAD = """
import numpy as np
from tracevis3d.io import load_memory
cap = load_memory(PATH, warn=False)
out.update(ranges=cap.n_ranges, stacks=len(cap.stack_frames), frames=len(cap.frame_function), sites=cap.n_sites,
           depth=[len(cap.stack_frames[s]) for s in range(min(3, len(cap.stack_frames)))],
           first=[cap.frame_function[f] for f in cap.stack_frames.frames(0, 3)] if len(cap.stack_frames) else [],
           lines=[int(x) for x in cap.frame_line[:5]], label=cap.site_label(0) if cap.n_sites else "")
"""


def _load_bounded(tmp_path, data: bytes, name: str) -> dict:
    path = tmp_path / name
    path.write_bytes(data)
    res = hm.run_bounded(_LOAD.replace("PATH", repr(str(path))), timeout=180)
    assert res["outcome"] == "ok", res
    return res


@pytest.mark.timeout(400)
def test_thousands_of_stacks_under_one_deep_prefix(tmp_path):
    """3000 allocations, each under its own leaf on one 99,999-frame stack (0.3 MB): before, a
    walk of every stack to the root (3 × 10^8 steps, GBs of frame lists); now the trie once."""
    data = hm.deep_leaves(depth=99_999, leaves=3000)
    assert len(data) < 400_000
    res = _load_bounded(tmp_path, data, "deep.bin")
    assert res["ranges"] == 3000 and res["stacks"] == 3000 and res["frames"] == 2 and res["sites"] == 1
    assert res["depth"] == [100_000] * 3 and res["first"] == ["leaf", "recurse", "recurse"]
    assert res["peak_mb"] < 1500, res


@pytest.mark.timeout(400)
def test_a_long_line_table_is_walked_once(tmp_path):
    """5000 frames of one code object whose line table holds 10^6 entries (2 MB): each frame's
    line is its instruction's (first line + index + 1), the table walked once, not per frame."""
    data = hm.long_line_table(entries=1_000_000, frames=5000, first_line=7)
    res = _load_bounded(tmp_path, data, "lines.bin")
    assert res["ranges"] == 5000 and res["frames"] == 5000
    # frames in first-seen order: the k-th pushed at instruction entries - 1 - k
    assert res["lines"] == [7 + (1_000_000 - 1 - k) + 1 for k in range(5)]
    assert res["label"] == "long (long.py:1000007)"


@pytest.mark.timeout(400)
def test_many_threads_and_one_deep_stack_stay_small(tmp_path):
    """20,000 threads, then a 99,999-frame stack on the last: before, a stack array per thread as
    deep as the deepest (20,000 × 131,072 × 8 bytes); now each thread's top node."""
    data = hm.threads_then_deep(threads=20_000, depth=99_999)
    res = _load_bounded(tmp_path, data, "threads.bin")
    assert res["ranges"] == 1 and res["depth"] == [99_999], res
    assert res["peak_mb"] < 1500, res


@pytest.mark.timeout(400)
def test_a_deeper_stack_than_the_limit_is_refused_in_one_line(tmp_path):
    path = tmp_path / "deeper.bin"
    path.write_bytes(hm.deep_leaves(depth=1200, leaves=3))
    with time_limit(120), pytest.raises(TraceFormatError) as e:
        load_memory(path, limits=Limits(max_stack_depth=1000))
    msg = str(e.value)
    assert msg.startswith(str(path)) and "\n" not in msg and "limits.max_stack_depth" in msg, msg


_HEAPS = """
import warnings
from tracevis3d.io import load_memory
with warnings.catch_warnings(record=True) as w:
    warnings.simplefilter("always")
    cap = load_memory(PATH)
out.update(ranges=cap.n_ranges, sites=cap.n_sites, depth=[len(cap.stack_frames[s]) for s in range(min(3, cap.n_sites))],
           first=[cap.frame_function[f] for f in cap.stack_frames.frames(0, 2)],
           last=cap.frame_function[cap.stack_frames[0][-1]], warnings=[str(x.message) for x in w])
"""


@pytest.mark.timeout(400)
def test_heap_entries_under_one_deep_chain(tmp_path):
    """A Chrome dump with 3000 heap entries at the deepest nodes of a 99,000-node ``heaps_v2``
    chain (4 MB): before, each entry's chain walked and kept as a tuple (GBs); now once."""
    path = tmp_path / "heaps.json"
    path.write_bytes(hm.deep_heaps_v2(depth=99_000, entries=3000))
    res = hm.run_bounded(_HEAPS.replace("PATH", repr(str(path))), timeout=180)
    assert res["outcome"] == "ok", res
    assert res["ranges"] == 3000 and res["sites"] == 3000 and res["warnings"] == [], res
    assert res["depth"] == [99_000, 98_999, 98_998] and res["first"] == ["Recurse", "Recurse"] and \
        res["last"] == "main", res
    assert res["peak_mb"] < 1500, res


@pytest.mark.timeout(400)
def test_a_heap_chain_past_the_limit_or_looping_is_cut_with_a_warning(tmp_path):
    path = tmp_path / "heaps.json"
    path.write_bytes(hm.deep_heaps_v2(depth=2500, entries=10))
    with time_limit(120), warnings.catch_warnings(record=True) as w:
        warnings.simplefilter("always")
        cap = load_memory(path, limits=Limits(max_stack_depth=1000))
    msgs = [str(x.message) for x in w]
    assert len(msgs) == 1 and msgs[0].startswith(f"{path}: memory dump left out: ") and \
        "deeper than limits.max_stack_depth (1,000)" in msgs[0], msgs
    assert max(len(cap.stack_frames[s]) for s in range(cap.n_sites)) <= 1000
    # a loop: node 3's parent is node 5, a descendant of it
    doc = json.loads(hm.deep_heaps_v2(depth=6, entries=2))
    nodes = doc["traceEvents"][2]["args"]["dumps"]["heaps_v2"]["maps"]["nodes"]
    nodes[2]["parent"] = 5
    path.write_text(json.dumps(doc))
    with time_limit(120), warnings.catch_warnings(record=True) as w:
        warnings.simplefilter("always")
        cap = load_memory(path)
    msgs = [str(x.message) for x in w]
    assert len(msgs) == 1 and "loops" in msgs[0], msgs
    assert sorted(len(cap.stack_frames[s]) for s in range(cap.n_sites)) == [3, 4]


# ----------------------------------------------------------------------------- a live peer
class _Sender:
    """A loopback peer in memray's live tracker's place: sends ``data`` to the first client, closes."""

    def __init__(self, data: bytes):
        self.srv = socket.socket()
        self.srv.bind(("127.0.0.1", 0))
        self.srv.listen(1)
        self.port = self.srv.getsockname()[1]
        self.t = threading.Thread(target=self._serve, args=(data,), daemon=True)
        self.t.start()

    def _serve(self, data):
        conn, _ = self.srv.accept()
        try:
            conn.sendall(data)
        except OSError:
            pass
        finally:
            conn.close()

    def close(self):
        self.t.join(30)
        self.srv.close()


@pytest.mark.timeout(400)
def test_a_live_peer_sending_deep_stacks_is_read_to_its_end():
    """The deep capture from a live peer: `MemrayLiveStream.capture` answers (before: it hung)."""
    from tracevis3d.io.memray_live import MemrayLiveStream

    peer = _Sender(hm.deep_leaves(depth=99_999, leaves=3000))
    try:
        with time_limit(200), MemrayLiveStream(peer.port, connect_timeout=30) as stream:
            while not stream.finished:
                stream.poll(timeout=0.5)
            cap = stream.capture()
    finally:
        peer.close()
    assert cap.n_ranges == 3000 and cap.meta["running"] is False
    assert len(cap.stack_frames[0]) == 100_000 and cap.stack_text(0, 2) == ["leaf (deep.py:0)", "recurse (deep.py:0)"]


@pytest.mark.timeout(400)
def test_memrays_reader_agrees_on_deep_stacks_and_is_bounded_too(tmp_path):
    """memray's own FileReader reads the crafted capture as ours does (frames, lines, sites); its
    path (native captures) is bounded by the same limits: a deeper stack is refused in one line."""
    pytest.importorskip("memray")
    path = tmp_path / "deep.bin"
    path.write_bytes(hm.deep_leaves(depth=1200, leaves=40))
    with time_limit(200):
        ours, theirs = load_memory(path, reader="own", warn=False), load_memory(path, reader="memray")
    assert theirs.meta["reader"].startswith("memray.FileReader")
    assert ours.stack_frames == theirs.stack_frames and ours.frame_function == theirs.frame_function
    assert np.array_equal(ours.frame_line, theirs.frame_line) and np.array_equal(ours.stack_site, theirs.stack_site)
    assert [len(s) for s in theirs.stack_frames] == [1201] * 40
    with time_limit(200), pytest.raises(TraceFormatError) as e:
        load_memory(path, reader="memray", limits=Limits(max_stack_depth=1000))
    # (the capture is checked by our scanner before memray reads it: the place is its record's byte)
    msg = str(e.value)
    assert msg.startswith(f"{path}: ") and "\n" not in msg, msg
    assert msg.endswith("a stack deeper than limits.max_stack_depth (1,000)"), msg


def test_memrays_reader_gives_the_same_lines_from_a_long_table(tmp_path):
    pytest.importorskip("memray")
    path = tmp_path / "lines.bin"
    path.write_bytes(hm.long_line_table(entries=5000, frames=60, first_line=-40))
    with time_limit(200):
        ours, theirs = load_memory(path, reader="own", warn=False), load_memory(path, reader="memray")
    assert ours.frame_line.tolist() == theirs.frame_line.tolist() == [-40 + (5000 - 1 - k) + 1 for k in range(60)]


@pytest.mark.timeout(400)
def test_dumps_that_change_a_deep_chains_root_are_one_warning_and_linear(tmp_path):
    """1000 dumps that each redefine the root of a 99,000-node chain and hold an entry at its
    deepest node: the first definition kept (one warning), every stack resolved once; before,
    each dump walked the whole chain again (10^8 steps)."""
    path = tmp_path / "redefined.json"
    path.write_bytes(hm.heaps_v2_redefined(depth=99_000, dumps=1000))
    res = hm.run_bounded(_HEAPS.replace("PATH", repr(str(path))), timeout=180)
    assert res["outcome"] == "ok" and res["ranges"] == 1001 and res["sites"] == 1, res
    assert len(res["warnings"]) == 1 and "heaps_v2.maps.nodes changes id 1 an earlier dump defined: the first " \
        "definition kept (and 999 more)" in res["warnings"][0], res["warnings"]
    assert res["last"] == "main" and res["peak_mb"] < 1500, res
