"""The open-addressing tables the text and profile scanners share (`kernels.textscan.table_of`,
`rehash`, `regrow`) against a brute-force twin: every key at the first free slot of its probe
sequence, in key order."""
import numpy as np

from tracevis3d.kernels import textscan


def _brute_table(hashes, n, cap):
    table = [-1] * cap
    for j in range(n):
        s = int(hashes[j]) % cap
        while table[s] >= 0:
            s = (s + 1) % cap
        table[s] = j
    return np.array(table, np.int64)


def test_table_of_is_linear_probing_in_key_order():
    rng = np.random.default_rng(5)
    for n, cap in [(0, 64), (1, 64), (20, 64), (31, 64), (500, 1024)]:
        hashes = rng.integers(0, 2 ** 63, n, dtype=np.int64).astype(np.uint64)
        hashes[: n // 3] = hashes[0] if n else 0  # a pile-up on one slot
        assert np.array_equal(textscan.table_of(hashes, n, cap), _brute_table(hashes, n, cap))


def test_rehash_and_regrow_sizes():
    hashes = np.arange(100, dtype=np.uint64) * np.uint64(0x9E3779B97F4A7C15)
    assert np.array_equal(textscan.rehash(hashes, 100), _brute_table(hashes, 100, 512))  # power of two >= 4n
    assert np.array_equal(textscan.rehash(hashes, 3), _brute_table(hashes, 3, 64))  # at least 64
    assert np.array_equal(textscan.regrow(hashes, 100, 128), _brute_table(hashes, 100, 512))  # 4 x a full table


def test_regrow_rows_reinserts_each_row_by_its_hash():
    rng = np.random.default_rng(9)
    cap = 64
    rows = np.full((cap, 4), -1, np.int64)
    for r in range(20):  # a quarter full, by linear probing
        h = int(rng.integers(0, 2 ** 62))
        q = h % cap
        while rows[q, 1] >= 0:
            q = (q + 1) % cap
        rows[q] = (h, r, 7 * r, -r)
    out = textscan.regrow_rows(rows)
    want = np.full((4 * cap, 4), -1, np.int64)
    for r in range(cap):  # the twin: the same rows in slot order, re-inserted
        if rows[r, 1] < 0:
            continue
        q = int(rows[r, 0]) % (4 * cap)
        while want[q, 1] >= 0:
            q = (q + 1) % (4 * cap)
        want[q] = rows[r]
    assert np.array_equal(out, want)
