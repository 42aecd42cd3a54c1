
import json


def fib(n):
    return n if n < 2 else fib(n - 1) + fib(n - 2)


class Codec:
    def round_trip(self, doc):
        return json.loads(json.dumps(doc, sort_keys=True))


def helper(k):
    return sum(i * i for i in range(k))


def build():
    return [{"k": i, "v": [helper(50), str(i)]} for i in range(3000)]


def main():
    doc = build()
    for _ in range(3):
        Codec().round_trip(doc)
    fib(18)
    helper(20000)


main()
