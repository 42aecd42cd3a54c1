"""A small multi-threaded program whose hand-offs are known, recorded by the tests with
VizTracer ``--log_func_args`` (tests/test_synchronisation.py).

- ``consumer`` takes ITEMS items off an unbounded ``queue.Queue``; ``producer`` sleeps
  GAP seconds before each ``put``, so every ``Queue.get`` of the consumer is waiting when
  the matching ``put`` starts: ITEMS hand-offs producer → consumer, the k-th put ending
  the k-th get;
- MainThread waits on the Condition ``done`` until the consumer has taken every item; the
  consumer's ``notify_all`` ends that wait: one hand-off consumer → MainThread;
- starting a thread makes MainThread wait on the thread's ``_started`` Event, set by the
  new thread (a hand-off started thread → MainThread, if the wait began before the set).
Nothing else synchronises (``join`` waits in C on the thread state lock: invisible).
"""
import queue
import sys
import threading
import time

ITEMS = 6
GAP = 0.02


def main(items: int = ITEMS) -> int:
    q: queue.Queue = queue.Queue()
    done = threading.Condition()
    state = {"taken": 0}

    def consume():
        for _ in range(items):
            q.get()
        with done:
            state["taken"] = items
            done.notify_all()

    def produce():
        for k in range(items):
            time.sleep(GAP)
            q.put(k)

    consumer = threading.Thread(target=consume, name="consumer")
    producer = threading.Thread(target=produce, name="producer")
    consumer.start()
    producer.start()
    with done:
        while state["taken"] < items:
            done.wait()
    producer.join()
    consumer.join()
    return 0


if __name__ == "__main__":
    sys.exit(main(int(sys.argv[1]) if len(sys.argv) > 1 else ITEMS))
