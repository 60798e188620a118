/* SPDX-License-Identifier: MIT */
/*
 * mainq.c - ark_mainq: a mutex-protected FIFO of chunks of tasks.
 *
 * Layout: the queue is a singly linked list of chunks; a chunk holds
 * tasks[begin, end). post appends to the tail chunk and takes a new one
 * (from the spare list, else the allocator) when it is full. Only the tail
 * is ever appended to, so a chunk in the middle may be partly filled after
 * a partial run put its remainder back: order is still list order.
 *
 * run: under the lock, detach the whole list (a batch) and reset the queue
 * to empty; unlock; run up to max tasks of the batch; lock again and splice
 * the unrun rest of the batch in FRONT of whatever was posted meanwhile.
 * The splice is O(1) and needs no memory, so a partial run can never lose
 * a task. Emptied chunks go back to the spare list, which keeps as many
 * as the run emptied (at least SPARE_MAX), so that a frame loop posting
 * about as many tasks each frame posts without allocating, and a burst's
 * chunks are freed by the next smaller run.
 *
 * pending = queued (under the lock) + batch_left, an atomic the running
 * thread updates with a relaxed store per task so that pending() from
 * another thread is not a data race.
 *
 * Every allocation and free happens with the mutex held (or before the
 * queue is shared / after it is no longer), so the allocator sees one
 * thread at a time.
 */
#if !defined(_WIN32)
#define _POSIX_C_SOURCE 200809L
#endif

#include "ark/mainq.h"

#include "base/base.h"

#include <assert.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <string.h>

/* ---- platform: the only OS-specific part of the module ---------------- */
#if defined(_WIN32)
/* SRW locks need no destruction and cannot fail (built and tested with
 * mingw-w64 under wine by `make test`). */
#define WIN32_LEAN_AND_MEAN
#include <windows.h>
typedef SRWLOCK mq_mutex;
static bool mq_mutex_init(mq_mutex *m) {
    InitializeSRWLock(m);
    return true;
}
static void mq_mutex_fini(mq_mutex *m) { (void)m; }
static void mq_lock(mq_mutex *m) { AcquireSRWLockExclusive(m); }
static void mq_unlock(mq_mutex *m) { ReleaseSRWLockExclusive(m); }
#else
#include <pthread.h>
typedef pthread_mutex_t mq_mutex;
static bool mq_mutex_init(mq_mutex *m) {
    return pthread_mutex_init(m, NULL) == 0;
}
static void mq_mutex_fini(mq_mutex *m) { pthread_mutex_destroy(m); }
static void mq_lock(mq_mutex *m) {
    int rc = pthread_mutex_lock(m);
    assert(rc == 0);
    (void)rc;
}
static void mq_unlock(mq_mutex *m) {
    int rc = pthread_mutex_unlock(m);
    assert(rc == 0);
    (void)rc;
}
#endif
/* ---- end of platform part -------------------------------------------- */

/* Tasks per chunk: 64 x 16 bytes plus a 16-byte header on 64-bit. Every
 * allocation is sizeof(chunk) or sizeof(ark_mainq), never a size computed
 * from a count (see "Sizes" in mainq.h). */
#define CHUNK_TASKS 64
/* Spare chunks a run keeps at least (64 KiB on 64-bit); see run. */
#define SPARE_MAX 64

typedef struct task {
    void (*fn)(void *arg);
    void *arg;
} task;

typedef struct chunk {
    struct chunk *next;
    uint32_t begin, end; /* live tasks are tasks[begin, end) */
    task tasks[CHUNK_TASKS];
} chunk;

struct ark_mainq {
    mq_mutex lock;
    /* Guarded by lock: */
    chunk *head, *tail; /* the queue; both NULL when empty */
    size_t queued;      /* tasks in the queue */
    chunk *spare;       /* recycled empty chunks */
    size_t nspare;
    bool running; /* a run has a batch out */
    /* Written by the running thread only, read by pending(). */
    _Atomic size_t batch_left;
    ark_allocator alloc;
};

ark_status ark_mainq_create(ark_mainq **out, const ark_allocator *a) {
    assert(out != NULL);
    ark_allocator al;
    ark_status s = ark__allocator_init(&al, a);
    if (s != ARK_OK) {
        return s;
    }
    ark_mainq *q = (ark_mainq *)ark__alloc(&al, sizeof *q, _Alignof(ark_mainq));
    if (q == NULL) {
        return ARK_ENOMEM;
    }
    memset(q, 0, sizeof *q);
    if (!mq_mutex_init(&q->lock)) {
        ark__free(&al, q, sizeof *q);
        return ARK_ENOMEM;
    }
    atomic_init(&q->batch_left, 0);
    q->alloc = al;
    *out = q;
    return ARK_OK;
}

static void free_chunks(const ark_allocator *a, chunk *c) {
    while (c != NULL) {
        chunk *next = c->next;
        ark__free(a, c, sizeof *c);
        c = next;
    }
}

void ark_mainq_destroy(ark_mainq *q) {
    if (q == NULL) {
        return;
    }
    assert(!q->running && "ark_mainq_destroy called from a task");
    ark_allocator al = q->alloc;
    free_chunks(&al, q->head);
    free_chunks(&al, q->spare);
    mq_mutex_fini(&q->lock);
    ark__free(&al, q, sizeof *q);
}

/* Return an empty chunk from the spare list or the allocator. Lock held. */
static chunk *chunk_get(ark_mainq *q) {
    chunk *c = q->spare;
    if (c != NULL) {
        q->spare = c->next;
        q->nspare--;
    } else {
        c = (chunk *)ark__alloc(&q->alloc, sizeof *c, _Alignof(chunk));
        if (c == NULL) {
            return NULL;
        }
    }
    c->next = NULL;
    c->begin = 0;
    c->end = 0;
    return c;
}

ark_status ark_mainq_post(ark_mainq *q, void (*fn)(void *arg), void *arg) {
    assert(q != NULL);
    if (fn == NULL) {
        return ARK_EINVAL;
    }
    mq_lock(&q->lock);
    chunk *t = q->tail;
    if (t == NULL || t->end == CHUNK_TASKS) {
        chunk *c = chunk_get(q);
        if (c == NULL) {
            mq_unlock(&q->lock);
            return ARK_ENOMEM;
        }
        if (t == NULL) {
            q->head = c;
        } else {
            t->next = c;
        }
        q->tail = t = c;
    }
    t->tasks[t->end].fn = fn;
    t->tasks[t->end].arg = arg;
    t->end++;
    q->queued++;
    mq_unlock(&q->lock);
    return ARK_OK;
}

size_t ark_mainq_run(ark_mainq *q, size_t max_tasks) {
    assert(q != NULL);
    mq_lock(&q->lock);
    if (q->running || q->queued == 0) {
        mq_unlock(&q->lock);
        return 0;
    }
    chunk *c = q->head, *batch_tail = q->tail;
    size_t total = q->queued;
    q->head = q->tail = NULL;
    q->queued = 0;
    q->running = true;
    atomic_store_explicit(&q->batch_left, total, memory_order_relaxed);
    mq_unlock(&q->lock);

    size_t want = max_tasks == 0 || max_tasks > total ? total : max_tasks;
    chunk *done = NULL; /* emptied chunks, for the spare list */
    size_t ndone = 0;
    for (size_t ran = 0; ran < want; ran++) {
        task t = c->tasks[c->begin++];
        if (c->begin == c->end) {
            chunk *next = c->next;
            c->next = done;
            done = c;
            ndone++;
            c = next;
        }
        atomic_store_explicit(&q->batch_left, total - ran - 1,
                              memory_order_relaxed);
        t.fn(t.arg);
    }

    mq_lock(&q->lock);
    if (want < total) {
        /* The unrun rest [c .. batch_tail] goes before tasks posted while
         * this run was going on. */
        batch_tail->next = q->head;
        if (q->head == NULL) {
            q->tail = batch_tail;
        }
        q->head = c;
        q->queued += total - want;
    }
    while (done != NULL) {
        chunk *next = done->next;
        done->next = q->spare;
        q->spare = done;
        q->nspare++;
        done = next;
    }
    size_t keep = ndone > SPARE_MAX ? ndone : SPARE_MAX;
    while (q->nspare > keep) {
        chunk *extra = q->spare;
        q->spare = extra->next;
        q->nspare--;
        ark__free(&q->alloc, extra, sizeof *extra);
    }
    atomic_store_explicit(&q->batch_left, 0, memory_order_relaxed);
    q->running = false;
    mq_unlock(&q->lock);
    return want;
}

size_t ark_mainq_drain(ark_mainq *q) {
    size_t total = 0;
    for (;;) {
        size_t n = ark_mainq_run(q, 0);
        if (n == 0) {
            return total;
        }
        total += n;
    }
}

size_t ark_mainq_pending(const ark_mainq *q) {
    assert(q != NULL);
    /* The mutex is not part of the queue's logical value; q points to an
     * object created non-const by ark_mainq_create. */
    ark_mainq *m = (ark_mainq *)q;
    mq_lock(&m->lock);
    size_t n =
        m->queued + atomic_load_explicit(&m->batch_left, memory_order_relaxed);
    mq_unlock(&m->lock);
    return n;
}
