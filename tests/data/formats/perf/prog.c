/* A small real program to record: recursion, two worker threads, a child process. */
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/wait.h>
#include <unistd.h>

static volatile double sink;

__attribute__((noinline)) static double leaf_work(int n) {
    double s = 0;
    for (int i = 0; i < n; i++) s += (double)i * 0.5 / (i + 1);
    return s;
}

__attribute__((noinline)) static double fib_like(int depth) {
    if (depth <= 0) return leaf_work(2000);
    return fib_like(depth - 1) + (depth % 2 ? fib_like(depth - 2) : 0.0);
}

__attribute__((noinline)) static double parse_block(int k) { return leaf_work(3000 + 100 * (k % 7)); }

__attribute__((noinline)) static double compress_block(int k) {
    double s = 0;
    for (int i = 0; i < 3; i++) s += parse_block(k + i);
    return s + leaf_work(5000);
}

static void *worker(void *arg) {
    long id = (long)arg;
    double s = 0;
    for (int k = 0; k < 1500; k++) s += id ? compress_block(k) : fib_like(8);
    sink = s;
    return NULL;
}

int main(void) {
    pid_t child = fork();
    if (child == 0) {
        double s = 0;
        for (int k = 0; k < 3000; k++) s += parse_block(k);
        sink = s;
        return 0;
    }
    pthread_t t[2];
    for (long i = 0; i < 2; i++) pthread_create(&t[i], NULL, worker, (void *)i);
    double s = 0;
    for (int k = 0; k < 400; k++) s += compress_block(k);
    sink = s;
    for (int i = 0; i < 2; i++) pthread_join(t[i], NULL);
    waitpid(child, NULL, 0);
    printf("%f\n", sink);
    return 0;
}
