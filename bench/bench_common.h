/* SPDX-License-Identifier: MIT */
/*
 * bench_common.h - what every ark benchmark program shares.
 *
 * Command line:  prog --mode smoke|quick|full [--impl NAME] [--list-impls]
 *   --impl NAME   run one implementation only (one process per
 *                 implementation, so peak RSS is that implementation's)
 *   --list-impls  print the implementation names, one per line
 * Output: CSV rows on stdout, no header, columns
 *   section,workload,n,impl,value,min,max,unit,peak_rss_kib,checksum
 * value is the median of the runs (min and max beside it); checksum must
 * agree between implementations of one section/workload/n. Lines starting
 * with '#' and anything on stderr are for people.
 */

/* clock_gettime under -std=c11. This must precede every system header,
 * so a C file includes this header (or one that includes it, such as
 * pool_recipe.h) before any other, or defines _POSIX_C_SOURCE itself. */
#ifndef _POSIX_C_SOURCE
#define _POSIX_C_SOURCE 200809L
#endif

#ifndef ARK_BENCH_COMMON_H
#define ARK_BENCH_COMMON_H

#include <inttypes.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <time.h>
#include <unistd.h>

typedef enum bench_mode { BENCH_SMOKE, BENCH_QUICK, BENCH_FULL } bench_mode;

typedef struct bench_args {
    bench_mode mode;
    const char *impl; /* NULL = every implementation */
    int runs;         /* repetitions per cell: 1 smoke, 5 otherwise */
} bench_args;

/* Parse the command line; with --list-impls print names and exit. */
static inline bench_args bench_parse(int argc, char **argv,
                                     const char *const *impls, int nimpls) {
    bench_args a = {BENCH_QUICK, NULL, 5};
    for (int i = 1; i < argc; i++) {
        if (strcmp(argv[i], "--mode") == 0 && i + 1 < argc) {
            const char *m = argv[++i];
            a.mode = strcmp(m, "smoke") == 0  ? BENCH_SMOKE
                     : strcmp(m, "full") == 0 ? BENCH_FULL
                                              : BENCH_QUICK;
        } else if (strcmp(argv[i], "--impl") == 0 && i + 1 < argc) {
            a.impl = argv[++i];
        } else if (strcmp(argv[i], "--list-impls") == 0) {
            for (int k = 0; k < nimpls; k++) {
                printf("%s\n", impls[k]);
            }
            exit(0);
        } else {
            fprintf(stderr,
                    "usage: %s --mode smoke|quick|full [--impl NAME] "
                    "[--list-impls]\n",
                    argv[0]);
            exit(2);
        }
    }
    a.runs = a.mode == BENCH_SMOKE ? 1 : 5;
    return a;
}

/* Return true when impl is selected by the arguments. */
static inline int bench_selected(const bench_args *a, const char *impl) {
    return a->impl == NULL || strcmp(a->impl, impl) == 0;
}

/* The clock every timing reads: monotonic wall time, or, with
 * ARK_BENCH_CLOCK=thread in the environment, the CPU time of the calling
 * thread, which leaves out the time other processes took the core (a
 * shared machine's noise; what the caches lose to them stays). */
static inline clockid_t bench_clock(void) {
    static int which = -1;
    if (which < 0) {
        const char *c = getenv("ARK_BENCH_CLOCK");
        which = c != NULL && strcmp(c, "thread") == 0;
    }
    return which ? CLOCK_THREAD_CPUTIME_ID : CLOCK_MONOTONIC;
}

/* Now, in nanoseconds, on bench_clock(). */
static inline uint64_t bench_now_ns(void) {
    struct timespec ts;
    clock_gettime(bench_clock(), &ts);
    return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

/* Peak resident set of this process in KiB. */
static inline long bench_peak_rss_kib(void) {
    struct rusage ru;
    getrusage(RUSAGE_SELF, &ru);
    return ru.ru_maxrss;
}

/* splitmix64: the PRNG every implementation uses, seeded identically. */
static inline uint64_t bench_rand(uint64_t *state) {
    uint64_t z = (*state += 0x9e3779b97f4a7c15ull);
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
    return z ^ (z >> 31);
}

#define BENCH_SEED 0x2026a4cull

/* Sort a few doubles (insertion sort: runs are few). */
static inline void bench_sort(double *v, int n) {
    for (int i = 1; i < n; i++) {
        double x = v[i];
        int j = i - 1;
        while (j >= 0 && v[j] > x) {
            v[j + 1] = v[j];
            j--;
        }
        v[j + 1] = x;
    }
}

/* Sort v in place and return its median. */
static inline double bench_median(double *v, int n) {
    bench_sort(v, n);
    return n % 2 ? v[n / 2] : (v[n / 2 - 1] + v[n / 2]) / 2;
}

/* Print one CSV row from the per-run values (sorted in place). */
static inline void bench_row(const char *section, const char *workload,
                             uint64_t n, const char *impl, double *runs,
                             int nruns, const char *unit, uint64_t checksum) {
    double median = bench_median(runs, nruns);
    printf("%s,%s,%" PRIu64 ",%s,%.4g,%.4g,%.4g,%s,%ld,%" PRIu64 "\n", section,
           workload, n, impl, median, runs[0], runs[nruns - 1], unit,
           bench_peak_rss_kib(), checksum);
    fflush(stdout);
}

/* The most rounds of a --pair mode (two implementations alternating in one
 * process; bench_pool, bench_idmap_peers). */
#define BENCH_PAIR_MAX 99

/* Print one row of a --pair table: the median of a's and of b's per-round
 * times, and the median (min-max) of the per-round ratios a / b. a and b
 * are sorted in place. */
static inline void bench_pair_row(const char *name, double *a, double *b,
                                  int rounds) {
    double q[BENCH_PAIR_MAX];
    for (int r = 0; r < rounds; r++) {
        q[r] = a[r] / b[r];
    }
    double mq = bench_median(q, rounds);
    double ma = bench_median(a, rounds), mb = bench_median(b, rounds);
    printf("%-15s %10.3f %10.3f %9.3f %7.3f-%.3f\n", name, ma, mb, mq, q[0],
           q[rounds - 1]);
}

/* Print, as a '#' line, the machine and the build that a same-process
 * table was measured with (make bench prints its own: bench/run.sh). */
static inline void bench_print_build(void) {
    char model[128] = "unknown CPU", line[256];
    FILE *f = fopen("/proc/cpuinfo", "r");
    while (f != NULL && fgets(line, sizeof line, f) != NULL) {
        char *colon = strchr(line, ':');
        if (strncmp(line, "model name", 10) == 0 && colon != NULL) {
            snprintf(model, sizeof model, "%s", colon + 2);
            model[strcspn(model, "\n")] = '\0';
            break;
        }
    }
    if (f != NULL) {
        fclose(f);
    }
#if defined(__clang__)
    const char *cc = "clang";
#elif defined(__GNUC__)
    const char *cc = "gcc";
#else
    const char *cc = "compiler";
#endif
#ifdef ARK_BENCH_FLAGS
    const char *flags = ARK_BENCH_FLAGS; /* from bench/CMakeLists.txt */
#elif defined(__OPTIMIZE__) && defined(NDEBUG)
    const char *flags = "optimized, NDEBUG";
#else
    const char *flags = "not a release build";
#endif
    printf("# %s, %ld cores; %s %s, flags: %s\n", model,
           sysconf(_SC_NPROCESSORS_ONLN), cc, __VERSION__, flags);
}

/* The header of a --pair table: what ran, then the columns. */
static inline void bench_pair_head(const char *what, int rounds, size_t n,
                                   const char *a, const char *b) {
    bench_print_build();
    printf("%s --pair: %d rounds, n = %zu, %s and %s alternating in one "
           "process (order swapped every round), ns per operation\n",
           what, rounds, n, a, b);
    printf("%-15s %10s %10s %9s %15s\n", "workload", a, b, "ratio",
           "(min-max)");
}

/* Keep a value alive so the optimiser cannot drop the work producing it. */
static inline void bench_keep(uint64_t v) {
    __asm__ __volatile__("" : : "r"(v) : "memory");
}

#endif /* ARK_BENCH_COMMON_H */
