"""A program that runs for a while inside the same two calls (the late-viewer test): a
viewer that joins after ``main`` and ``work`` began must still see them (OPEN)."""
import sys
import time


def tick(i):
    return i * 2


def work(seconds):
    print("working", file=sys.stderr, flush=True)  # the late-viewer test joins a while after this
    end = time.monotonic() + seconds
    n = 0
    while time.monotonic() < end:
        n = (n + tick(n)) % 7
        time.sleep(0.002)
    return n


def main():
    print(work(float(sys.argv[1]) if len(sys.argv) > 1 else 2.0))


main()
