import json
def fib(n):
    return n if n < 2 else fib(n - 1) + fib(n - 2)
def main():
    d = [{"k": i} for i in range(20000)]
    json.loads(json.dumps(d))
    fib(16)
main()
