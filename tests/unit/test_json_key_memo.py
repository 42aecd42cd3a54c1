"""`jsonevent.scan_event`'s memo of the last events' keys (issue 79) reads every event as the scan
without it does: each event of documents made to sit on the memo's edges (keys in one order, then
another; more or fewer keys; blanks around the colon that differ; a key that extends a kept one;
escaped keys; an event cut short; keys past the memo's places) is scanned with one memo kept from
event to event and with none (an array too short to keep a place: the general reading of every
key), and the rows, ends and statuses are equal."""
import numpy as np

from tracevis3d.kernels import jsonevent as jev

TEMPLATES = [
    b'{"pid": %d, "tid": 7, "ts": %d.5, "ph": "X", "cat": "fee", "dur": 0.2, "name": "f%d"}',
    b'{"pid":%d,"tid":7,"ts":%d,"ph":"X","dur":1,"name":"g%d"}',
    b'{"pid":  %d, "tid" : 7, "ts":%d, "ph":"B", "name":"h%d"}',
    b'{"pidx": %d, "tid": 7, "ts": %d, "ph": "E", "name": "i%d"}',
    b'{"pid": %d, "t\\u0069d": 7, "ts": %d, "ph": "X", "dur": 2, "name": "j%d"}',
    b'{"ts": %d, "pid": %d, "ph": "i", "s": "t", "name": "k%d", "args": {"a": [1, {"b": 2}]}}',
    b'{"name": "l", "ph": "C", "pid": %d, "ts": %d, "args": {"v": %d}, "id": "0x1", "bp": "e"}',
    b'{"pid": %d, "tid": 7, "ts": %d, "ph": "X", "dur": 1, "name": "m%d", "a1": 1, "a2": 2, "a3": 3, "a4": 4, '
    b'"a5": 5, "a6": 6, "a7": 7, "a8": 8, "a9": 9, "a10": 10, "a11": 11, "a12": 12, "cat": "z"}',
    b'{"pid": %d, "tid": 7, "ts": %d, "ph": "X", "dur": 1, "name": "n%d", }',
    b'{"pid": %d, "tid": 7, "ts": %d, "ph": "X", "dur": 1, "name": "o%d"',
    b'{"pid": %d, "tid": 7, "ts": %d, "ph": "X", "dur": 1 "name": "p%d"}',
    b'{ "pid" :\n%d ,\t"tid": 7, "ts": %d, "ph": "X", "dur": 1, "name": "q%d"}',
    b'{}',
]


def _rows(events: list, memo: np.ndarray, spans_mode: bool) -> list:
    out = []
    stack = np.empty(64, np.uint8)
    buf = np.frombuffer(b" ".join(events) + b" " * 16, np.uint8)  # (read-only: as a load hands the bytes on)
    pos = 0
    for ev in events:
        ii = np.zeros((1, jev.N_I), np.int64)
        ss = np.zeros((1, jev.N_S), np.int32)
        ff = np.zeros((1, jev.N_F), np.float64)
        end, st = jev.scan_event(buf, pos, 0, ii, ss, ff, stack, spans_mode, memo)
        out.append((int(end), int(st), ii.tobytes(), ss.tobytes(), ff.tobytes()))
        pos += len(ev) + 1
    return out


def test_kept_keys_read_events_as_the_general_reading():
    rng = np.random.default_rng(79)
    for trial in range(60):
        runs = []
        for _ in range(int(rng.integers(1, 8))):  # runs of one template, then another
            t = TEMPLATES[int(rng.integers(0, len(TEMPLATES)))]
            for _ in range(int(rng.integers(1, 6))):
                runs.append(t % tuple(int(x) for x in rng.integers(0, 10 ** 6, t.count(b"%d"))))
        for spans_mode in (False, True):
            kept = _rows(runs, jev.new_key_memo(), spans_mode)
            general = _rows(runs, np.zeros(1, np.int64), spans_mode)
            assert kept == general, (trial, spans_mode)


def test_the_memo_is_used():
    """Two events with one layout: the second's keys come from the memo (its places filled)."""
    memo = jev.new_key_memo()
    ev = b'{"pid": 1, "tid": 2, "ts": 3, "ph": "X", "dur": 1, "name": "f"}'
    _rows([ev, ev], memo, False)
    assert memo[0] == 1 + 3 * 6
    assert list(memo[3:1 + 3 * 6:3]) == [jev.K_PID, jev.K_TID, jev.K_TS, jev.K_PH, jev.K_DUR, jev.K_NAME]
