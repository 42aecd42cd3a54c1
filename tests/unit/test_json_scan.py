"""`jsontokens.scan_string` (32 bytes at a time, `eq_mask32`) against its byte-by-byte twin,
on strings with quotes and backslashes at every offset of a 32-byte block, and near the end."""
import numpy as np

from tracevis3d.kernels.jsontokens import eq_mask32, scan_string  # noqa: F401  (eq_mask32: compiled below)


def _scan_string_bytes(buf: bytes, i: int) -> tuple:
    """The twin: from the opening quote at ``i``, byte by byte; an escape takes the next byte."""
    i += 1
    esc = False
    while i < len(buf):
        if buf[i] == 34:
            return i + 1, esc
        if buf[i] == 92:
            esc = True
            i += 2
            continue
        i += 1
    return -1, esc


def test_scan_string_matches_its_byte_by_byte_twin():
    rng = np.random.default_rng(7)
    alphabet = np.frombuffer(b'ab"\\\\xyz01 ', np.uint8)
    for trial in range(4000):
        n = int(rng.integers(1, 140))
        body = alphabet[rng.integers(0, alphabet.size, n)]
        if trial % 3 == 0:  # long runs of plain bytes: the 32-byte path
            body[rng.random(n) < 0.9] = ord("a")
        buf = np.concatenate([np.frombuffer(b'"', np.uint8), body]).astype(np.uint8)
        want = _scan_string_bytes(buf.tobytes(), 0)
        got = scan_string(buf, 0)
        assert (int(got[0]), bool(got[1])) == want, (trial, buf.tobytes(), got, want)


def test_quotes_and_escapes_at_every_offset_of_a_block():
    for q in range(70):
        for b in [None] + list(range(q)):
            body = bytearray(b"a" * 100)
            body[q] = ord('"')
            if b is not None:
                body[b] = ord("\\")
            buf = np.frombuffer(b'"' + bytes(body), np.uint8)
            want = _scan_string_bytes(buf.tobytes(), 0)
            got = scan_string(buf, 0)
            assert (int(got[0]), bool(got[1])) == want, (q, b, got, want)
    # a read-only buffer (np.frombuffer of bytes) and a cut-off string
    buf = np.frombuffer(b'"' + b"x" * 40, np.uint8)
    assert scan_string(buf, 0)[0] == -1
