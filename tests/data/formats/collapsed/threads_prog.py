"""A small real Python program with two worker threads, recorded with py-spy (raw, --threads)."""
import threading


def leaf(n):
    s = 0
    for i in range(n):
        s += i * i % 7
    return s


def parse(k):
    return leaf(20000 + k % 5 * 1000)


def compress(k):
    return sum(parse(k + i) for i in range(3)) + leaf(30000)


def worker(rounds):
    for k in range(rounds):
        compress(k)


threads = [threading.Thread(target=worker, args=(60,), name=f"worker-{i}") for i in range(2)]
for t in threads:
    t.start()
for k in range(40):
    parse(k)
for t in threads:
    t.join()
