"""`kernels.memray_scan.scan_capture` on record streams written here by a pure-Python writer of
memray's format (``record_writer.cpp``'s encodings), against what the writer meant: the records'
fields, memray's stack ids from a brute-force FrameTree (a dict of (parent, frame) -> node), the
memory records' places, threads, code objects; `io.memray_own._line_311` against CPython's own line
table; damaged streams stop with the right error code."""
import numpy as np
import pytest

from tracevis3d.kernels import memray_scan as ms


def _varint(v: int) -> bytes:
    out = bytearray()
    while True:
        b = v & 0x7F
        v >>= 7
        if v:
            out.append(b | 0x80)
        else:
            out.append(b)
            return bytes(out)


def _zigzag(v: int) -> bytes:
    return _varint(((v << 1) ^ (v >> 63)) & 0xFFFFFFFFFFFFFFFF)


class Writer:
    """memray's StreamingRecordWriter, brute force: bytes out, and what a reader must find."""

    def __init__(self, native=False):
        self.out = bytearray()
        self.native = native
        self.cache = []
        self.last = {"ptr": 0, "native": 0, "line": 0}
        self.tid = None
        self.stacks = {}  # tid -> [node]
        self.frames = {}  # (code, offset, entry) -> id
        self.tree = {}  # (parent, frame id) -> node
        self.records = []  # (address, size, allocator, tid, stack, native id)
        self.memory = []  # (records before, rss, ms)
        self.names = {}
        self.codes = []

    def switch(self, tid):
        if tid != self.tid:
            self.tid = tid
            self.stacks.setdefault(tid, [])
            self.out += bytes([12]) + tid.to_bytes(8, "little")

    def push(self, code, offset, entry=0):
        self.out += bytes([0x40 | entry]) + _varint(code) + _zigzag(offset)
        fid = self.frames.setdefault((code, offset, entry), len(self.frames))
        stack = self.stacks[self.tid]
        parent = stack[-1] if stack else 0
        node = self.tree.setdefault((parent, fid), len(self.tree) + 1)
        stack.append(node)

    def pop(self, count):
        del self.stacks[self.tid][len(self.stacks[self.tid]) - count:]
        while count:
            k = min(count, 16)
            self.out.append(0x10 | (k - 1))
            count -= k

    def allocate(self, address, size, allocator, native_id=0):
        tok = 0x80 | (allocator if allocator < 8 else 0)
        if address in self.cache:
            tok |= self.cache.index(address) << 3
            body = b""
        else:
            tok |= 15 << 3
            new = address >> 3
            body = _zigzag(new - self.last["ptr"])
            self.last["ptr"] = new
            self.cache = ([address] + self.cache)[:15]
        if allocator >= 8:
            body += bytes([allocator])
        free = allocator in (1, 5)
        if self.native and not free:
            body += _zigzag(native_id - self.last["native"])
            self.last["native"] = native_id
        if not free:
            body += _varint(size)
        self.out += bytes([tok]) + body
        dealloc = allocator in (1, 5, 15)
        stack = self.stacks[self.tid]
        self.records.append((address, 0 if free else size, allocator, self.tid,
                             0 if dealloc or not stack else stack[-1], native_id if self.native and not dealloc else 0))

    def memory_record(self, rss, ms_):
        self.out += bytes([2]) + _varint(rss) + _varint(ms_)
        self.memory.append((len(self.records), rss, ms_))

    def thread_name(self, name):
        self.out += bytes([10]) + name.encode() + b"\0"
        self.names[self.tid] = name

    def code_object(self, code, function, file, firstline, table):
        self.out += (bytes([14]) + _varint(code) + function.encode() + b"\0" + file.encode() + b"\0"
                     + _zigzag(firstline - self.last["line"]) + _varint(len(table)) + table)
        self.last["line"] = firstline
        self.codes.append((code, function, file, firstline, table))

    def trailer(self):
        self.out.append(1)


def _scan(w, **kw):
    buf = np.frombuffer(bytes(w.out), np.uint8)
    args = dict(native=w.native, cap_hint=4, max_records=10**7, max_depth=10**5, max_name=4096)
    args.update(kw)
    return ms.scan_capture(buf, 0, buf.size, args["native"], args["cap_hint"], args["max_records"],
                           args["max_depth"], args["max_name"])


def _random_stream(seed, native=False, n_ops=6000):
    rng = np.random.default_rng(seed)
    w = Writer(native)
    w.switch(1)
    w.thread_name("main")
    live = []
    for i in range(n_ops):
        op = rng.random()
        if op < 0.05:
            w.switch(int(rng.choice([1, 2, 3, 1 << 63 | 5])))
        elif op < 0.25:
            w.push(int(rng.integers(1, 40)), int(rng.integers(-2, 200)), int(rng.integers(0, 2)))
        elif op < 0.4 and w.stacks[w.tid]:
            w.pop(int(rng.integers(1, len(w.stacks[w.tid]) + 1)))
        elif op < 0.7:
            address = int(rng.integers(1, 1 << 20)) * 16 if rng.random() < 0.5 or not live else live[-1]
            allocator = int(rng.choice([2, 3, 4, 6, 7, 8, 9, 10, 11, 12, 13, 14]))
            w.allocate(address, int(rng.integers(1, 1 << 20)), allocator, int(rng.integers(0, 5000)))
            live.append(address)
        elif op < 0.9 and live:
            address = live.pop(int(rng.integers(0, len(live))))
            w.allocate(address, 0, int(rng.choice([1, 5, 15])), 0)
        elif op < 0.93:
            w.memory_record(int(rng.integers(0, 1 << 40)), i)
        elif op < 0.95:
            w.code_object(int(rng.integers(1, 40)), f"f{i}", f"/src/m{i}.py", int(rng.integers(-5, 3000)),
                          bytes(rng.integers(0, 256, int(rng.integers(0, 20)), dtype=np.uint8)))
        elif op < 0.96:
            w.thread_name(f"worker-{i}")
    w.trailer()
    return w


@pytest.mark.parametrize("seed,native", [(1, False), (2, False), (3, True)])
def test_scan_reads_what_the_writer_wrote(seed, native):
    w = _random_stream(seed, native)
    status, err_at, stop, trailer, allocs, memory, threads, frames, nodes, codes, _ = _scan(w)
    assert (status, err_at, trailer, stop) == (ms.OK, -1, True, len(w.out))
    tids = threads[0]
    got = list(zip(allocs[0].tolist(), allocs[1].tolist(), allocs[2].tolist(), tids[allocs[3]].tolist(),
                   allocs[4].tolist(), allocs[5].tolist()))
    assert got == w.records
    assert list(zip(*(m.tolist() for m in memory))) == w.memory
    # memray's frame ids and FrameTree nodes
    want_frames = sorted(w.frames.items(), key=lambda kv: kv[1])
    assert [(int(c), int(o), int(e)) for c, o, e in zip(*frames)] == [k for k, _ in want_frames]
    want_nodes = [(0, 0)] + [k[::-1] for k, _ in sorted(w.tree.items(), key=lambda kv: kv[1])]
    assert list(zip(nodes[0].tolist(), nodes[1].tolist())) == want_nodes
    buf = bytes(w.out)
    names = {int(t): buf[a:b].decode() for t, a, b in zip(*(x.tolist() for x in threads)) if a >= 0}
    assert names == w.names
    ids, rows = codes
    assert [(int(c), buf[r[0]:r[1]].decode(), buf[r[2]:r[3]].decode(), int(r[4]), buf[r[5]:r[6]])
            for c, r in zip(ids.tolist(), rows.tolist())] == w.codes


def test_damaged_streams_stop_with_their_error_and_place():
    w = _random_stream(4)
    status, *_ = _scan(w)
    assert status == ms.OK
    full = bytes(w.out)
    cases = {
        ms.NO_THREAD: bytes([0x82, 5]),
        ms.POP_EMPTY: bytes([12]) + bytes(8) + bytes([0x10]),
        ms.BAD_TOKEN: bytes([12]) + bytes(8) + bytes([3]),
        ms.BAD_VARINT: bytes([12]) + bytes(8) + bytes([0x82]) + b"\xff" * 12,
        ms.BAD_ALLOCATOR: bytes([12]) + bytes(8) + bytes([0x80 | 15 << 3, 2, 99]),
        ms.BAD_STRING: bytes([12]) + bytes(8) + bytes([10]) + b"x" * 5000,
        ms.TOO_DEEP: bytes([12]) + bytes(8) + bytes([0x40, 1, 0]) * 50,
        ms.CUT: bytes([12]) + bytes(4),
    }
    for code, body in cases.items():
        buf = np.frombuffer(body, np.uint8)
        status, err_at, *_ = ms.scan_capture(buf, 0, buf.size, False, 4, 100, 20, 4096)
        assert status == code, (ms.MESSAGES.get(code), ms.MESSAGES.get(status))
        assert 0 <= err_at < buf.size
    # a stream cut anywhere never reads past its end: OK only at a record boundary
    rng = np.random.default_rng(0)
    for at in rng.integers(1, len(full), 200).tolist():
        buf = np.frombuffer(full[:at], np.uint8)
        status, err_at, stop, *_ = ms.scan_capture(buf, 0, buf.size, False, 4, 10**6, 10**5, 4096)
        assert stop <= at and (status == ms.OK or 0 <= err_at < at)
    buf = np.frombuffer(full, np.uint8)
    assert ms.scan_capture(buf, 0, buf.size, False, 4, 10, 10**5, 4096)[0] == ms.TOO_MANY


def _sample(a, b=3):
    x = [a + i for i in range(b)]
    if a > 2:
        y = {k: k * 2
             for k in x}
        return y
    return x


def test_line_table_lines_are_cpythons():
    """memray's ``parseLinetable311`` (our `_line_311`) gives, for each instruction's byte
    offset, the line CPython's ``co_lines`` gives (where CPython has one)."""
    import sys

    from tracevis3d.io.memray_own import _line_311

    if sys.version_info < (3, 11):
        pytest.skip("the location-table format of Python 3.11+")
    for fn in (_sample, test_line_table_lines_are_cpythons, Writer.allocate):
        code = fn.__code__
        checked = 0
        for start, end, line in code.co_lines():
            if line is None:
                continue
            for off in range(start, end, 2):
                assert _line_311(code.co_linetable, off, code.co_firstlineno) == line, (fn.__name__, off)
                checked += 1
        assert checked > 5
    assert _line_311(b"", 0, 7) == 0 and _line_311(bytes([0x00, 0x01]), 10, 7) == 0


def test_heap_at_counts_the_paired_ranges():
    from tracevis3d.kernels.memcov import pair_ranges, record_role

    rng = np.random.default_rng(3)
    n = 3000
    address = rng.integers(1, 200, n).astype(np.uint64) * np.uint64(16)
    size = rng.integers(1, 1000, n).astype(np.uint64)
    allocator = rng.choice([1, 2, 5, 6], n).astype(np.uint8)
    role, space = record_role(allocator)
    _, alloc_of, _, _ = pair_ranges(address, size, role, space)
    pos = np.sort(rng.integers(0, n + 1, 50)).astype(np.int64)
    want = []
    heap = 0
    for i in range(n + 1):
        while len(want) < pos.size and pos[len(want)] == i:
            want.append(heap)
        if i == n:
            break
        if role[i] > 0:
            heap += int(size[i])
        elif role[i] < 0 and alloc_of[i] >= 0:
            heap -= int(size[alloc_of[i]])
    assert ms.heap_at(size, role, alloc_of, pos).tolist() == want


def test_record_times_at_are_record_times():
    """`record_times_at` (snapshot places) gives `kernels.memcov.record_times`'s times (per record
    its count of snapshots at or before it), snapshots sharing a place and at the ends included."""
    from tracevis3d.kernels.memcov import record_times

    rng = np.random.default_rng(9)
    for n, m in ((0, 3), (50, 0), (1000, 40), (200, 200)):
        pos = np.sort(rng.integers(0, n + 1, m)).astype(np.int64)
        snap_ms = np.sort(rng.random(m) * 1000)
        snap_of = np.cumsum(np.bincount(np.minimum(pos, n), minlength=n + 1))[:n].astype(np.int64)
        want = record_times(snap_of, snap_ms, 1500.0)
        assert np.allclose(ms.record_times_at(pos, snap_ms, n, 1500.0), want, rtol=0, atol=1e-9)
