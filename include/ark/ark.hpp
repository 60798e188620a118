/* SPDX-License-Identifier: MIT */
/*
 * ark/ark.hpp - the C++17 face of ark: typed, RAII, header-only over the C
 * API, whose headers stay the reference for every behaviour not restated
 * here. docs/cpp.md is the guide.
 *
 * What it adds:
 * - ark::handle<T>: a handle that knows what it names. Handles of
 *   different T never convert into each other (pool<A>::get(handle<B>)
 *   does not compile); .raw() gives the ark_handle for the wire.
 * - ark::pool<T>: typed elements of ANY type. Constructors run in place
 *   (insert copies, emplace forwards), destructors run exactly once when
 *   the element leaves the pool: by remove, by flush (for remove_later),
 *   by clear and by the pool's destructor. A pool may also take a removal
 *   hook of the caller's (any callable, by pointer: how the hook reaches
 *   other containers), run before ~T. A trivially destructible T without
 *   one installs no removal hook at all.
 * - Entities (ark/entity.hpp): any pool<E> holds entities; components<C,
 *   E> and keyed_table<E> hold data keyed by handle<E>, tag<E> marks
 *   entities, and ark::view(pos, vel) walks the entities that have every
 *   component, yielding (handle<E>, C &...) for structured bindings.
 *   Removing an entity removes its components and tags.
 * - ark::table (typed column pointers), ark::idset, ark::idmap (STL-like
 *   names), ark::ref_ptr<T>, ark::refvec<T> and ark::refmap<T> (Cocos2d-x
 *   Vector / Map counting: adding retains, removing releases, a copy
 *   retains every element, a move changes no count, at() is borrowed),
 *   ark::autorelease_pool and ark::mainq (posts any callable).
 *
 * Errors are values. Nothing here throws of its own, and it compiles with
 * -fno-exceptions -fno-rtti; an exception from the caller's constructor
 * (pool insert and emplace, make_ref, the callable mainq::post copies)
 * propagates with nothing left behind, and those functions are noexcept
 * exactly when that constructor is. A constructor that can fail (every
 * container allocates) leaves the object empty: test it with ok() (or operator
 * bool) and read last_status(). Calls that can fail return an ark_status, a
 * bool, or a null handle / null pointer with last_status() set.
 *
 * Cost: the hot paths (pool get and iteration, table row and column,
 * idmap find, idset at) are the C inline functions behind a static_cast;
 * a wrapper object is the C pointer plus, for the fallible containers,
 * one ark_status. bench/bench_pool_cpp.cpp measures pool<T> against the C
 * API in one process.
 *
 * Thread-safety: that of the C object wrapped (mainq::post from any
 * thread; everything else single-threaded or read-only sharing).
 */
#ifndef ARK_ARK_HPP
#define ARK_ARK_HPP

/* One header per module; include only the ones you use if you prefer. */
#include "ark/entity.hpp"
#include "ark/handle.hpp"
#include "ark/idmap.hpp"
#include "ark/idset.hpp"
#include "ark/mainq.hpp"
#include "ark/pool.hpp"
#include "ark/ref.hpp"
#include "ark/table.hpp"

#endif /* ARK_ARK_HPP */
