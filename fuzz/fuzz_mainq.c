/* SPDX-License-Identifier: MIT */
/*
 * fuzz_mainq.c - ark_mainq (single-threaded) against a model, driven by
 * fuzz input.
 *
 * Every task is a numbered record; the model is the FIFO of posted task
 * numbers. A task checks that it is the model's front (FIFO, also across
 * bounded runs), that pending counts the tasks not yet started, that run
 * and drain called from inside it return 0, and then re-posts as many
 * children as its record says (children re-post one level less, so drain
 * always ends), sometimes with an allocation failure injected. Posts from
 * the input inject allocation failures on demand: ARK_ENOMEM must leave
 * the queue unchanged. Tasks left at the end are discarded by destroy,
 * never run, and nothing leaks.
 */
#include "ark/mainq.h"
#include "fuzz_common.h"

#define TASK_MAX 4096

typedef struct task {
    uint32_t id;
    uint8_t children; /* posts this many tasks when it runs */
    uint8_t depth;    /* children get depth - 1; 0 posts nothing */
    uint8_t fail;     /* inject a failure into the first child's post */
} task;

typedef struct state {
    task tasks[TASK_MAX];
    uint32_t ntasks;
    uint32_t fifo[TASK_MAX]; /* posted, not started: model of the queue */
    size_t head, tail;
    size_t ran; /* tasks run since the current run started */
    int in_task;
    int destroying; /* destroy must run nothing */
    ark_mainq *q;
    fuzz_alloc fa;
} state;

static state *G;

static void run_task(void *arg);

/* Post task t (already filled in); the model appends it on ARK_OK. */
static ark_status post(state *s, task *t, int fail) {
    s->fa.fail_next = fail;
    ark_status st = ark_mainq_post(s->q, run_task, t);
    s->fa.fail_next = 0;
    if (st == ARK_OK) {
        s->fifo[s->tail++] = t->id;
        s->ntasks++;
    } else {
        FUZZ_REQUIRE(st == ARK_ENOMEM && fail);
    }
    FUZZ_REQUIRE(ark_mainq_pending(s->q) == s->tail - s->head);
    return st;
}

static void run_task(void *arg) {
    state *s = G;
    task *t = arg;
    FUZZ_REQUIRE(!s->in_task && !s->destroying);
    FUZZ_REQUIRE(s->head < s->tail && s->fifo[s->head] == t->id);
    s->head++;
    s->ran++;
    FUZZ_REQUIRE(ark_mainq_pending(s->q) == s->tail - s->head);
    s->in_task = 1;
    FUZZ_REQUIRE(ark_mainq_run(s->q, 0) == 0); /* nested: runs nothing */
    FUZZ_REQUIRE(ark_mainq_drain(s->q) == 0);
    FUZZ_REQUIRE(ark_mainq_post(s->q, NULL, t) == ARK_EINVAL);
    for (uint8_t c = 0; c < t->children && t->depth > 0; c++) {
        if (s->ntasks >= TASK_MAX || s->tail >= TASK_MAX) {
            break;
        }
        task *n = &s->tasks[s->ntasks];
        *n = (task){s->ntasks, t->children, (uint8_t)(t->depth - 1), 0};
        post(s, n, c == 0 && t->fail);
    }
    s->in_task = 0;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
    fuzz_input in = {data, size, 0};
    static state s;
    memset(&s, 0, sizeof s);
    G = &s;
    fuzz_alloc_init(&s.fa);
    uint8_t shape = fuzz_u8(&in);
    s.fa.fail_next = (shape & 7) == 7;
    ark_status cs = ark_mainq_create(&s.q, &s.fa.base);
    if (cs != ARK_OK) {
        FUZZ_REQUIRE(cs == ARK_ENOMEM && s.fa.live == 0);
        return 0;
    }
    s.fa.fail_next = 0;
    FUZZ_REQUIRE(ark_mainq_pending(s.q) == 0);
    while (!fuzz_done(&in)) {
        uint8_t op = fuzz_u8(&in);
        switch (op & 7) {
        case 0:
        case 1:
        case 2: { /* post a task that re-posts children when it runs */
            if (s.ntasks >= TASK_MAX || s.tail >= TASK_MAX) {
                break;
            }
            uint8_t how = fuzz_u8(&in);
            task *t = &s.tasks[s.ntasks];
            *t = (task){s.ntasks, (uint8_t)(how & 3), (uint8_t)((how >> 2) & 3),
                        (uint8_t)((how >> 4) & 1)};
            post(&s, t, (op & 0x80) != 0);
            break;
        }
        case 3: { /* run at most max tasks (0 = all queued at the start) */
            size_t max = (op & 0x80) ? (size_t)fuzz_u64(&in) : fuzz_u8(&in) & 7;
            size_t queued = s.tail - s.head;
            size_t want = max == 0 || max > queued ? queued : max;
            s.ran = 0;
            FUZZ_REQUIRE(ark_mainq_run(s.q, max) == want);
            FUZZ_REQUIRE(s.ran == want);
            break;
        }
        case 4: { /* drain: until empty, children included */
            s.ran = 0;
            size_t n = ark_mainq_drain(s.q);
            FUZZ_REQUIRE(n == s.ran && s.head == s.tail);
            break;
        }
        case 5: /* post NULL */
            FUZZ_REQUIRE(ark_mainq_post(s.q, NULL, NULL) == ARK_EINVAL);
            break;
        default:
            break;
        }
        FUZZ_REQUIRE(ark_mainq_pending(s.q) == s.tail - s.head);
        /* Keep the model's FIFO in bounds: restart it when it is empty. */
        if (s.head == s.tail) {
            s.head = s.tail = 0;
        }
    }
    s.destroying = 1;
    ark_mainq_destroy(s.q); /* discards what is left, runs nothing */
    FUZZ_REQUIRE(s.fa.live == 0);
    return 0;
}
