"""A small real Python program for the sampling profilers (py-spy, pyinstrument): JSON round
trips of a nested document and a recursive walk of it, difflib, regular expressions, sorting,
in the main thread and in a pool of 3 worker threads behind a lock (~2 s).

    python sampled_work.py [ROUNDS]
"""
import difflib
import json
import random
import re
import sys
import threading
from concurrent.futures import ThreadPoolExecutor


def tree(depth, rng):
    if depth == 0:
        return {"v": rng.random()}
    return {"v": rng.random(), "kids": [tree(depth - 1, rng) for _ in range(3)]}


def walk(node):
    return node["v"] + sum(walk(k) for k in node.get("kids", ()))


def json_work(seed):
    doc = tree(7, random.Random(seed))
    return walk(json.loads(json.dumps(doc)))


def diff_work(seed):
    rng = random.Random(seed)
    a = [f"line {i} {rng.randint(0, 9)}" for i in range(1500)]
    b = sorted(a, key=lambda s: (len(s), s))
    return len(list(difflib.unified_diff(a, b, lineterm="")))


def regex_work(seed):
    text = "\n".join(f"user{i}@host{i % 17}.example.org said {i * seed} words" for i in range(20000))
    return len(re.findall(r"(\w+)@(\w+)\.example\.org said (\d+)", text))


def sort_work(seed):
    rng = random.Random(seed)
    words = ["".join(rng.choice("abcdefghij") for _ in range(8)) for _ in range(40000)]
    return sorted(words, key=str.lower)[len(words) // 2]


JOBS = [json_work, diff_work, regex_work, sort_work]


def main(rounds):
    lock = threading.Lock()
    results = []

    def run(k):
        r = JOBS[k % len(JOBS)](k)
        with lock:
            results.append(r)

    with ThreadPoolExecutor(3, thread_name_prefix="worker") as pool:
        futures = [pool.submit(run, k) for k in range(3 * rounds)]
        for k in range(rounds):  # the main thread works too
            run(k + 1)
        for f in futures:
            f.result()
    print(len(results))


if __name__ == "__main__":
    main(int(sys.argv[1]) if len(sys.argv) > 1 else 8)
