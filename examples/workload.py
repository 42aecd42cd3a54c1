"""A small but real program to record and look at: a word-statistics pipeline.

A reader thread produces text chunks into a queue; worker threads tokenize them,
update shared counters under a lock and write partial results to files; the main
thread meanwhile runs a recursive computation and finally merges the results.
So the trace has deep recursion, repeated subtrees (the per-chunk pipeline), lock
waits and releases across threads, queue get/put pairs and file I/O: what the
TraceVis3D views are for.

    python -m viztracer -o out/workload.json examples/workload.py
"""
import collections
import os
import queue
import random
import re
import tempfile
import threading

WORDS = ("trace call stack thread lock queue render tube icicle bundle match group "
         "kernel layout scene camera light colour time depth wait release").split()
TOKEN = re.compile(r"[a-z]+")


def make_chunk(rng: random.Random, n_lines: int) -> str:
    return "\n".join(" ".join(rng.choice(WORDS) for _ in range(rng.randint(5, 12)))
                     for _ in range(n_lines))


def tokenize(text: str) -> list:
    return TOKEN.findall(text)


def count_words(tokens: list) -> collections.Counter:
    return collections.Counter(tokens)


class Stats:
    def __init__(self):
        self.lock = threading.Lock()
        self.total = collections.Counter()

    def merge(self, counts: collections.Counter) -> None:
        with self.lock:
            self.total.update(counts)


def write_partial(directory: str, name: str, counts: collections.Counter) -> str:
    path = os.path.join(directory, name)
    with open(path, "w") as f:
        for word, n in sorted(counts.items()):
            f.write(f"{word} {n}\n")
    return path


def read_partial(path: str) -> collections.Counter:
    out = collections.Counter()
    with open(path) as f:
        for line in f:
            word, n = line.split()
            out[word] += int(n)
    return out


def reader(q: queue.Queue, n_chunks: int, n_workers: int, seed: int) -> None:
    rng = random.Random(seed)
    for k in range(n_chunks):
        q.put((k, make_chunk(rng, rng.randint(3, 8))))
    for _ in range(n_workers):
        q.put(None)


def worker(q: queue.Queue, stats: Stats, directory: str, paths: list) -> None:
    while True:
        item = q.get()
        if item is None:
            break
        k, text = item
        counts = count_words(tokenize(text))
        stats.merge(counts)
        if k % 4 == 0:
            paths.append(write_partial(directory, f"part{k}.txt", counts))


def fib(n: int) -> int:
    return n if n < 2 else fib(n - 1) + fib(n - 2)


def merge_sort(xs: list) -> list:
    if len(xs) <= 1:
        return xs
    mid = len(xs) // 2
    a, b = merge_sort(xs[:mid]), merge_sort(xs[mid:])
    out, i, j = [], 0, 0
    while i < len(a) and j < len(b):
        if a[i] <= b[j]:
            out.append(a[i])
            i += 1
        else:
            out.append(b[j])
            j += 1
    return out + a[i:] + b[j:]


def main(n_chunks: int = 120, n_workers: int = 3) -> None:
    q: queue.Queue = queue.Queue(maxsize=8)
    stats = Stats()
    paths: list = []
    with tempfile.TemporaryDirectory() as directory:
        threads = [threading.Thread(target=reader, args=(q, n_chunks, n_workers, 7), name="reader")]
        threads += [threading.Thread(target=worker, args=(q, stats, directory, paths), name=f"worker-{i}")
                    for i in range(n_workers)]
        for t in threads:
            t.start()
        fib(15)
        data = merge_sort([random.Random(3).random() for _ in range(600)])
        for t in threads:
            t.join()
        merged = collections.Counter()
        for p in sorted(paths):
            merged.update(read_partial(p))
    top = stats.total.most_common(3)
    print(f"{sum(stats.total.values())} words, top {top}, {len(paths)} partial files, sorted {len(data)}")


if __name__ == "__main__":
    main()
