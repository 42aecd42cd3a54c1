"""A real multi-threaded program to trace: a document pipeline with five named threads.

What it does (stdlib only, deterministic structure, about 1 s untraced):

- **MainThread** generates batches of JSON documents (a fixed seed, so every run does the
  same work), hands each batch to a `concurrent.futures.ThreadPoolExecutor` with three
  workers named ``parse_0``, ``parse_1``, ``parse_2``, then waits on a `threading.Condition`
  until the writer reports the whole batch written ("batch written" barrier).
- Each **worker** (`process_document`) parses the JSON (`json.loads`), tokenizes its text
  with `re`, counts words, looks up stop-word stems in a shared cache guarded by an `RLock`
  (re-entered: `StemCache.stem` calls `StemCache._store` while holding it), adds to shared
  totals under a `Lock`, compresses (`zlib`) and signs (`hashlib.pbkdf2_hmac`, C code that
  releases the GIL) a canonical re-encoding (`json.dumps`), and puts the result on a
  `queue.Queue(maxsize=2)`.
- The **writer** thread (named ``writer``) takes results off the queue, writes each as a file
  into a temporary directory (with a short sleep that stands for a slow disk), and every
  time a batch is complete it notifies the Condition.  Because the queue holds only two
  results and the writer is slower than three workers, the workers block in `Queue.put`
  and the writer blocks in `Queue.get` between batches: real contention.
- At the end MainThread reads the files back, checks the hashes, prints a summary and
  removes the directory.

What a trace of it shows (VizTracer: ``python -m viztracer -o t.json
examples/threads_pipeline.py``): five threads (MainThread, parse_0..2, writer); in the
workers, a repeated subtree per document (``json.loads`` → the decoder, ``re`` tokenizing,
``StemCache.stem``, ``zlib.compress``, ``sign`` → ``pbkdf2_hmac``, ``json.dumps`` → the encoder); waits:
``Queue.put``/``Queue.get`` → ``Condition.wait`` → ``lock.acquire`` in workers and writer,
``Condition.wait`` of MainThread on the batch barrier, ``Future.result``/executor shutdown;
lock ``acquire``/``release`` pairs; file I/O (``open``/``write``/``read``) in the writer and
at the end in MainThread.  ``--docs`` and ``--batch`` change the size.
"""
from __future__ import annotations

import argparse
import collections
import concurrent.futures
import hashlib
import json
import os
import queue
import random
import re
import shutil
import tempfile
import threading
import time
import zlib

WORDS = ("trace call stack thread lock queue render tube icicle bundle match group kernel layout "
         "scene camera light colour time depth wait release parse encode decode compress hash "
         "write read batch notify condition worker writer pipeline document").split()
RING = WORDS + WORDS  # sentences are runs of words from a random start: few calls per sentence
TOKEN = re.compile(r"[a-z]+")
SENTENCE = re.compile(r"[^.!?]+[.!?]")
STOP = ("the", "a", "of", "to", "and")
SIGN_ROUNDS = 20_000
WRITE_DELAY = 0.012  # seconds per file: a slow disk


def make_document(rng: random.Random, doc_id: int) -> str:
    """One JSON document: a title, tags, nested sections of sentences."""
    def sentence() -> str:
        k = rng.randrange(len(WORDS))
        return " ".join(RING[k: k + rng.randint(6, 14)]).capitalize() + "."

    doc = {
        "id": doc_id,
        "title": " ".join(rng.choice(WORDS) for _ in range(4)),
        "tags": sorted({rng.choice(WORDS) for _ in range(5)}),
        "sections": [
            {"heading": sentence(), "paragraphs": [" ".join(sentence() for _ in range(rng.randint(3, 6)))
                                                   for _ in range(rng.randint(2, 4))],
             "meta": {"weight": rng.random(), "order": k}}
            for k in range(rng.randint(3, 5))
        ],
    }
    return json.dumps(doc)


class StemCache:
    """A word → stem cache shared by the workers, guarded by a re-entrant lock."""

    def __init__(self):
        self.lock = threading.RLock()
        self.stems: dict = {}
        self.hits = 0

    def stem(self, word: str) -> str:
        with self.lock:
            s = self.stems.get(word)
            if s is not None:
                self.hits += 1
                return s
            s = self._compute(word)
            self._store(word, s)  # re-enters the RLock
            return s

    @staticmethod
    def _compute(word: str) -> str:
        for suffix in ("ing", "ed", "es", "s", "er"):
            if word.endswith(suffix) and len(word) > len(suffix) + 2:
                return word[: -len(suffix)]
        return word

    def _store(self, word: str, s: str) -> None:
        with self.lock:
            self.stems[word] = s


class Totals:
    """Word counts over all documents, guarded by a plain lock."""

    def __init__(self):
        self.lock = threading.Lock()
        self.words = collections.Counter()
        self.documents = 0

    def add(self, counts: collections.Counter) -> None:
        with self.lock:
            self.words.update(counts)
            self.documents += 1


class Pipeline:
    """The shared state: cache, totals, the bounded queue and the batch barrier."""

    def __init__(self, out_dir: str):
        self.out_dir = out_dir
        self.cache = StemCache()
        self.totals = Totals()
        self.results: queue.Queue = queue.Queue(maxsize=2)
        self.written = 0
        self.batch_done = threading.Condition()

    # ---------------------------------------------------------------- workers
    def process_document(self, text: str) -> str:
        doc = json.loads(text)
        body = " ".join(p for s in doc["sections"] for p in s["paragraphs"])
        sentences = SENTENCE.findall(body)
        tokens = [t for t in TOKEN.findall(body.lower()) if t not in STOP]
        stems = collections.Counter(self.cache.stem(t) for t in tokens)
        self.totals.add(stems)
        summary = {"id": doc["id"], "title": doc["title"], "sentences": len(sentences),
                   "top": stems.most_common(5), "tags": doc["tags"]}
        canonical = json.dumps(summary, sort_keys=True).encode()
        packed = zlib.compress(canonical + text.encode(), 6)
        digest = sign(packed)
        self.results.put((doc["id"], digest, packed))  # blocks while the writer is behind
        return digest

    # ----------------------------------------------------------------- writer
    def writer(self, n_total: int, batch: int) -> None:
        for _ in range(n_total):
            doc_id, digest, packed = self.results.get()  # blocks when the queue is empty
            path = os.path.join(self.out_dir, f"doc{doc_id:04d}.z")
            with open(path, "wb") as f:
                f.write(packed)
            time.sleep(WRITE_DELAY)  # a slow disk: the workers fill the queue and block in put
            with self.batch_done:
                self.written += 1
                if self.written % batch == 0 or self.written == n_total:
                    self.batch_done.notify_all()

    def wait_written(self, n: int) -> None:
        with self.batch_done:
            self.batch_done.wait_for(lambda: self.written >= n)


def sign(packed: bytes) -> str:
    """A slow keyed digest (PBKDF2-SHA256; C code that releases the GIL, so workers overlap)."""
    return hashlib.pbkdf2_hmac("sha256", packed, b"threads-pipeline", SIGN_ROUNDS).hex()


def verify(out_dir: str, digests: dict) -> int:
    """Read every file back and check its hash; return the number of bytes read."""
    total = 0
    for doc_id, digest in sorted(digests.items()):
        with open(os.path.join(out_dir, f"doc{doc_id:04d}.z"), "rb") as f:
            packed = f.read()
        if sign(packed) != digest:
            raise RuntimeError(f"doc{doc_id:04d}.z: hash mismatch")
        zlib.decompress(packed)
        total += len(packed)
    return total


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n", 1)[0])
    ap.add_argument("--docs", type=int, default=48, help="documents in all (default 48)")
    ap.add_argument("--batch", type=int, default=12, help="documents per batch (default 12)")
    args = ap.parse_args(argv)
    rng = random.Random(8)
    out_dir = tempfile.mkdtemp(prefix="threads-pipeline-")
    t0 = time.perf_counter()
    try:
        p = Pipeline(out_dir)
        writer = threading.Thread(target=p.writer, args=(args.docs, args.batch), name="writer")
        writer.start()
        digests: dict = {}
        with concurrent.futures.ThreadPoolExecutor(max_workers=3, thread_name_prefix="parse") as pool:
            for first in range(0, args.docs, args.batch):
                ids = range(first, min(first + args.batch, args.docs))
                texts = [make_document(rng, i) for i in ids]
                futures = {i: pool.submit(p.process_document, t) for i, t in zip(ids, texts)}
                for i, fut in futures.items():
                    digests[i] = fut.result()
                p.wait_written(ids[-1] + 1)  # the batch barrier (Condition)
        writer.join()
        n_bytes = verify(out_dir, digests)
    finally:
        shutil.rmtree(out_dir, ignore_errors=True)
    print(f"threads_pipeline: {p.totals.documents} documents, {len(p.totals.words)} stems, "
          f"{p.cache.hits} cache hits, {n_bytes} bytes written, {time.perf_counter() - t0:.2f} s")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
