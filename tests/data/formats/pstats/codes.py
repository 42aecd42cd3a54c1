"""Constants of every kind a code object may hold, and nested code objects."""


def f(x=10 ** 100, y=(1, 2.5, 3j, ..., b"x", None, True)):
    def g(v):
        return v in {1, 2, "a"}

    return [g(v) for v in (x, y, -(2 ** 70))]


f()
