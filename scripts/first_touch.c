/* What first-touch memory costs on this machine: maps 400 MB and writes one byte per 4 KiB
 * page, then overwrites it all (already mapped), in one of four ways. The recording's
 * bytes are all written once, so this is a floor under its cost per byte.
 *
 *   gcc -O2 -o /tmp/first_touch scripts/first_touch.c
 *   for m in 0 1 2 3; do /tmp/first_touch $m; done
 *
 * Modes: 0 plain page faults; 1 madvise(MADV_POPULATE_WRITE) first; 2 mmap(MAP_POPULATE);
 * 3 madvise(MADV_HUGEPAGE) first (transparent huge pages). */
#define _GNU_SOURCE
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <time.h>

#ifndef MADV_POPULATE_WRITE
#define MADV_POPULATE_WRITE 23
#endif

static double ms(void) {
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return t.tv_sec * 1e3 + t.tv_nsec / 1e6;
}

int main(int argc, char **argv) {
    size_t bytes = (size_t)400 << 20;
    int mode = argc > 1 ? atoi(argv[1]) : 0;
    double t0 = ms();
    int flags = MAP_PRIVATE | MAP_ANONYMOUS | (mode == 2 ? MAP_POPULATE : 0);
    char *p = mmap(NULL, bytes, PROT_READ | PROT_WRITE, flags, -1, 0);
    if (p == MAP_FAILED) {
        perror("mmap");
        return 1;
    }
    if (mode == 1 && madvise(p, bytes, MADV_POPULATE_WRITE) != 0)
        perror("madvise(MADV_POPULATE_WRITE)");
    if (mode == 3 && madvise(p, bytes, MADV_HUGEPAGE) != 0)
        perror("madvise(MADV_HUGEPAGE)");
    double t1 = ms();
    for (size_t i = 0; i < bytes; i += 4096)
        p[i] = 1;
    double t2 = ms();
    memset(p, 2, bytes);
    double t3 = ms();
    printf("mode %d: map/populate %.0f ms, first touch %.0f ms, rewrite %.0f ms\n", mode, t1 - t0,
           t2 - t1, t3 - t2);
    return 0;
}
