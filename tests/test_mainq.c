/* SPDX-License-Identifier: MIT */
/*
 * test_mainq.c - ark_mainq: ordering, partial runs, tasks that post,
 * allocation failure, producers on other threads, and a frame loop driven
 * by hand. Cases named thread_* also run under TSan.
 */
#include "ark/mainq.h"
#include "ark/ref.h"
#include "harness.h"

#include <stdatomic.h>
#include <stdlib.h>

/* A log of task ids in the order they ran. */
typedef struct trace {
    uintptr_t ran[4096];
    size_t n;
} trace;

static trace *g_trace; /* the trace the record task appends to */

static void record(void *arg) {
    if (g_trace->n < sizeof g_trace->ran / sizeof g_trace->ran[0]) {
        g_trace->ran[g_trace->n++] = (uintptr_t)arg;
    }
}

static void *id_arg(uintptr_t id) { return (void *)id; }

TEST(run_all_in_fifo_order) {
    static trace t;
    t.n = 0;
    g_trace = &t;
    ark_mainq *q;
    CHECK_OK(ark_mainq_create(&q, NULL));
    CHECK_EQ(ark_mainq_pending(q), 0);
    CHECK_EQ(ark_mainq_run(q, 0), 0);
    for (uintptr_t i = 0; i < 1000; i++) {
        CHECK_OK(ark_mainq_post(q, record, id_arg(i)));
    }
    CHECK_EQ(ark_mainq_pending(q), 1000);
    CHECK_EQ(t.n, 0); /* nothing runs at post time */
    CHECK_EQ(ark_mainq_run(q, 0), 1000);
    CHECK_EQ(ark_mainq_pending(q), 0);
    CHECK_EQ(t.n, 1000);
    for (uintptr_t i = 0; i < 1000; i++) {
        CHECK_EQ(t.ran[i], i);
    }
    CHECK_EQ(ark_mainq_run(q, 0), 0);
    ark_mainq_destroy(q);
    ark_mainq_destroy(NULL);
}

TEST(errors) {
    ark_mainq *q = NULL;
    ark_allocator bad = {NULL, NULL, NULL};
    CHECK_STATUS(ark_mainq_create(&q, &bad), ARK_EINVAL);
    CHECK(q == NULL);
    test_allocator t;
    test_allocator_init(&t);
    test_allocator_fail_at(&t, 1);
    CHECK_STATUS(ark_mainq_create(&q, &t.base), ARK_ENOMEM);
    CHECK(q == NULL);
    CHECK_OK(ark_mainq_create(&q, &t.base));
    CHECK_STATUS(ark_mainq_post(q, NULL, NULL), ARK_EINVAL);
    CHECK_EQ(ark_mainq_pending(q), 0);
    ark_mainq_destroy(q);
    CHECK_EQ(t.live_blocks, 0);
}

/* Partial runs keep FIFO order, also with posts in between and across
 * chunk boundaries. */
TEST(partial_runs_keep_fifo) {
    static trace t;
    t.n = 0;
    g_trace = &t;
    ark_mainq *q;
    CHECK_OK(ark_mainq_create(&q, NULL));
    uintptr_t next = 0;
    for (int i = 0; i < 10; i++) {
        CHECK_OK(ark_mainq_post(q, record, id_arg(next++)));
    }
    CHECK_EQ(ark_mainq_run(q, 3), 3);
    CHECK_EQ(ark_mainq_pending(q), 7);
    for (int i = 0; i < 5; i++) {
        CHECK_OK(ark_mainq_post(q, record, id_arg(next++)));
    }
    CHECK_EQ(ark_mainq_run(q, 100), 12); /* max above the queue: all */
    CHECK_EQ(t.n, 15);
    /* Many small runs over several chunks, posting as we go. */
    uint64_t rng = harness_seed();
    while (t.n < 3000) {
        int posts = (int)harness_below(&rng, 150);
        for (int i = 0; i < posts && next < 3500; i++) {
            CHECK_OK(ark_mainq_post(q, record, id_arg(next++)));
        }
        size_t before = ark_mainq_pending(q);
        size_t max = (size_t)harness_below(&rng, 100);
        size_t want = max == 0 || max > before ? before : max;
        CHECK_EQ(ark_mainq_run(q, max), want);
        CHECK_EQ(ark_mainq_pending(q), before - want);
    }
    size_t rest = next - t.n;
    CHECK_EQ(ark_mainq_run(q, 0), rest);
    CHECK_EQ(t.n, next);
    for (uintptr_t i = 0; i < next; i++) {
        CHECK_EQ(t.ran[i], i);
    }
    ark_mainq_destroy(q);
}

/* A task that posts: the new task waits for the next run. */
typedef struct reposter {
    ark_mainq *q;
    int runs;
    int limit;
    size_t pending_seen;
    size_t nested_ran;
} reposter;

static void repost(void *arg) {
    reposter *r = (reposter *)arg;
    r->runs++;
    r->pending_seen = ark_mainq_pending(r->q);
    r->nested_ran = ark_mainq_run(r->q, 0); /* refused inside a task */
    if (r->runs < r->limit) {
        if (ark_mainq_post(r->q, repost, r) != ARK_OK) {
            r->runs = -1000;
        }
    }
}

TEST(task_reposts_run_next_time) {
    ark_mainq *q;
    CHECK_OK(ark_mainq_create(&q, NULL));
    reposter r = {q, 0, 3, 99, 99};
    CHECK_OK(ark_mainq_post(q, repost, &r));
    CHECK_EQ(ark_mainq_run(q, 0), 1);
    CHECK_EQ(r.runs, 1);
    CHECK_EQ(r.pending_seen, 0); /* itself had started */
    CHECK_EQ(r.nested_ran, 0);
    CHECK_EQ(ark_mainq_pending(q), 1);
    CHECK_EQ(ark_mainq_run(q, 0), 1);
    CHECK_EQ(r.runs, 2);
    CHECK_EQ(ark_mainq_run(q, 0), 1);
    CHECK_EQ(r.runs, 3);
    CHECK_EQ(ark_mainq_run(q, 0), 0);
    CHECK_EQ(ark_mainq_pending(q), 0);
    /* drain runs the whole chain. */
    r.runs = 0;
    r.limit = 5;
    CHECK_OK(ark_mainq_post(q, repost, &r));
    CHECK_EQ(ark_mainq_drain(q), 5);
    CHECK_EQ(r.runs, 5);
    ark_mainq_destroy(q);
}

/* A task that posts during a partial run: the unrun remainder of the batch
 * stays ahead of what the task posted. */
typedef struct poster {
    ark_mainq *q;
    uintptr_t post_id;
    size_t pending_seen;
} poster;

static void post_then_record(void *arg) {
    poster *p = (poster *)arg;
    p->pending_seen = ark_mainq_pending(p->q);
    if (ark_mainq_post(p->q, record, id_arg(p->post_id)) != ARK_OK) {
        p->post_id = 0;
    }
    record(id_arg(100));
}

TEST(post_during_partial_run) {
    static trace t;
    t.n = 0;
    g_trace = &t;
    ark_mainq *q;
    CHECK_OK(ark_mainq_create(&q, NULL));
    poster p = {q, 4, 0};
    CHECK_OK(ark_mainq_post(q, post_then_record, &p)); /* runs as 100 */
    CHECK_OK(ark_mainq_post(q, record, id_arg(1)));
    CHECK_OK(ark_mainq_post(q, record, id_arg(2)));
    CHECK_EQ(ark_mainq_run(q, 1), 1);
    CHECK_EQ(p.pending_seen, 2); /* the batch's other two */
    CHECK_EQ(ark_mainq_pending(q), 3);
    CHECK_EQ(ark_mainq_run(q, 0), 3);
    CHECK_EQ(t.n, 4);
    CHECK_EQ(t.ran[0], 100);
    CHECK_EQ(t.ran[1], 1);
    CHECK_EQ(t.ran[2], 2);
    CHECK_EQ(t.ran[3], 4);
    ark_mainq_destroy(q);
}

static int g_discarded_ran;
static void must_not_run(void *arg) {
    (void)arg;
    g_discarded_ran++;
}

TEST(destroy_discards_pending) {
    test_allocator t;
    test_allocator_init(&t);
    ark_mainq *q;
    CHECK_OK(ark_mainq_create(&q, &t.base));
    g_discarded_ran = 0;
    for (int i = 0; i < 500; i++) {
        CHECK_OK(ark_mainq_post(q, must_not_run, NULL));
    }
    CHECK_EQ(ark_mainq_run(q, 7), 7);
    ark_mainq_destroy(q);
    CHECK_EQ(g_discarded_ran, 7);
    CHECK_EQ(t.live_blocks, 0);
    CHECK_EQ(t.bad_frees, 0);
}

static void noop(void *arg) { (void)arg; }

/* Frames of n tasks, each posted then run; from the third frame on any
 * allocation would fail a post. */
static void steady_frames(ark_mainq *q, test_allocator *t, int n) {
    uint64_t allocs = 0;
    for (int frame = 0; frame < 200; frame++) {
        if (frame == 2) {
            allocs = t->allocs;
            test_allocator_fail_at(t, 1);
        }
        for (int i = 0; i < n; i++) {
            CHECK_OK(ark_mainq_post(q, noop, NULL));
        }
        CHECK_EQ(ark_mainq_run(q, 0), (size_t)n);
    }
    CHECK_EQ(t->failures, 0);
    CHECK_EQ(t->allocs, allocs);
    test_allocator_fail_at(t, 0);
}

/* Below and above the 64 chunks every run keeps (a fixed cap of 64 made
 * 20,000 tasks a frame allocate 249 chunks a frame). */
TEST(steady_state_does_not_allocate) {
    test_allocator t;
    test_allocator_init(&t);
    ark_mainq *q;
    CHECK_OK(ark_mainq_create(&q, &t.base));
    steady_frames(q, &t, 1000);
    steady_frames(q, &t, 20000);
    ark_mainq_destroy(q);
    CHECK_EQ(t.live_blocks, 0);
}

/* A burst's chunks are freed by the next smaller run: the spares held
 * follow the last run, never the peak. */
TEST(a_burst_is_freed_by_the_next_smaller_run) {
    test_allocator t;
    test_allocator_init(&t);
    ark_mainq *q;
    CHECK_OK(ark_mainq_create(&q, &t.base));
    for (int i = 0; i < 64 * 1000; i++) {
        CHECK_OK(ark_mainq_post(q, noop, NULL));
    }
    CHECK_EQ(ark_mainq_run(q, 0), 64 * 1000);
    CHECK(t.live_blocks >= 1000); /* the queue and the 1000 chunks */
    for (int i = 0; i < 100; i++) {
        CHECK_OK(ark_mainq_post(q, noop, NULL));
    }
    CHECK_EQ(ark_mainq_run(q, 0), 100);
    CHECK(t.live_blocks <= 1 + 64 + 2);
    ark_mainq_destroy(q);
    CHECK_EQ(t.live_blocks, 0);
}

/* Fail the k-th allocation for every k: the failed post is not queued,
 * every other task runs once in order, nothing leaks. */
TEST(alloc_failure_every_k) {
    static trace tr;
    g_trace = &tr;
    for (uint64_t k = 1;; k++) {
        tr.n = 0;
        test_allocator t;
        test_allocator_init(&t);
        test_allocator_fail_at(&t, k);
        ark_mainq *q = NULL;
        ark_status s = ark_mainq_create(&q, &t.base);
        if (s != ARK_OK) {
            CHECK_STATUS(s, ARK_ENOMEM);
            CHECK_EQ(t.live_blocks, 0);
            continue;
        }
        uintptr_t posted[1000];
        size_t nposted = 0, failures = 0;
        for (uintptr_t i = 0; i < 600; i++) {
            size_t before = ark_mainq_pending(q);
            s = ark_mainq_post(q, record, id_arg(i));
            if (s == ARK_OK) {
                posted[nposted++] = i;
            } else {
                CHECK_STATUS(s, ARK_ENOMEM);
                CHECK_EQ(ark_mainq_pending(q), before);
                failures++;
            }
            if (i % 150 == 149) {
                CHECK_EQ(ark_mainq_run(q, 50), 50);
            }
        }
        ark_mainq_run(q, 0);
        CHECK_EQ(tr.n, nposted);
        for (size_t i = 0; i < nposted; i++) {
            CHECK_EQ(tr.ran[i], posted[i]);
        }
        ark_mainq_destroy(q);
        CHECK_EQ(t.live_blocks, 0);
        CHECK_EQ(t.bad_frees, 0);
        CHECK_EQ(failures, t.failures);
        if (t.failures == 0) {
            CHECK(k > 5);
            break;
        }
    }
}

/* Random posts, partial runs and posting tasks against a FIFO model. */
typedef struct chain {
    ark_mainq *q;
    uintptr_t child; /* 0 = none */
} chain;

static chain g_chains[4096];

static void record_and_post(void *arg) {
    chain *c = (chain *)arg;
    uintptr_t self = (uintptr_t)(c - g_chains);
    record(id_arg(self));
    if (c->child != 0) {
        if (ark_mainq_post(c->q, record_and_post, &g_chains[c->child]) !=
            ARK_OK) {
            record(id_arg(UINTPTR_MAX));
        }
    }
}

TEST(random_against_model) {
    static trace t;
    t.n = 0;
    g_trace = &t;
    static uintptr_t model[8192];
    size_t mhead = 0, mtail = 0;
    uint64_t rng = harness_seed();
    ark_mainq *q;
    CHECK_OK(ark_mainq_create(&q, NULL));
    uintptr_t next = 1;
    for (int step = 0; step < 2000 && next < 4000; step++) {
        if (harness_below(&rng, 3) != 0) {
            int n = (int)harness_below(&rng, 8);
            for (int i = 0; i < n && next < 4000; i++) {
                uintptr_t id = next++;
                g_chains[id].q = q;
                g_chains[id].child = 0;
                if (harness_below(&rng, 4) == 0 && next < 4000) {
                    g_chains[id].child = next;
                    g_chains[next].q = q;
                    g_chains[next].child = 0;
                    next++;
                }
                CHECK_OK(ark_mainq_post(q, record_and_post, &g_chains[id]));
                model[mtail++] = id;
            }
        } else {
            size_t max = (size_t)harness_below(&rng, 6);
            size_t queued = mtail - mhead;
            size_t want = max == 0 || max > queued ? queued : max;
            size_t start = t.n;
            CHECK_EQ(ark_mainq_run(q, max), want);
            /* The model runs the same tasks; their children join the tail
             * after everything queued before this run. */
            for (size_t i = 0; i < want; i++) {
                uintptr_t id = model[mhead++];
                CHECK_EQ(t.ran[start + i], id);
                if (g_chains[id].child != 0) {
                    model[mtail++] = g_chains[id].child;
                }
            }
            CHECK_EQ(t.n, start + want);
        }
        CHECK_EQ(ark_mainq_pending(q), mtail - mhead);
    }
    ark_mainq_destroy(q);
}

/* ---- threads -------------------------------------------------------- */

#define PRODUCERS 4
#define POSTS 100000

typedef struct producer {
    ark_mainq *q;
    uintptr_t index;
    int failed;
} producer;

typedef struct tally {
    size_t count[PRODUCERS];
    uintptr_t last[PRODUCERS]; /* last sequence number seen + 1 */
    int out_of_order;
} tally;

static tally g_tally; /* touched only by the main thread's tasks */

static void count_task(void *arg) {
    uintptr_t v = (uintptr_t)arg;
    uintptr_t p = v >> 24, seq = v & 0xffffff;
    if (seq + 1 <= g_tally.last[p]) {
        g_tally.out_of_order++;
    }
    g_tally.last[p] = seq + 1;
    g_tally.count[p]++;
}

static void *produce(void *arg) {
    producer *p = (producer *)arg;
    for (uintptr_t i = 0; i < POSTS; i++) {
        if (ark_mainq_post(p->q, count_task, id_arg(p->index << 24 | i)) !=
            ARK_OK) {
            p->failed = 1;
        }
    }
    return NULL;
}

/* Run the queue (bounded runs, as a frame loop would) until `total` tasks
 * have run; return how many ran. */
static size_t run_until(ark_mainq *q, size_t total, uint64_t *rng) {
    size_t ran = 0;
    while (ran < total) {
        size_t n = ark_mainq_run(q, (size_t)harness_below(rng, 3000));
        ran += n;
        if (n == 0) {
            harness_yield();
        }
    }
    return ran;
}

TEST(thread_four_producers_exact_count) {
    memset(&g_tally, 0, sizeof g_tally);
    ark_mainq *q;
    CHECK_OK(ark_mainq_create(&q, NULL));
    harness_thread th[PRODUCERS];
    producer p[PRODUCERS];
    for (uintptr_t i = 0; i < PRODUCERS; i++) {
        p[i].q = q;
        p[i].index = i;
        p[i].failed = 0;
        CHECK_EQ(harness_thread_start(&th[i], produce, &p[i]), 0);
    }
    uint64_t rng = harness_seed();
    size_t ran = run_until(q, (size_t)PRODUCERS * POSTS, &rng);
    for (int i = 0; i < PRODUCERS; i++) {
        CHECK_EQ(harness_thread_join(th[i]), 0);
        CHECK_EQ(p[i].failed, 0);
        CHECK_EQ(g_tally.count[i], POSTS);
    }
    CHECK_EQ(ran, (size_t)PRODUCERS * POSTS);
    CHECK_EQ(g_tally.out_of_order, 0);
    CHECK_EQ(ark_mainq_pending(q), 0);
    CHECK_EQ(ark_mainq_run(q, 0), 0);
    ark_mainq_destroy(q);
}

/* A producer keeps posting while the main thread's tasks post too (a
 * reposter chain) and another thread polls pending(). */
static atomic_int g_stop_polling;

static void *poll_pending(void *arg) {
    ark_mainq *q = (ark_mainq *)arg;
    size_t sum = 0;
    while (!atomic_load(&g_stop_polling)) {
        sum += ark_mainq_pending(q);
        harness_yield();
    }
    return (void *)(uintptr_t)(sum & 1);
}

TEST(thread_post_while_running) {
    memset(&g_tally, 0, sizeof g_tally);
    atomic_store(&g_stop_polling, 0);
    ark_mainq *q;
    CHECK_OK(ark_mainq_create(&q, NULL));
    producer p = {q, 0, 0};
    harness_thread prod, poll;
    CHECK_EQ(harness_thread_start(&prod, produce, &p), 0);
    CHECK_EQ(harness_thread_start(&poll, poll_pending, q), 0);
    reposter r = {q, 0, 20001, 0, 0};
    CHECK_OK(ark_mainq_post(q, repost, &r));
    uint64_t rng = harness_seed();
    size_t ran = run_until(q, POSTS + 20001, &rng);
    CHECK_EQ(harness_thread_join(prod), 0);
    atomic_store(&g_stop_polling, 1);
    CHECK_EQ(harness_thread_join(poll), 0);
    CHECK_EQ(ran, POSTS + 20001);
    CHECK_EQ(p.failed, 0);
    CHECK_EQ(g_tally.count[0], POSTS);
    CHECK_EQ(g_tally.out_of_order, 0);
    CHECK_EQ(r.runs, 20001);
    CHECK_EQ(r.nested_ran, 0);
    ark_mainq_destroy(q);
}

/* ---- driving the frame loop by hand (the seed's last section) ------- */

/*
 * A loader thread "decodes" textures and posts one completion per texture
 * to the main queue. The frame loop below is driven by hand: each frame
 * uploads at most one texture (ark_mainq_run(q, 1)), keeps it in a cache
 * (an ark_refvec), hands the loader's reference to the autorelease pool
 * and drains the pool at the end of the frame. The test asserts per frame
 * what a game would only observe on screen.
 */
#define TEXTURES 8

typedef struct texture {
    ark_ref ref;
    int id;
    int uploaded;
    int *freed;
} texture;

static void texture_destroy(ark_ref *r) {
    texture *t = (texture *)r;
    (*t->freed)++;
    free(t);
}

typedef struct game {
    ark_mainq *q;
    ark_refvec *cache;
    ark_autorelease_pool *pool;
    int uploads_this_frame;
    int freed;
    int failed;
} game;

typedef struct completion {
    game *g;
    texture *tex;
} completion;

/* Runs on the main thread: "upload" and cache the texture. */
static void on_loaded(void *arg) {
    completion *c = (completion *)arg;
    game *g = c->g;
    c->tex->uploaded = 1;
    g->uploads_this_frame++;
    if (ark_refvec_push(g->cache, &c->tex->ref) != ARK_OK ||
        ark_autorelease(g->pool, &c->tex->ref) != ARK_OK) {
        g->failed = 1;
    }
    free(c);
}

/* Runs on the loader thread. */
static void *loader(void *arg) {
    game *g = (game *)arg;
    for (int i = 0; i < TEXTURES; i++) {
        texture *t = (texture *)malloc(sizeof *t);
        completion *c = (completion *)malloc(sizeof *c);
        if (t == NULL || c == NULL) {
            free(t);
            free(c);
            g->failed = 1;
            return NULL;
        }
        ark_ref_init(&t->ref, texture_destroy);
        t->id = i;
        t->uploaded = 0;
        t->freed = &g->freed;
        c->g = g;
        c->tex = t;
        if (ark_mainq_post(g->q, on_loaded, c) != ARK_OK) {
            g->failed = 1;
        }
    }
    return NULL;
}

TEST(thread_drive_loop_by_hand) {
    game g;
    memset(&g, 0, sizeof g);
    CHECK_OK(ark_mainq_create(&g.q, NULL));
    CHECK_OK(ark_refvec_create(&g.cache, NULL));
    CHECK_OK(ark_autorelease_pool_create(&g.pool, NULL));
    harness_thread th;
    CHECK_EQ(harness_thread_start(&th, loader, &g), 0);
    int frames = 0;
    while (ark_refvec_count(g.cache) < TEXTURES && frames < 10000000) {
        frames++;
        g.uploads_this_frame = 0;
        size_t ran = ark_mainq_run(g.q, 1); /* one upload per frame */
        CHECK_EQ(ran, (size_t)g.uploads_this_frame);
        CHECK(g.uploads_this_frame <= 1);
        CHECK_EQ(ark_autorelease_drain(g.pool), ran);
        /* Uploaded textures survive the drain: the cache holds them. */
        for (size_t i = 0; i < ark_refvec_count(g.cache); i++) {
            CHECK_EQ(ark_ref_count(ark_refvec_at(g.cache, i)), 1);
        }
        if (ran == 0) {
            harness_yield();
        }
    }
    CHECK_EQ(harness_thread_join(th), 0);
    CHECK_EQ(g.failed, 0);
    CHECK_EQ(ark_refvec_count(g.cache), TEXTURES);
    CHECK(frames >= TEXTURES);
    for (size_t i = 0; i < TEXTURES; i++) {
        texture *t = (texture *)ark_refvec_at(g.cache, i);
        CHECK_EQ(t->id, i); /* FIFO: uploaded in load order */
        CHECK_EQ(t->uploaded, 1);
    }
    CHECK_EQ(g.freed, 0);
    ark_refvec_destroy(g.cache); /* the level unloads */
    CHECK_EQ(g.freed, TEXTURES);
    ark_autorelease_pool_destroy(g.pool);
    ark_mainq_destroy(g.q);
}
