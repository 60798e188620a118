/* SPDX-License-Identifier: MIT */
/*
 * probe_memory.c - what this machine charges for memory a program touches
 * for the first time, printed by bench/run.sh among the machine lines of
 * the results (not a benchmark of ark).
 *
 * Inserting into any container past its last growth writes pages the
 * process never touched; the kernel zeroes each and, under a hypervisor,
 * the host may have to back it too. On a typical Linux host that costs
 * well under 1 us a 4 KiB page (at most 1-2 ns for each 16-byte element);
 * some virtual machines charge 10-20 us (40-80 ns an element), and then
 * insert rows and first passes over fresh memory measure the host, not
 * the containers (docs/bench.md, "Machines whose memory is slow to
 * touch").
 *
 * Prints one line: "memory: first touch X us per 4 KiB page, rewrite Y ns
 * per page (N MiB)", medians of ROUNDS fresh mappings.
 */
#define _POSIX_C_SOURCE 200809L
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

enum { MIB = 64, ROUNDS = 5, PAGE = 4096 };

static double now_ns(void) {
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (double)t.tv_sec * 1e9 + (double)t.tv_nsec;
}

/* Write one byte in every page of p[0, bytes); return ns per page. */
static double touch(volatile char *p, size_t bytes, char v) {
    double t0 = now_ns();
    for (size_t i = 0; i < bytes; i += PAGE) {
        p[i] = v;
    }
    return (now_ns() - t0) / (double)(bytes / PAGE);
}

static int cmp_double(const void *a, const void *b) {
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

int main(void) {
    size_t bytes = (size_t)MIB << 20;
    double first[ROUNDS], again[ROUNDS];
    for (int r = 0; r < ROUNDS; r++) {
        /* Large enough that malloc maps it fresh and unmaps it at free. */
        char *p = malloc(bytes);
        if (p == NULL) {
            fprintf(stderr, "probe_memory: out of memory\n");
            return 1;
        }
        first[r] = touch(p, bytes, (char)(r + 1));
        again[r] = touch(p, bytes, (char)(r + 2));
        free(p);
    }
    qsort(first, ROUNDS, sizeof(double), cmp_double);
    qsort(again, ROUNDS, sizeof(double), cmp_double);
    printf("memory: first touch %.2f us per 4 KiB page, rewrite %.0f ns per "
           "page (%d MiB, median of %d)\n",
           first[ROUNDS / 2] / 1000.0, again[ROUNDS / 2], MIB, ROUNDS);
    return 0;
}
