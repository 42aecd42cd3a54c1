"""A CPU-bound program of pure-Python standard library code for the tracer overhead
(bench_live.py): difflib on generated texts, fractions, a recursive walk, two threads."""
import difflib
import fractions
import random
import sys
import threading


def texts(seed, n):
    rng = random.Random(seed)
    words = "trace call stack thread lock queue render tube icicle bundle match".split()
    return [" ".join(rng.choice(words) for _ in range(12)) for _ in range(n)]


def diff_work(seed, n):
    a, b = texts(seed, n), texts(seed + 1, n)
    return sum(len(list(difflib.unified_diff(a[i:i + 20], b[i:i + 20]))) for i in range(0, n, 20))


def harmonic(n):
    return sum(fractions.Fraction(1, k) for k in range(1, n))


def walk(d):
    return 1 if d == 0 else walk(d - 1) + walk(d - 1)


def main(scale):
    t = threading.Thread(target=diff_work, args=(2, 300 * scale), name="differ")
    t.start()
    r = diff_work(1, 300 * scale), harmonic(120 * scale), walk(16)
    t.join()
    print(r[0], r[2])


main(int(sys.argv[1]) if len(sys.argv) > 1 else 60)
