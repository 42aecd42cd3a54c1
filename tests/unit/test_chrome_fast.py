"""The fast path of counter and flow events (issue 25): kernels/sidescan, kernels/sidetables and
kernels/flowchain against brute-force twins written in plain Python (json, float(), dicts)."""
import json
import random
import struct

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from tracevis3d.kernels import flowchain as fc
from tracevis3d.kernels import jsonevent as je
from tracevis3d.kernels import jsontokens as jt
from tracevis3d.kernels import sidescan as ss
from tracevis3d.kernels import sideshape as sh
from tracevis3d.kernels import sidetables as stb

PAD = b" " * 40  # the fast number path wants 17 bytes after a number


def _b(s):
    return np.frombuffer(s if isinstance(s, bytes) else s.encode(), np.uint8)


def _bits(v):
    return struct.pack("<d", v)


# ------------------------------------------------------------------ numbers
def _numbers(rng, n):
    out = ["0", "-0", "1", "-1", "9007199254740991", "9007199254740992", "123.456", "0.1", "1e5", "1E-3", "-2.5e+2",
           "1.", "-", "00012", "12345678", "123456789", "1234567812345678", "12345678123456789", "0.000000000000001",
           "99999999.99999999", "1.2345678901234567890", "3.14159", "-0.0"]
    for _ in range(n):
        kind = rng.randrange(5)
        ni = rng.randrange(1, 20)
        s = ("-" if rng.random() < 0.3 else "") + "".join(rng.choice("0123456789") for _ in range(ni))
        if kind >= 2:
            s += "." + "".join(rng.choice("0123456789") for _ in range(rng.randrange(1, 18)))
        if kind == 4:
            s += rng.choice("eE") + rng.choice(["", "+", "-"]) + str(rng.randrange(0, 30))
        out.append(s)
    return out


def test_parse_num_twin():
    """parse_num: jsontokens.parse_number's very results; where exact, Python's float()."""
    rng = random.Random(5)
    for s in _numbers(rng, 3000):
        for tail in (b",", b"}", b" ", b"x"):
            for pad in (PAD, b""):
                buf = _b(s.encode() + tail + pad)
                v, j, ex = ss.parse_num(buf, 0)
                v0, j0, ex0 = jt.parse_number(buf, 0)
                assert (j, ex) == (j0, ex0), s
                assert _bits(v) == _bits(v0), s
                if ex and j >= 0:
                    assert v == float(s) and _bits(v) == _bits(float(s)), s


def test_digit_run_twin():
    """_digit_run: the leading digits' number and count (16: 16 or more, no number)."""
    rng = random.Random(6)
    for _ in range(3000):
        d = "".join(rng.choice("0123456789") for _ in range(rng.randrange(0, 20)))
        s = (d + rng.choice(["", ".", "x", ",", "/", ":", "\xff"]) + "z" * 20).encode("latin-1")
        m, c = ss._digit_run(_b(s), np.uint64(0))
        want = min(len(d), 16)
        assert int(c) == want
        if want < 16:
            assert int(m) == (int(d) if d else 0)


def test_scalar_id_twin():
    """_scalar_id: jsonevent._scan_scalar_id's id and end for numbers and strings."""
    rng = random.Random(7)
    stack = np.empty(64, np.uint8)
    vals = _numbers(rng, 500) + ['"0x1"', '"abc"', '"a\\"b"', '""', '"x']
    for s in vals:
        buf = _b(s.encode() + b"," + PAD)
        h, j = ss._scalar_id(buf, 0)
        h0, j0 = je._scan_scalar_id(buf, 0, stack)
        assert (int(j) < 0) == (int(j0) < 0), s
        if j0 >= 0:
            assert (int(h), int(j)) == (int(h0), int(j0)), s


@settings(max_examples=200, deadline=None)
@given(st.lists(st.tuples(st.text(min_size=0, max_size=6),
                          st.one_of(st.integers(-10 ** 12, 10 ** 12),
                                    st.floats(allow_nan=False, allow_infinity=False, width=32))),
                max_size=8), st.sampled_from(["", " ", "\n "]))
def test_counter_args_twin(pairs, sp):
    """counter_args: the pairs json.loads reads (keys as their spans' bytes, values as floats)."""
    body = ("," + sp).join(f"{json.dumps(k)}{sp}:{sp}{json.dumps(v)}" for k, v in pairs)
    text = ("{" + sp + body + sp + "}").encode() + b"," + PAD
    buf = _b(text)
    oi = np.zeros((4, 80), np.int64)
    ov = np.zeros((3, 80))
    end, m = ss.counter_args(buf, 0, oi, ov, 3, _fx()[7], False)
    obj, want_end = json.JSONDecoder().raw_decode(text.decode())
    if end < 0:  # declined: duplicate keys read twice by json, or a number off the exact path
        exact = [jt.parse_number(_b(json.dumps(v).encode() + b","), 0)[2] for _, v in pairs]
        assert not all(exact)
        return
    assert end == want_end and m == len(pairs)
    for q, (k, v) in enumerate(pairs):
        key = bytes(buf[oi[0, 3 + q]:oi[0, 3 + q] + oi[1, 3 + q]])
        assert json.loads(b'"' + key + b'"') == k
        assert ov[1, 3 + q] == float(json.dumps(v))


def test_counter_args_declines():
    oi = np.zeros((4, 80), np.int64)
    ov = np.zeros((3, 80))
    for s in ['{"a":"x"}', '{"a":1e400}', '{"a":NaN}', '{"a":[1]}', '{"a":1,}', '{a:1}', '{"a":1',
              "{" + ",".join(f'"k{q}":1' for q in range(stb.MAX_PAIRS + 1)) + "}"]:
        assert ss.counter_args(_b(s.encode() + PAD), 0, oi, ov, 0, _fx()[7], False)[0] < 0, s


# ------------------------------------------------------------------ tables
def _fx(cap=256, seed=12345, max_t=1e300):
    return stb.new_fast(cap, seed, max_t)


def test_tables_twin():
    """key_entry, span_entry, counter_entry, series_entry: entries numbered by first appearance,
    as a dict numbers them (TAB_CAP entries at most: -1 past)."""
    rng = random.Random(8)
    for seed in (1, 99, 2 ** 40 + 3):
        tab, slot, cnt, *_ = _fx(seed=seed)
        words = [("w%d" % rng.randrange(300)) * rng.randrange(1, 4) for _ in range(3000)]
        text = " ".join(words).encode()
        buf = _b(text)
        names, keys, cnts, sers = {}, {}, {}, {}
        pos = 0
        for w in words:
            wb = w.encode()
            e = stb.span_entry(tab, slot, cnt, stb.T_NAME, buf, pos, len(wb), 0, pos, 1, 0)
            assert e == names.setdefault(wb, len(names))
            pid, tid = rng.randrange(-3, 4) * 2 ** 33, rng.randrange(40)
            assert stb.key_entry(tab, slot, cnt, pid, tid, pos) == keys.setdefault((pid, tid), len(keys))
            cid, has = rng.randrange(3), rng.randrange(2)
            c = stb.counter_entry(tab, slot, cnt, pid, e, cid, has, pos)
            assert c == cnts.setdefault((pid, e, cid, has), len(cnts))
            r = stb.series_entry(tab, slot, cnt, buf, c, pos, len(wb), pos)
            assert r == sers.setdefault((c, wb), len(sers))
            pos += len(wb) + 1
        for t, d in ((stb.T_NAME, names), (stb.T_KEY, keys), (stb.T_CNT, cnts), (stb.T_SER, sers)):
            assert cnt[t] == len(d)


def test_same_bytes_twin():
    """same_bytes (8 bytes at a time, a masked last word, bytes near the end) against slices."""
    rng = random.Random(13)
    b = bytes(rng.choice(b"ab") for _ in range(200))
    buf = _b(b)
    for _ in range(2000):
        a, c, ln = rng.randrange(100), rng.randrange(100), rng.randrange(0, 12)
        assert stb.same_bytes(buf, a, c, ln) == (b[a:a + ln] == b[c:c + ln])
    b = b"ab" * 40 + b"ab" * 3  # long runs that match, up to the last byte
    buf = _b(b)
    for _ in range(4000):
        ln = rng.randrange(0, 40)
        a, c = rng.randrange(len(b) - ln + 1), rng.randrange(len(b) - ln + 1)
        assert stb.same_bytes(buf, a, c, ln) == (b[a:a + ln] == b[c:c + ln])


def test_table_full_declines():
    tab, slot, cnt, *_ = _fx()
    for q in range(stb.TAB_CAP):
        assert stb.key_entry(tab, slot, cnt, q, 0, 0) == q
    assert stb.key_entry(tab, slot, cnt, stb.TAB_CAP, 0, 0) == -1
    assert stb.key_entry(tab, slot, cnt, 17, 0, 0) == 17


def test_span_hash_twin():
    """span_hash: the formula of its docstring in Python integers mod 2^64."""
    M = (1 << 64) - 1
    K1, K2, K3 = int(stb._K1), int(stb._K2), int(stb._K3)

    def fold(h):
        return h ^ (h >> 29) ^ (h >> 47)

    def twin(b, seed, salt):
        h = ((seed & M) ^ ((salt * K3) & M) ^ len(b)) * K1 & M
        for q in range(0, len(b), 8):
            w = int.from_bytes(b[q:q + 8], "little")
            h = fold(((h ^ w) * K2) & M)
        return fold((h * K1) & M)

    rng = random.Random(9)
    for _ in range(500):
        b = bytes(rng.randrange(256) for _ in range(rng.randrange(0, 40)))
        seed, salt = rng.randrange(2 ** 62), rng.randrange(5)
        buf = _b(b"..." + b + b"...")
        assert int(stb.span_hash(buf, 3, len(b), seed, salt)) == twin(b, seed, salt)


def test_event_lengths_twin():
    stack = np.empty(64, np.uint8)
    evs = [{"a": 1}, {"b": [1, {"c": "}"}]}, {}, {"s": "x\\\"y"}]
    text = ", ".join(json.dumps(e) for e in evs)
    offs, q = [], 0
    dec = json.JSONDecoder()
    lens = []
    while q < len(text):
        if text[q] == "{":
            _, end = dec.raw_decode(text, q)
            offs.append(q)
            lens.append(end - q)
            q = end
        else:
            q += 1
    got = stb.event_lengths(_b(text.encode()), np.array(offs, np.int64), stack)
    assert got.tolist() == lens


# ------------------------------------------------------------------ events
def _events(rng, n):
    evs = []
    for _ in range(n):
        ph = rng.choice("Cstf")
        e = {"ph": ph, "pid": rng.randrange(3), "tid": rng.randrange(4), "ts": rng.choice(
            [rng.randrange(10 ** 6), round(rng.random() * 1e4, rng.randrange(1, 6))])}
        if ph == "C":
            e["name"] = rng.choice(["mem", "gc", "cpu \\u00e9"])
            if rng.random() < 0.3:
                e["id"] = rng.randrange(5)
            e["args"] = {k: rng.choice([rng.randrange(-99, 99), round(rng.random(), 6)]) for k in
                         rng.sample(["rss", "heap", "n", "x"], rng.randrange(0, 4))}
        else:
            e["cat"] = rng.choice(["flow", "io"])
            e["name"] = "f"
            e["id"] = rng.choice([rng.randrange(50), "0x%x" % rng.randrange(50)])
            if ph == "f" and rng.random() < 0.5:
                e["bp"] = "e"
        evs.append(e)
    return evs


def test_side_run_twin():
    """side_run over a run of counter and flow events: every event taken, the samples and flow
    events json.loads reads (ts, values, keys, ids as jsonevent hashes them, phase, bp)."""
    rng = random.Random(10)
    stack = np.empty(64, np.uint8)
    evs = _events(rng, 400)
    parts = []
    for e in evs:
        items = list(e.items())
        items = items[:1] + rng.sample(items[1:], len(items) - 1)  # ph first, the rest in any order
        parts.append("{" + rng.choice([",", ", "]).join(
            f"{json.dumps(k)}:{json.dumps(v).replace(chr(92) * 2, chr(92))}" for k, v in items) + "}")
    text = ("[" + ",\n".join(parts) + "]").encode()
    buf = _b(text + PAD)
    tab, slot, cnt, fl, ov, oi, os_, shp = _fx(cap=4096)
    p, seen, sep, taken = sh.side_run(buf, 1, 0, tab, slot, cnt, fl, ov, oi, os_, stack, shp, -1, 10 ** 9)
    assert taken == len(evs) and seen == len(evs) and sep and text[p:p + 1] == b"]"
    decoded = json.loads(text)
    ns = nf = 0
    for e in decoded:
        if e["ph"] == "C":
            for k, v in e["args"].items():
                r = oi[0, ns]  # the series entry, its key's span in the table
                kb = bytes(buf[tab[stb.T_SER, r, stb.RF_KOFF]:tab[stb.T_SER, r, stb.RF_KOFF]
                               + tab[stb.T_SER, r, stb.RF_KLEN]])
                assert kb.decode() == k
                assert ov[0, ns] == e["ts"] and ov[1, ns] == v
                ns += 1
        else:
            assert ov[2, nf] == e["ts"]
            fid = e["id"]
            idb = json.dumps(fid).encode()
            want = jt.fnv1a(_b(idb), 1, len(idb) - 2) if isinstance(fid, str) else fid
            assert oi[2, nf] == want
            assert os_[stb.FO_CODE, nf] == ord(e["ph"]) | (ord(e.get("bp", "\0")) << 8 if "bp" in e else 0)
            nf += 1
    assert cnt[stb.C_SAMPLES] == ns and cnt[stb.C_FLOWS] == nf


def _shaped_text(rng, n):
    """``n`` counter and flow events from a few templates (as a writer makes them), with the
    variations that must break a shape or change its entries: other spacing, names, threads,
    ids (numbers and strings), keys, more pairs or values than a shape holds, numbers off the
    exact path (1e400, NaN, 0.1e1), strings for numbers, escapes, a flow without an id; and
    (event offsets)."""
    many = "{" + ",".join(f'"k{q}":{q}' for q in range(10)) + "}"
    templates = [
        '{{"ph":"C","name":"{name}","pid":{pid},"ts":{ts},"args":{{"rss":{v},"heap":{w}}}}}',
        '{{"ph":"C","name":"{name}","pid":{pid},"ts":{ts},"args":{{"load":{v}}}}}',
        '{{"ph":"C","name":"{name}","id":{id},"pid":{pid},"ts":{ts},"args":{{"collected":{v}}}}}',
        '{{"ph": "C", "name": "{name}", "pid": {pid}, "tid": {tid}, "ts": {ts}, "args": {{}}}}',
        '{{"ph":"C","name":"{name}","pid":{pid},"ts":{ts},"args":' + many.replace("{", "{{").replace("}", "}}")
        + '}}',
        '{{"ph":"s","pid":{pid},"tid":{tid},"cat":"{cat}","name":"{name}","id":{id},"ts":{ts}}}',
        '{{"ph":"f","pid":{pid},"tid":{tid},"cat":"{cat}","name":"{name}","id":{id},"ts":{ts},"bp":"e"}}',
        '{{"ph":"t","pid":{pid},"tid":{tid},"id":{id},"ts":{ts},"tts":{v},"args":{{"a":[{w}]}}}}',
        '{{"ph":"s","pid":{pid},"tid":{tid},"cat":"{cat}","ts":{ts}}}',  # no id: declined
        '{{"ph":"X","name":"{name}","pid":{pid},"tid":{tid},"ts":{ts},"dur":1}}',  # a call
    ]
    odd_numbers = ["1e400", "NaN", "0.1e1", '"7"', "-0", "12345678901234567890", "1.5"]
    parts = []
    for _ in range(n):
        t = rng.choice(templates[:5] * 3 + templates[5:]) if rng.random() < 0.9 else rng.choice(templates)
        def num():
            return str(rng.choice([rng.randrange(10 ** 6), round(rng.random() * 1e4, rng.randrange(1, 6))]))

        vals = dict(name=rng.choice(["memory", "cpu", "gc", "memory", "m\\u00e9m"]),
                    cat=rng.choice(["flow", "flow", "ac2g"]), pid=rng.choice([1, 1, 1, 2, -3]),
                    tid=rng.choice([1, 1, 2, 7]), ts=num(), v=num(), w=num(),
                    id=rng.choice([str(rng.randrange(50)), '"0x%x"' % rng.randrange(50)]))
        if rng.random() < 0.05:
            vals[rng.choice(["pid", "tid", "ts", "v", "w", "id"])] = rng.choice(odd_numbers)
        ev = t.format(**vals)
        if rng.random() < 0.03:
            ev = ev.replace(",", ", ", 1)
        parts.append(ev)
    text = "[" + ",\n".join(parts) + "]"
    offs = [1]
    for ev in parts[:-1]:
        offs.append(offs[-1] + len(ev) + 2)
    return text.encode(), offs


@pytest.mark.parametrize("seed", [1, 2, 3])
def test_shapes_take_what_scan_fast_takes(seed):
    """Every event through the shapes (`sideshape`) against every event through `scan_fast`
    alone (the brute-force twin): the same events taken, the same outputs, entries and counts."""
    from tracevis3d.kernels import sidetables as tb

    rng = random.Random(seed)
    text, offs = _shaped_text(rng, 3000)
    buf = _b(text + PAD)
    stack = np.empty(64, np.uint8)
    a, b = _fx(cap=1 << 16), _fx(cap=1 << 16)
    ends_a, ends_b = [], []
    for k, off in enumerate(offs):
        ends_a.append(ss.scan_fast(buf, off, k, *a[:7], stack, a[7]))
        ends_b.append(sh._take_one(buf, off, k, *b[:7], stack, b[7]))
    assert ends_a == ends_b
    assert sum(e >= 0 for e in ends_a) > len(offs) // 2
    shp = b[7]
    assert shp[tb.N_SHAPES, tb.RC_CLOCK] > len(offs) // 3  # the shapes took events
    tab_a, slot_a, cnt_a, fl_a, ov_a, oi_a, os_a, _ = a
    tab_b, slot_b, cnt_b, fl_b, ov_b, oi_b, os_b, _ = b
    assert cnt_a.tolist() == cnt_b.tolist()
    assert np.array_equal(tab_a, tab_b) and np.array_equal(slot_a, slot_b) and np.array_equal(fl_a, fl_b)
    m, f = cnt_a[tb.C_SAMPLES], cnt_a[tb.C_FLOWS]
    assert np.array_equal(ov_a[:2, :m].view(np.int64), ov_b[:2, :m].view(np.int64))
    assert np.array_equal(oi_a[:2, :m], oi_b[:2, :m])
    assert np.array_equal(ov_a[2, :f].view(np.int64), ov_b[2, :f].view(np.int64))
    assert np.array_equal(oi_a[2:, :f], oi_b[2:, :f]) and np.array_equal(os_a[:, :f], os_b[:, :f])


def test_a_shape_is_not_taken_by_other_bytes():
    """A shape made of one event takes the next only where every literal matches: other spacing,
    another key, a longer last literal, the end of the bytes, a cut event."""
    stack = np.empty(64, np.uint8)
    first = b'{"ph":"C","name":"m","pid":1,"ts":1.5,"args":{"a":1}}'
    for other, taken in [(b'{"ph":"C","name":"m","pid":1,"ts":2.25,"args":{"a":7}}', True),
                         (b'{"ph":"C","name":"cpu","pid":9,"ts":2,"args":{"a":-7}}', True),
                         (b'{"ph":"C", "name":"m","pid":1,"ts":2,"args":{"a":1}}', False),
                         (b'{"ph":"C","name":"m","pid":1,"ts":2,"args":{"b":1}}', False),
                         (b'{"ph":"C","name":"m","pid":1,"ts":2,"args":{"a":1},"x":0}', False),
                         (b'{"ph":"C","name":"m","pid":1,"ts":2,"args":{"a":1', False)]:
        text = first + b",\n" + other
        fx = _fx()
        for pad in (PAD, b""):
            buf = _b(text + pad)
            fx = _fx()
            assert sh._take_one(buf, 0, 0, *fx[:7], stack, fx[7]) == len(first)
            s = fx[7][stb.N_SHAPES, stb.RC_LAST]
            assert s == 0
            got = sh.shape_take(buf, len(first) + 2, 1, fx[7], s, *fx[:7], stack)
            assert (got == len(text)) == taken, (other, pad)


@pytest.mark.parametrize("ev", [
    '{"ph":"X","name":"a","pid":1,"tid":1,"ts":1,"dur":1}',  # not a side event
    '{"name":"m","ph":"C","pid":1,"ts":1,"args":{}}',  # ph not first
    '{"ph":"C","pid":1,"ts":1,"args":{"a":1}}',  # no name
    '{"ph":"C","name":"m","pid":1,"ts":NaN,"args":{}}',
    '{"ph":"C","name":"m","pid":1.5,"ts":1,"args":{}}',
    '{"ph":"C","name":"m","pid":1,"ts":1,"args":{"a":"x"}}',
    '{"ph":"s","cat":"c","name":"f","pid":1,"ts":1}',  # a flow without an id
    '{"ph":"s","cat":"c","name":"f","pid":1,"ts":1,"id":1,"id":2}',  # a key twice
    '{"ph":"t","cat":"c","pid":1,"ts":1,"id":1,"bind_id":3}',
    '{"ph":"C","name":"m","pid":1,"ts":1e400,"args":{}}',
])
def test_scan_fast_declines(ev):
    """Forms the general path reads are declined, nothing taken."""
    stack = np.empty(64, np.uint8)
    buf = _b(ev.encode() + b"]" + PAD)
    tab, slot, cnt, fl, ov, oi, os_, shp = _fx()
    assert ss.scan_fast(buf, 0, 0, tab, slot, cnt, fl, ov, oi, os_, stack, shp) == -1
    assert cnt[stb.C_SAMPLES] == 0 and cnt[stb.C_FLOWS] == 0


# ------------------------------------------------------------------ flow chains
def test_chain_keys_twin():
    rng = random.Random(11)
    for n, span, ncat in ((0, 1, 1), (1, 1, 1), (500, 100, 3), (500, 10 ** 9, 2), (3000, 3000, 1)):
        cat = np.array([rng.randrange(ncat) for _ in range(n)], np.int32)
        fid = np.array([rng.randrange(span) - span // 3 for _ in range(n)], np.int64)
        keys, ok = fc.chain_keys(cat, fid, ncat)
        if not ok:
            assert (int(fid.max()) - int(fid.min())) * ncat >= fc.SLOTS_PER_EVENT * n
            continue
        d = {}
        assert keys.tolist() == [d.setdefault((int(c), int(f)), len(d)) for c, f in zip(cat, fid)]
    keys, ok = fc.chain_keys(np.zeros(2, np.int32), np.array([-2 ** 63, 2 ** 63 - 1], np.int64), 1)
    assert not ok


def test_chain_edges_twin():
    rng = random.Random(12)
    n = 2000
    fk = np.array([rng.randrange(60) for _ in range(n)], np.int32)
    ph = np.array([ord(rng.choice("stf")) for _ in range(n)], np.int32)
    bound = np.array([rng.choice([-1, rng.randrange(100)]) for _ in range(n)], np.int32)
    fid = np.array([rng.randrange(10 ** 6) for _ in range(n)], np.int64)
    cat = np.array([rng.randrange(3) for _ in range(n)], np.int32)
    o = np.array(sorted(range(n), key=lambda k: (fk[k], rng.random())), np.int64)
    want = []
    for a, b in zip(o[:-1], o[1:]):
        if fk[a] == fk[b] and bound[a] >= 0 and bound[b] >= 0 and chr(ph[a]) in "st" and chr(ph[b]) in "tf":
            want.append((fid[a], bound[a], bound[b], cat[a] + 1))
    got = fc.chain_edges(fk, o, ph, bound, fid, cat)
    assert list(zip(*[g.tolist() for g in got])) == [tuple(int(x) for x in w) for w in want]


def test_the_scan_takes_a_writers_runs_by_their_shapes():
    """The parallel scan's parts (`chrome_rows.scan_part`) take a writer's runs of counter and
    flow events by their shapes, not event by event through `scan_fast`: the shapes' clock
    (one tick per event a shape took) counts nearly all of them, PyTorch's spacing included."""
    from tracevis3d.io import chrome_rows

    for sep, colon in ((",", ":"), (", ", ": ")):
        evs = []
        for k in range(3000):
            c = k % 5
            if c == 0:
                evs.append(f'{{"ph"{colon}"C"{sep}"name"{colon}"memory"{sep}"pid"{colon}1{sep}"ts"{colon}{k}.5{sep}'
                           f'"args"{colon}{{"rss"{colon}{k * 7}{sep}"heap"{colon}{k}}}}}')
            elif c == 1:
                evs.append(f'{{"ph"{colon}"C"{sep}"name"{colon}"cpu"{sep}"pid"{colon}1{sep}"ts"{colon}{k}.5{sep}'
                           f'"args"{colon}{{"load"{colon}{k % 100}.25}}}}')
            else:
                ph = "sf"[c % 2]
                evs.append(f'{{"ph"{colon}"{ph}"{sep}"id"{colon}{k}{sep}"pid"{colon}7{sep}"tid"{colon}{k % 3}{sep}'
                           f'"ts"{colon}{k}{sep}"cat"{colon}"async_cpu_to_gpu"{sep}"name"{colon}"async_gpu"'
                           + (f'{sep}"bp"{colon}"e"' if ph == "f" else "") + "}")
        buf = _b(("[" + ",\n  ".join(evs) + "]").encode())
        part, end, status, _, seen = chrome_rows.scan_part(buf, 1, -1, 10 ** 6, 64, 7, 1e18)
        assert seen == len(evs) and part.fast.n == len(evs)
        shp = part.fast.fx[7]
        assert shp[stb.N_SHAPES, stb.RC_CLOCK] == len(evs) and shp[stb.N_SHAPES, stb.RC_MADE] <= 8, sep
