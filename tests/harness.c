/* SPDX-License-Identifier: MIT */
/*
 * harness.c - registry, runner and test allocator for harness.h.
 */
#if !defined(_WIN32)
#define _POSIX_C_SOURCE 200809L /* sched_yield, clock_gettime */
#endif

#include "harness.h"

#include <stdarg.h>
#include <stdlib.h>

#if defined(_WIN32)
#define WIN32_LEAN_AND_MEAN
#include <windows.h>
/* after windows.h */
#include <malloc.h>  /* _aligned_malloc */
#include <process.h> /* _beginthreadex */
#else
#include <sched.h>
#include <time.h>
#endif

#define HARNESS_MAX_CASES 512

static struct {
    const char *name;
    harness_fn fn;
} cases[HARNESS_MAX_CASES];
static int ncases;
static int current_failed;
static uint64_t seed = 0x5eed5eed2026ull;

void harness_register(const char *name, harness_fn fn) {
    if (ncases == HARNESS_MAX_CASES) {
        fprintf(stderr, "harness: too many cases\n");
        exit(2);
    }
    cases[ncases].name = name;
    cases[ncases].fn = fn;
    ncases++;
}

void harness_fail(const char *file, int line, const char *fmt, ...) {
    va_list ap;
    fprintf(stderr, "%s:%d: FAIL (seed %" PRIu64 "): ", file, line, seed);
    va_start(ap, fmt);
    vfprintf(stderr, fmt, ap);
    va_end(ap);
    fputc('\n', stderr);
    current_failed = 1;
}

int harness_failed(void) { return current_failed; }

uint64_t harness_seed(void) { return seed; }

static double scale = 1.0;

uint64_t harness_scaled(uint64_t n) {
    double v = (double)n * scale;
    return v < 1.0 ? 1 : (uint64_t)v;
}

/* Each block carries a header just before the payload recording its size
 * (checked against the size the container passes to free) and alignment
 * (which is also the header's distance from the raw block). */
typedef struct block_header {
    size_t size;
    size_t align;
} block_header;

/* Windows has no aligned_alloc; its _aligned_malloc blocks need
 * _aligned_free. total is a multiple of align. */
static void *raw_alloc(size_t total, size_t align) {
#if defined(_WIN32)
    return _aligned_malloc(total, align);
#else
    return aligned_alloc(align, total);
#endif
}

static void raw_free(void *raw) {
#if defined(_WIN32)
    _aligned_free(raw);
#else
    free(raw);
#endif
}

static void *test_alloc(void *ctx, size_t size, size_t align) {
    test_allocator *t = ctx;
    t->attempts++;
    if (size > t->max_request) {
        t->max_request = size;
    }
    if (t->fail_at != 0 && t->attempts == t->fail_at) {
        t->failures++;
        return NULL;
    }
    if (align < sizeof(block_header)) {
        align = sizeof(block_header);
    }
    /* align bytes in front hold the header and keep the payload aligned. */
    size_t front = align;
    if (size > SIZE_MAX - 2 * front) {
        return NULL;
    }
    size_t total = front + size;
    char *raw = raw_alloc((total + align - 1) & ~(align - 1), align);
    if (raw == NULL) {
        return NULL;
    }
    block_header *h = (block_header *)(raw + front - sizeof(block_header));
    h->size = size;
    h->align = align;
    t->allocs++;
    t->live_bytes += size;
    t->live_blocks++;
    return raw + front;
}

static void test_free(void *ctx, void *ptr, size_t size) {
    test_allocator *t = ctx;
    block_header *h = (block_header *)((char *)ptr - sizeof(block_header));
    if (h->size != size) {
        t->bad_frees++;
    }
    t->frees++;
    t->live_bytes -= h->size;
    t->live_blocks--;
    raw_free((char *)ptr - h->align);
}

void test_allocator_init(test_allocator *t) {
    memset(t, 0, sizeof *t);
    t->base.alloc = test_alloc;
    t->base.free = test_free;
    t->base.ctx = t;
}

void test_allocator_fail_at(test_allocator *t, uint64_t k) {
    t->fail_at = k;
    t->attempts = 0;
}

#if defined(_WIN32)
typedef struct thread_box {
    void *(*fn)(void *);
    void *arg;
} thread_box;

static unsigned __stdcall thread_main(void *p) {
    thread_box b = *(thread_box *)p;
    free(p);
    b.fn(b.arg);
    return 0;
}

int harness_thread_start(harness_thread *t, void *(*fn)(void *), void *arg) {
    thread_box *b = malloc(sizeof *b);
    if (b == NULL) {
        return -1;
    }
    b->fn = fn;
    b->arg = arg;
    uintptr_t h = _beginthreadex(NULL, 0, thread_main, b, 0, NULL);
    if (h == 0) {
        free(b);
        return -1;
    }
    *t = (harness_thread)h;
    return 0;
}

int harness_thread_join(harness_thread t) {
    int rc = WaitForSingleObject(t, INFINITE) == WAIT_OBJECT_0 ? 0 : -1;
    CloseHandle(t);
    return rc;
}

void harness_yield(void) { SwitchToThread(); }
#else
int harness_thread_start(harness_thread *t, void *(*fn)(void *), void *arg) {
    return pthread_create(t, NULL, fn, arg);
}

int harness_thread_join(harness_thread t) { return pthread_join(t, NULL); }

void harness_yield(void) { sched_yield(); }
#endif

int main(int argc, char **argv) {
    const char *env = getenv("ARK_SEED");
    if (env != NULL && *env != '\0') {
        seed = strtoull(env, NULL, 0);
    }
    const char *sc = getenv("ARK_TEST_SCALE");
    if (sc != NULL && *sc != '\0') {
        scale = strtod(sc, NULL);
        if (!(scale > 0.0)) {
            scale = 1.0;
        }
    }
    if (argc > 1 && strcmp(argv[1], "--list") == 0) {
        for (int i = 0; i < ncases; i++) {
            printf("%s\n", cases[i].name);
        }
        return 0;
    }
    printf("seed %" PRIu64 " (set ARK_SEED to replay)\n", seed);
    int passed = 0, failed = 0, ran = 0;
    for (int i = 0; i < ncases; i++) {
        if (argc > 1 && strcmp(argv[1], cases[i].name) != 0) {
            continue;
        }
        ran++;
        current_failed = 0;
        cases[i].fn();
        if (current_failed) {
            failed++;
            printf("FAIL %s\n", cases[i].name);
        } else {
            passed++;
            printf("ok   %s\n", cases[i].name);
        }
    }
    if (argc > 1 && ran == 0) {
        fprintf(stderr, "no case named %s\n", argv[1]);
        return 2;
    }
    printf("%d passed, %d failed\n", passed, failed);
    return failed == 0 ? 0 : 1;
}

double harness_now_ns(void) {
#if defined(_WIN32)
    LARGE_INTEGER f, c;
    QueryPerformanceFrequency(&f);
    QueryPerformanceCounter(&c);
    return (double)c.QuadPart * 1e9 / (double)f.QuadPart;
#else
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (double)t.tv_sec * 1e9 + (double)t.tv_nsec;
#endif
}
