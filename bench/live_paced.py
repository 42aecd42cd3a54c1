"""A program for bench_live.py: about ``rate`` events per second of a tiny function for
``seconds`` seconds (calls in bursts every millisecond)."""
import sys
import time


def tiny(i):
    return i + 1


def main(rate: float, seconds: float):
    per_ms = max(1, int(rate / 2 / 1000))  # 2 events per call
    t0 = time.perf_counter()
    k = 0
    s = 0
    while True:
        now = time.perf_counter() - t0
        if now >= seconds:
            break
        due = k * 0.001
        if now < due:
            time.sleep(due - now)
        for i in range(per_ms):
            s = tiny(s)
        k += 1
    print(s)


main(float(sys.argv[1]), float(sys.argv[2]))
