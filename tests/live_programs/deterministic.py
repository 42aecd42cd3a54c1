"""A deterministic program for the live-feed tests: recursion, C calls, a generator, an
exception, a class, and three named threads run one after another (same calls every run)."""
import threading


def fib(n):
    return n if n < 2 else fib(n - 1) + fib(n - 2)


class Counter:
    def __init__(self):
        self.words = {}

    def add(self, text):
        for w in text.split():
            self.words[w] = self.words.get(w, 0) + 1


def numbers(n):
    for i in range(n):
        yield i * i


def risky(x):
    try:
        return int(x)
    except ValueError:
        return -1


def work(k):
    c = Counter()
    total = 0
    for i in range(20):
        c.add(f"alpha beta gamma {i % 3} {k}")
        total += fib(6 + k) + sum(numbers(5)) + risky("12" if i % 2 else "x")
    return total, sorted(c.words)[:2]


def main():
    for k in range(3):
        t = threading.Thread(target=work, args=(k,), name=f"worker-{k}")
        t.start()
        t.join()
    print(work(0)[0])


main()
