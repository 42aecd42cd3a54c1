"""Many small calls (the flood / no-viewer tests): N calls of a tiny function."""
import sys


def tiny(i):
    return i + 1


def main(n):
    s = 0
    for i in range(n):
        s = tiny(s)
    print(s)


main(int(sys.argv[1]) if len(sys.argv) > 1 else 200000)
