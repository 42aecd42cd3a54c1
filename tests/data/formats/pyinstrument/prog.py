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
    # until this process has computed for 0.3 s of its own CPU time (not the wall clock: on a
    # busy machine a second of wall time may hold almost none of it, and a sampler saw no work)
    t, c = time.time(), time.process_time()
    while time.process_time() - c < 0.3 and time.time() - t < 60.0:
        middle(20)
        sleeper()
if __name__ == "__main__":
    main()
