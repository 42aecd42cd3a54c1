/* A small real C program for the native profilers (callgrind, perf, uftrace): a recursive
 * quicksort, a binary tree built, walked and freed recursively, a hash table of words, fib,
 * in the main thread and two worker threads (pthreads).
 *
 *     gcc -O1 -g -fno-omit-frame-pointer -pthread -o native_work native_work.c && ./native_work [SCALE]
 */
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

struct node { int key; struct node *left, *right; };

static struct node *insert(struct node *t, int key) {
    if (!t) { t = calloc(1, sizeof *t); t->key = key; return t; }
    if (key < t->key) t->left = insert(t->left, key); else t->right = insert(t->right, key);
    return t;
}
static long walk(const struct node *t, int depth) {
    return t ? depth + walk(t->left, depth + 1) + walk(t->right, depth + 1) : 0;
}
static void release(struct node *t) { if (t) { release(t->left); release(t->right); free(t); } }

static void swap(int *a, int *b) { int t = *a; *a = *b; *b = t; }
static int partition(int *a, int lo, int hi) {
    int p = a[hi], i = lo;
    for (int j = lo; j < hi; j++) if (a[j] < p) swap(&a[i++], &a[j]);
    swap(&a[i], &a[hi]);
    return i;
}
static void quicksort(int *a, int lo, int hi) {
    if (lo < hi) { int p = partition(a, lo, hi); quicksort(a, lo, p - 1); quicksort(a, p + 1, hi); }
}

static unsigned hash(const char *s) { unsigned h = 2166136261u; while (*s) h = (h ^ (unsigned char)*s++) * 16777619u; return h; }
#define BUCKETS 4096
struct entry { char word[16]; int count; struct entry *next; };
static long count_words(int n, unsigned seed) {
    struct entry *table[BUCKETS] = {0};
    long distinct = 0;
    for (int i = 0; i < n; i++) {
        char w[16];
        seed = seed * 1103515245u + 12345u;
        snprintf(w, sizeof w, "w%u", (seed >> 8) % 5000);
        unsigned b = hash(w) % BUCKETS;
        struct entry *e = table[b];
        while (e && strcmp(e->word, w)) e = e->next;
        if (!e) { e = calloc(1, sizeof *e); strcpy(e->word, w); e->next = table[b]; table[b] = e; distinct++; }
        e->count++;
    }
    for (int b = 0; b < BUCKETS; b++) while (table[b]) { struct entry *e = table[b]; table[b] = e->next; free(e); }
    return distinct;
}

static long fib(int n) { return n < 2 ? n : fib(n - 1) + fib(n - 2); }

static long tree_work(int n, unsigned seed) {
    struct node *t = NULL;
    for (int i = 0; i < n; i++) { seed = seed * 1103515245u + 12345u; t = insert(t, (int)(seed >> 4)); }
    long s = walk(t, 0);
    release(t);
    return s;
}

static long sort_work(int n, unsigned seed) {
    int *a = malloc(n * sizeof *a);
    for (int i = 0; i < n; i++) { seed = seed * 1103515245u + 12345u; a[i] = (int)(seed >> 1); }
    quicksort(a, 0, n - 1);
    long r = a[n / 2];
    free(a);
    return r;
}

static void *worker(void *arg) {
    long k = (long)arg;
    long s = tree_work(20000, (unsigned)k) + count_words(30000, (unsigned)k * 7);
    return (void *)s;
}

int main(int argc, char **argv) {
    int scale = argc > 1 ? atoi(argv[1]) : 1;
    pthread_t th[2];
    for (long k = 0; k < 2; k++) pthread_create(&th[k], NULL, worker, (void *)(k + 1));
    long s = sort_work(50000 * scale, 3) + tree_work(30000 * scale, 5) + count_words(40000 * scale, 9) + fib(22);
    for (int k = 0; k < 2; k++) { void *r; pthread_join(th[k], &r); s += (long)r; }
    printf("%ld\n", s);
    return 0;
}
