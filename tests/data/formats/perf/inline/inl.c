#include <stdio.h>
#include <stdlib.h>
static inline unsigned mix(unsigned x) { for (int k = 0; k < 64; k++) x = x * 2654435761u + (x >> 13); return x; }
static inline unsigned step(unsigned x) { return mix(x) ^ mix(x + 1); }
__attribute__((noinline)) unsigned work(unsigned n) { unsigned a = 1; for (unsigned i = 0; i < n; i++) a += step(a + i); return a; }
int main(int argc, char **argv) { unsigned n = argc > 1 ? atoi(argv[1]) : 3000000; printf("%u\n", work(n)); return 0; }
