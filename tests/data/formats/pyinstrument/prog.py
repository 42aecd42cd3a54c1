import time
def leaf_work(n):
    s = 0
    for i in range(n):
        s += i * i
    return s
def middle(k):
    return sum(leaf_work(20000) for _ in range(k))
def sleeper():
    time.sleep(0.05)
def main():
    t = time.time()
    while time.time() - t < 1.0:
        middle(5)
        sleeper()
if __name__ == "__main__":
    main()
