/* SPDX-License-Identifier: MIT */
/*
 * ark/mainq.h - a main-thread task queue (after Cocos2d-x's
 * Scheduler::performFunctionInCocosThread).
 *
 * Any thread posts a function and its argument; the main loop calls
 * ark_mainq_run once per frame, which takes the queued tasks out under the
 * lock and runs them after unlocking. So a task may post new tasks without
 * deadlock (they wait for the next run, never the current one), and no
 * task ever runs while the lock is held. ark_mainq_run(q, 1) is Cocos2d-x's
 * "one texture upload per frame".
 *
 * Invariants:
 * - Tasks run in the order they were posted (FIFO), also across partial
 *   runs: tasks a bounded run leaves behind go back to the front of the
 *   queue, ahead of tasks posted while it ran.
 * - A run never runs a task posted after it started.
 * - Posting never loses a task: ARK_OK means it will run (or be discarded
 *   by ark_mainq_destroy), ARK_ENOMEM means it was not queued.
 *
 * Cost model: post is O(1) under a mutex and allocates only when no emptied
 * chunk is left to recycle. Tasks live in chunks of 64; a run keeps the
 * chunks it emptied for later posts (as many as it emptied, at least 64
 * chunks: 4,096 tasks), so a frame loop that posts about as many tasks
 * each frame does not allocate, and the next smaller run frees a burst's
 * extra chunks. run is O(1) under the lock plus the tasks it runs.
 *
 * Sizes: the queue allocates only its own struct and fixed-size chunks of
 * 64 tasks (about 1 KiB on 64-bit targets); no allocation size depends on
 * a count, so none can overflow. Pending tasks are bounded by memory only.
 *
 * Pointers: q and out must be non-NULL; fn NULL is ARK_EINVAL (post) and
 * arg is passed as is (it may be NULL); the allocator may be NULL (the C
 * library); ark_mainq_destroy(NULL) does nothing.
 *
 * Thread-safety: post and pending from any thread. run, drain and destroy
 * from one thread (the main thread); run and drain called from inside a
 * task (or concurrently from two threads) return 0 and run nothing.
 * post and run allocate and free only under the queue's mutex (create and
 * destroy before and after the queue is shared), so the allocator need not
 * be thread-safe if nothing else uses it.
 */
#ifndef ARK_MAINQ_H
#define ARK_MAINQ_H

#include "ark/core.h"

#ifdef __cplusplus
extern "C" {
#endif

/* A main-thread task queue. Opaque. */
typedef struct ark_mainq ark_mainq;

/*
 * Create an empty queue whose memory comes from a (NULL: the C library).
 * *out is set only on success.
 * Errors: ARK_EINVAL (allocator missing a function), ARK_ENOMEM (memory
 * or the mutex could not be had).
 */
ARK_API ark_status ark_mainq_create(ark_mainq **out, const ark_allocator *a);

/*
 * Free the queue. Pending tasks are discarded, NOT run: running them here
 * could touch systems the caller already shut down. To run them first,
 * stop the producers and call ark_mainq_drain. q may be NULL.
 * Thread-safety: no other thread may use q any more.
 */
ARK_API void ark_mainq_destroy(ark_mainq *q);

/*
 * Queue fn(arg) to run on the main thread. Safe from any thread, from
 * inside a task too (the task then runs in the next run).
 * Errors: ARK_EINVAL (fn NULL), ARK_ENOMEM (the task was not queued).
 * Complexity: O(1); allocates one chunk every 64 tasks only while the
 * queue holds more tasks than the last run emptied chunks for (and more
 * than 4,096).
 */
ARK_API ark_status ark_mainq_post(ark_mainq *q, void (*fn)(void *arg),
                                  void *arg);

/*
 * Run queued tasks on the calling (main) thread and return how many ran.
 * max_tasks = 0 runs every task queued when the call started; otherwise at
 * most max_tasks of them, oldest first, and the rest keep their place at
 * the front of the queue. Tasks posted meanwhile (by tasks or other
 * threads) wait for the next run. Returns 0 without running anything when
 * called from a task or while another run is in progress.
 */
ARK_API size_t ark_mainq_run(ark_mainq *q, size_t max_tasks);

/*
 * Run tasks until the queue is empty, including tasks posted by the tasks
 * themselves, and return how many ran. For shutdown: stop the producers,
 * drain, destroy. A task that always re-posts itself makes this loop
 * forever.
 */
ARK_API size_t ark_mainq_drain(ark_mainq *q);

/*
 * Return how many posted tasks have not started yet, including those of a
 * run in progress. From another thread it is a snapshot.
 */
ARK_API size_t ark_mainq_pending(const ark_mainq *q);

#ifdef __cplusplus
}
#endif

#endif /* ARK_MAINQ_H */
