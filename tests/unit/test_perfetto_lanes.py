"""Perfetto threads past ``limits.max_lanes_read`` (issue 78, case 7): the threads of the most events
keep their lanes, the others share one lane "other threads" (`io.lanes`), repair ``lanes_capped``
naming the cap.  Twin: the uncapped reading with the merged threads' calls and instants moved to
one lane by hand."""
import collections

import numpy as np

import tracevis3d
from hostile_perfetto import event, head
from tracevis3d.io import lanes


def _threads(n: int) -> bytes:
    """Thread k (tid 100 + k) has 1 + (7k mod 5) slices (none overlapping another thread's) and,
    for k divisible by 3, one instant."""
    out, t = [], 1000
    for k in range(n):
        seq = 50 + k
        out.append(head(seq=seq, uuid=500 + k, pid=1 + k % 2, tid=100 + k))
        for j in range(1 + (7 * k) % 5):
            out.append(event(t, 1, b"work%d" % (j % 2), seq=seq))
            out.append(event(t + 5, 2, seq=seq))
            t += 10
        if k % 3 == 0:
            out.append(event(t, 3, b"mark", seq=seq))
            t += 10
    return b"".join(out)


def _calls(t, thread):
    sel = np.flatnonzero(t.thread == thread)
    return sorted((float(t.start[i]), float(t.end[i]), t.function_names[t.func[i]]) for i in sel)


def test_threads_past_the_cap_share_one_lane_as_merged_by_hand(tmp_path):
    p = tmp_path / "t.pftrace"
    p.write_bytes(_threads(12))
    u = tracevis3d.load(p, warn=False)
    t = tracevis3d.load(p, warn=False, max_lanes_read=4)
    assert u.n_threads == 12 and "lanes_capped" not in u.meta["repairs"]
    # the twin: weights as events per thread, the 3 heaviest (ties: the first thread) kept
    weight = [1 + (7 * k) % 5 + (k % 3 == 0) for k in range(12)]
    kept = sorted(sorted(range(12), key=lambda k: (-weight[k], k))[:3])
    assert t.n_threads == 4 and t.thread_names[-1] == lanes.OTHER_LANES
    assert t.thread_tid.tolist() == [100 + k for k in kept] + [0]
    u_of = {int(tid): k for k, tid in enumerate(u.thread_tid.tolist())}
    for lane, k in enumerate(kept):
        assert _calls(t, lane) == _calls(u, u_of[100 + k])
        assert t.thread_names[lane] == u.thread_names[u_of[100 + k]]
    merged = [u_of[100 + k] for k in range(12) if k not in kept]
    assert _calls(t, 3) == sorted(c for th in merged for c in _calls(u, th))
    lane_of = {u_of[100 + k]: lane for lane, k in enumerate(kept)}
    want = collections.Counter(lane_of.get(int(th), 3) for th in u.instant_thread.tolist())
    assert collections.Counter(t.instant_thread.tolist()) == want
    assert len(t) == len(u)
    r = t.meta["repairs"]["lanes_capped"]
    assert r["count"] == 9 and "more than 4 threads (12; max_lanes_read=)" in r["action"], r


def test_a_trace_within_the_cap_is_the_same(tmp_path):
    p = tmp_path / "t.pftrace"
    p.write_bytes(_threads(5))
    u = tracevis3d.load(p, warn=False)
    t = tracevis3d.load(p, warn=False, max_lanes_read=5)
    for k in ("func", "start", "end", "depth", "parent", "thread", "thread_pid", "thread_tid", "instant_thread"):
        assert getattr(t, k).tolist() == getattr(u, k).tolist(), k
    assert t.thread_names == u.thread_names and "lanes_capped" not in t.meta["repairs"]


def _chrome_threads(n: int) -> bytes:
    """`_threads` as Chrome JSON: X events and 't' instants, a thread name for each thread."""
    import json

    ev, t = [], 0
    for k in range(n):
        ev.append({"ph": "M", "name": "thread_name", "pid": 1 + k % 2, "tid": 100 + k, "args": {"name": f"T{k}"}})
        for j in range(1 + (7 * k) % 5):
            ev.append({"ph": "X", "name": f"work{j % 2}", "ts": t, "dur": 5, "pid": 1 + k % 2, "tid": 100 + k})
            t += 10
        if k % 3 == 0:
            ev.append({"ph": "i", "s": "t", "name": "mark", "ts": t, "pid": 1 + k % 2, "tid": 100 + k})
            t += 10
    return json.dumps(ev).encode()


def test_chrome_json_threads_past_the_cap_share_one_lane_as_merged_by_hand(tmp_path):
    """The same cap in the Chrome JSON reader (`chrome._thread_table`)."""
    p = tmp_path / "t.json"
    p.write_bytes(_chrome_threads(12))
    u = tracevis3d.load(p, warn=False)
    t = tracevis3d.load(p, warn=False, max_lanes_read=4)
    assert u.n_threads == 12 and "lanes_capped" not in u.meta["repairs"]
    weight = [1 + (7 * k) % 5 + (k % 3 == 0) for k in range(12)]
    kept = sorted(sorted(range(12), key=lambda k: (-weight[k], k))[:3], key=lambda k: (1 + k % 2, k))
    assert t.n_threads == 4 and t.thread_names == [f"T{k}" for k in kept] + [lanes.OTHER_LANES]
    u_of = {int(tid): k for k, tid in enumerate(u.thread_tid.tolist())}
    for lane, k in enumerate(kept):
        assert _calls(t, lane) == _calls(u, u_of[100 + k])
    merged = [u_of[100 + k] for k in range(12) if k not in kept]
    assert _calls(t, 3) == sorted(c for th in merged for c in _calls(u, th))
    lane_of = {u_of[100 + k]: lane for lane, k in enumerate(kept)}
    want = collections.Counter(lane_of.get(int(th), 3) for th in u.instant_thread.tolist())
    assert collections.Counter(t.instant_thread.tolist()) == want
    r = t.meta["repairs"]["lanes_capped"]
    assert r["count"] == 9 and "more than 4 threads (12; max_lanes_read=)" in r["action"], r
