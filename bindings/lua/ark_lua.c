/* SPDX-License-Identifier: MIT */
/*
 * ark_lua.c - the Lua module "ark": value pools, typed tables and id sets,
 * and entities with components, tags and queries over them, for Lua 5.4
 * and LuaJIT 2.1 (the Lua 5.1 API), through ark's public C API only. The
 * manual is docs/lua.md.
 *
 * Objects. Every container is a full userdata holding a small C struct
 * (the ark container pointer, NULL once closed) and one user value, its
 * "env" table:
 * - pool: env[i] is the Lua value of the element in slot i (the slot index
 *   of its handle; slot 0 is never used), env[0] the Lua on_remove hook.
 *   The C pool's elements are one unused byte: the pool gives the handle
 *   rules, the values table the storage.
 * - table: env[k] is the name of column k (1-based), env[0] the hook. The
 *   C struct keeps a pointer to each name's characters: Lua strings never
 *   move, and equal short strings are one object in both interpreters, so
 *   a column is found by comparing pointers first.
 * - an entity pool's env also holds each of its keyed containers and
 *   attached id sets, at the light userdata of its C struct; a keyed
 *   container's holds its entity pool at LARK_KEYS (see "Worlds", below).
 * Iterators, rows, column views and queries are userdata or closures that
 * keep their containers alive and check that they are still open at
 * every step.
 *
 * Handles are Lua integers (under LuaJIT, numbers below 2^53: a layout is
 * refused above 53 bits). Any Lua value may be given where a handle or an
 * id is read from a client: lark_int accepts exactly the numbers whose
 * value is an integer in int64_t's range, and everything else makes a
 * lookup miss instead of raising.
 *
 * Removal hooks. ark calls a C hook (pool_hook, table_hook) from inside
 * remove, flush and clear. It must not longjmp through ark, so it runs the
 * Lua hook under lua_pcall, with the state and stack slots that the
 * method calling ark saved (lark_run): the env table and a slot for the
 * first error, which the method raises once ark has returned and the
 * containers are consistent again. Nothing that could raise (allocate)
 * runs in the C hook outside the pcall: rawget(i), pushes of numbers and
 * light userdata, and rawseti of nil over an existing key do not
 * allocate. A hook may call back into any container: ark defers what it
 * must. Every pool has the C hook, which drops the Lua values.
 *
 * Worlds. Removing an entity runs the hooks of its pool and of every
 * container keyed by it from one call into ark, so the run is kept by
 * the entity pool (the world) for all of them; a hook of a keyed
 * container finds its env through the entity pool's. Closing a container
 * of a world, or detaching a set, while a hook of the world runs would
 * change the list ark walks: it raises.
 */
#include "ark/ark.h"

#include <lauxlib.h>
#include <lua.h>

#include <float.h>
#include <limits.h>
#include <math.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#if LUA_VERSION_NUM >= 504
#define LARK_INTEGERS 1
#define LARK_MAX_BITS 64
#define lark_newud(L, n) lua_newuserdatauv((L), (n), 1)
#define lark_getenv(L, i) ((void)lua_getiuservalue((L), (i), 1))
#define lark_setenv(L, i) ((void)lua_setiuservalue((L), (i), 1))
#define lark_rawlen(L, i) lua_rawlen((L), (i))
#elif LUA_VERSION_NUM == 501
/* Lua 5.1 and LuaJIT: numbers are doubles, exact up to 2^53. */
#define LARK_INTEGERS 0
#define LARK_MAX_BITS 53
#define lark_newud(L, n) lua_newuserdata((L), (n))
#define lark_getenv(L, i) lua_getfenv((L), (i))
#define lark_setenv(L, i) ((void)lua_setfenv((L), (i)))
#define lark_rawlen(L, i) lua_objlen((L), (i))
#else
#error "the ark Lua module is built for Lua 5.4 or LuaJIT 2.1 (Lua 5.1 API)"
#endif

#if defined(__GNUC__) || defined(__clang__)
#define LARK_EXPORT __attribute__((visibility("default")))
#else
#define LARK_EXPORT
#endif

/* The most columns a typed table has (a row is converted on the stack
 * before it is written). */
#define LARK_MAX_COLUMNS 256

/* ---- helpers shared by every type ---- */

/* The absolute form of stack index idx. */
static int lark_abs(lua_State *L, int idx) {
    return idx > 0 || idx <= LUA_REGISTRYINDEX ? idx : lua_gettop(L) + idx + 1;
}

/* Read the value at idx as an integer: true for a number whose value is an
 * integer in int64_t's range (3 and 3.0; not 3.5, NaN, inf, "3" or nil). */
static bool lark_int(lua_State *L, int idx, int64_t *out) {
#if LARK_INTEGERS
    if (lua_isinteger(L, idx)) {
        *out = (int64_t)lua_tointeger(L, idx);
        return true;
    }
#endif
    if (lua_type(L, idx) != LUA_TNUMBER) {
        return false;
    }
    lua_Number d = lua_tonumber(L, idx);
    if (!(d >= -0x1p63 && d < 0x1p63) || d != floor(d)) {
        return false;
    }
    *out = (int64_t)d;
    return true;
}

/* Read a handle (any integer; bits the layout does not have make it miss). */
static bool lark_handle(lua_State *L, int idx, ark_handle *h) {
    int64_t v;
    if (!lark_int(L, idx, &v)) {
        return false;
    }
    *h = (ark_handle)v;
    return true;
}

static void lark_push_u64(lua_State *L, uint64_t v) {
    lua_pushinteger(L, (lua_Integer)(int64_t)v);
}

/* Push fmt formatted with a and b (lua_pushfstring has no 64-bit integer
 * conversion in LuaJIT). */
static void lark_pushf(lua_State *L, const char *fmt, unsigned long long a,
                       unsigned long long b) {
    char buf[96];
    snprintf(buf, sizeof buf, fmt, a, b);
    lua_pushstring(L, buf);
}

/* Push env[i] (env an absolute index). */
static void lark_env_get(lua_State *L, int env, uint64_t i) {
#if LARK_INTEGERS
    lua_rawgeti(L, env, (lua_Integer)i);
#else
    if (i <= INT_MAX) {
        lua_rawgeti(L, env, (int)i);
    } else {
        lua_pushnumber(L, (lua_Number)i);
        lua_rawget(L, env);
    }
#endif
}

/* Pop the top value into env[i] (env an absolute index). */
static void lark_env_set(lua_State *L, int env, uint64_t i) {
#if LARK_INTEGERS
    lua_rawseti(L, env, (lua_Integer)i);
#else
    if (i <= INT_MAX) {
        lua_rawseti(L, env, (int)i);
    } else {
        lua_pushnumber(L, (lua_Number)i);
        lua_insert(L, -2);
        lua_rawset(L, env);
    }
#endif
}

/* Every userdata the module hands to Lua starts with a tag: the address
 * of its type's name, a static string of this module. lark_test reads it
 * from a full userdata at least a pointer long. Three API calls instead
 * of fetching and comparing metatables (six): a column view's c[i] read
 * took 770 -> 640 instructions (callgrind, Lua 5.4). A userdata of
 * another library carries that address only if it copies it from here. */
static const char LARK_POOL[] = "ark.pool";
static const char LARK_TABLE[] = "ark.table";
static const char LARK_IDSET[] = "ark.idset";
static const char LARK_ROW[] = "ark.row";
static const char LARK_COLUMN[] = "ark.column";
static const char LARK_BUFFER[] = "ark.buffer";
static const char LARK_QUERY[] = "ark.query";

/* Return the userdata at idx if it has tag (one of the names above). */
static void *lark_test(lua_State *L, int idx, const char *tag) {
    void *u = lua_touserdata(L, idx);
    if (u == NULL || lua_type(L, idx) != LUA_TUSERDATA ||
        lark_rawlen(L, idx) < sizeof(const char *) ||
        *(const char *const *)u != tag) {
        return NULL;
    }
    return u;
}

/* The method's self (argument 1), which must have tag. */
static void *lark_self(lua_State *L, const char *tag) {
    void *u = lark_test(L, 1, tag);
    if (u == NULL) {
        luaL_error(L, "%s: method called on a %s (call methods with ':')", tag,
                   luaL_typename(L, 1));
    }
    return u;
}

/* Keep the value at idx alive as long as the userdata at ud: its user
 * value (LuaJIT's must be a table). */
static void lark_anchor(lua_State *L, int ud, int idx) {
    ud = lark_abs(L, ud);
    idx = lark_abs(L, idx);
#if LARK_INTEGERS
    lua_pushvalue(L, idx);
#else
    lua_createtable(L, 1, 0);
    lua_pushvalue(L, idx);
    lua_rawseti(L, -2, 1);
#endif
    lark_setenv(L, ud);
}

/* Push the value lark_anchor keeps for the userdata at ud (nil if none). */
static void lark_push_anchor(lua_State *L, int ud) {
    lark_getenv(L, ud);
#if !LARK_INTEGERS
    if (lua_type(L, -1) == LUA_TTABLE) {
        lua_rawgeti(L, -1, 1);
        lua_remove(L, -2);
    } else {
        lua_pop(L, 1);
        lua_pushnil(L);
    }
#endif
}

/* The word a status maps to in results ("stale", "full", ...). */
static const char *lark_word(ark_status st) {
    static const char *const words[] = {[ARK_OK] = "ok",
                                        [ARK_ESTALE] = "stale",
                                        [ARK_ERANGE] = "range",
                                        [ARK_ENULL] = "null",
                                        [ARK_EFOREIGN] = "foreign",
                                        [ARK_EEXIST] = "exists",
                                        [ARK_EFULL] = "full",
                                        [ARK_EINVAL] = "invalid",
                                        [ARK_ENOTFOUND] = "notfound",
                                        [ARK_ECORRUPT] = "corrupt"};
    size_t i = (size_t)st;
    return i < sizeof words / sizeof *words && words[i] != NULL ? words[i]
                                                                : "error";
}

/* Raise for ARK_ENOMEM, the one status no result stands for. */
static void lark_nomem(lua_State *L, ark_status st, const char *who) {
    if (st == ARK_ENOMEM) {
        luaL_error(L, "%s: %s", who, ark_strerror(st));
    }
}

/* Push nil and the word for st (a failed insert_at, a refused load). */
static int lark_fail(lua_State *L, ark_status st) {
    lua_pushnil(L);
    lua_pushstring(L, lark_word(st));
    return 2;
}

/* ---- options ---- */

/* Raise unless every key of the options table at idx is one of names. */
static void lark_opts_check(lua_State *L, int idx, const char *who,
                            const char *const *names) {
    if (lua_isnoneornil(L, idx)) {
        return;
    }
    luaL_checktype(L, idx, LUA_TTABLE);
    lua_pushnil(L);
    while (lua_next(L, idx) != 0) {
        lua_pop(L, 1);
        bool known = false;
        if (lua_type(L, -1) == LUA_TSTRING) {
            const char *k = lua_tostring(L, -1);
            for (size_t i = 0; names[i] != NULL && !known; i++) {
                known = strcmp(k, names[i]) == 0;
            }
        }
        if (!known) {
            luaL_error(L, "%s: unknown option '%s'", who,
                       lua_type(L, -1) == LUA_TSTRING ? lua_tostring(L, -1)
                                                      : luaL_typename(L, -1));
        }
    }
}

/* Read integer option key of the table at idx (absent: def), in [lo, hi]. */
static int64_t lark_opt_int(lua_State *L, int idx, const char *who,
                            const char *key, int64_t def, int64_t lo,
                            int64_t hi) {
    if (lua_isnoneornil(L, idx)) {
        return def;
    }
    lua_getfield(L, idx, key);
    int64_t v = def;
    if (!lua_isnil(L, -1) && (!lark_int(L, -1, &v) || v < lo || v > hi)) {
        char range[64];
        snprintf(range, sizeof range, "[%lld, %lld]", (long long)lo,
                 (long long)hi);
        luaL_error(L, "%s: option %s must be an integer in %s", who, key,
                   range);
    }
    lua_pop(L, 1);
    return v;
}

/* Push option on_remove of the table at idx: a function or nil. */
static bool lark_opt_hook(lua_State *L, int idx, const char *who) {
    if (lua_isnoneornil(L, idx)) {
        lua_pushnil(L);
        return false;
    }
    lua_getfield(L, idx, "on_remove");
    if (!lua_isnil(L, -1) && lua_type(L, -1) != LUA_TFUNCTION) {
        luaL_error(L, "%s: option on_remove must be a function", who);
    }
    return !lua_isnil(L, -1);
}

/* A handle layout read from options, with Lua's defaults. */
typedef struct lark_layout {
    unsigned index_bits, gen_bits, tag_bits;
    uint64_t tag, seal_key;
} lark_layout;

static void lark_opt_layout(lua_State *L, int idx, const char *who,
                            lark_layout *l) {
    l->index_bits =
        (unsigned)lark_opt_int(L, idx, who, "index_bits", 32, 1, 32);
    l->gen_bits = (unsigned)lark_opt_int(L, idx, who, "gen_bits", 20, 1, 32);
    l->tag_bits = (unsigned)lark_opt_int(L, idx, who, "tag_bits", 0, 0, 62);
    l->tag = (uint64_t)lark_opt_int(L, idx, who, "tag", 0, 0, INT64_MAX);
    l->seal_key = (uint64_t)lark_opt_int(L, idx, who, "seal_key", 0, INT64_MIN,
                                         INT64_MAX);
    if (l->index_bits + l->gen_bits + l->tag_bits > LARK_MAX_BITS) {
        luaL_error(L,
                   "%s: index_bits + gen_bits + tag_bits is %d, above the "
                   "%d bits a handle can have in this Lua",
                   who, (int)(l->index_bits + l->gen_bits + l->tag_bits),
                   LARK_MAX_BITS);
    }
}

/* ---- what pools and tables share ---- */

typedef struct lbox lbox;

/* Where the C hook of a container finds Lua while ark runs it: the state
 * of the method that called ark, that method's container (the owner), its
 * env slot and its error slot. */
typedef struct lark_run {
    lua_State *L;
    int env;
    int err;
    const lbox *owner;
} lark_run;

/* The head of a pool's and a table's userdata.
 *
 * Worlds. An entity pool and the containers keyed by it form a world:
 * removing an entity runs hooks of several of them from one call into
 * ark. So the run lives in the world (the entity pool; a container keyed
 * by none is a world of its own), and whichever of its containers calls
 * ark sets it. A keyed container's hook that runs in a cascade finds its
 * env through the entity pool's env, where each keyed container and
 * attached id set is stored at the light userdata of its C struct (which
 * also keeps them alive while the entity pool is: a collection in the
 * middle of a cascade cannot take one away). A keyed container keeps its
 * entity pool alive at env[LARK_KEYS]. */
struct lbox {
    const char *tag; /* LARK_POOL or LARK_TABLE */
    union {          /* NULL once closed */
        void *c;
        ark_pool *pool;
        ark_table *t;
    };
    lbox *world;  /* the entity pool if keyed, else itself */
    lark_run run; /* the world's: the innermost call into ark */
    lark_layout layout;
    unsigned busy;    /* this container's calls into ark, in progress */
    unsigned inhook;  /* this container's Lua hooks, running */
    unsigned wbusy;   /* the world's: calls of any of its containers */
    unsigned members; /* an entity pool's keyed containers and tag sets */
    bool hook;        /* a Lua on_remove is set */
    bool keyed;       /* created with keys = an entity pool */
};

/* env[LARK_KEYS] of a keyed container: its entity pool's userdata. */
#define LARK_KEYS (-1)

typedef struct lpool {
    lbox b;
    uint64_t index_mask; /* a handle's slot index: its key in env */
    ark_handle drop;     /* an entity whose value goes once it is gone */
} lpool;

/* An id set; world is the entity pool it is attached to (kept alive by
 * the set's user value meanwhile), or NULL. */
typedef struct lidset {
    const char *tag;  /* LARK_IDSET */
    ark_idset *s;     /* NULL once closed */
    uint64_t version; /* changes with every insert and remove from Lua */
    lbox *world;
} lidset;

static bool is_pool(const lbox *b) { return b->tag == LARK_POOL; }

/* The pool or table at idx, or NULL. */
static lbox *lark_box(lua_State *L, int idx) {
    lbox *b = lark_test(L, idx, LARK_POOL);
    return b != NULL ? b : lark_test(L, idx, LARK_TABLE);
}

/* The open pool or table that is the method's self. */
static lbox *check_box(lua_State *L) {
    lbox *b = lark_box(L, 1);
    if (b == NULL) {
        luaL_error(L, "ark: method called on a %s (call methods with ':')",
                   luaL_typename(L, 1));
    }
    if (b->c == NULL) {
        luaL_error(L, "%s: the container is closed", b->tag);
    }
    return b;
}

static lpool *check_pool(lua_State *L) {
    lpool *p = lark_self(L, LARK_POOL);
    if (p->b.pool == NULL) {
        luaL_error(L, "ark.pool: the container is closed");
    }
    return p;
}

/* Clear env[i] (env an absolute index) if it holds a value: a key that
 * is there already takes nil without allocating. */
static void lark_env_clear(lua_State *L, int env, uint64_t i) {
    lark_env_get(L, env, i);
    bool held = !lua_isnil(L, -1);
    lua_pop(L, 1);
    if (held) {
        lua_pushnil(L);
        lark_env_set(L, env, i);
    }
}

/* Drop the value of p's element h, removed by now (env: p's env), unless
 * its slot holds a new element already. */
static void pool_drop_removed(lua_State *L, lpool *p, int env, ark_handle h) {
    uint64_t i = h & p->index_mask;
    if (ark_pool_handle_by_id(p->b.pool, (uint32_t)i) == ARK_NULL_HANDLE) {
        lark_env_clear(L, env, i);
    }
}

/* Before a call into ark that may run hooks: remember the world's run (a
 * hook may call back), push env (of self) and an empty error slot. */
static void lark_enter(lua_State *L, lbox *b, lark_run *saved) {
    lbox *w = b->world;
    *saved = w->run;
    lark_getenv(L, 1);
    w->run.env = lua_gettop(L);
    lua_pushnil(L);
    w->run.err = lua_gettop(L);
    w->run.L = L;
    w->run.owner = b;
    b->busy++;
    w->wbusy++;
}

/* After it: drop a pool's last removed value, restore, and raise the
 * first error a hook raised. */
static void lark_leave(lua_State *L, lbox *b, const lark_run *saved) {
    lbox *w = b->world;
    int err = w->run.err;
    lpool *p = (lpool *)b;
    if (is_pool(b) && b->busy == 1 && p->drop != ARK_NULL_HANDLE) {
        pool_drop_removed(L, p, w->run.env, p->drop);
        p->drop = ARK_NULL_HANDLE;
    }
    w->run = *saved;
    b->busy--;
    w->wbusy--;
    if (!lua_isnil(L, err)) {
        lua_pushvalue(L, err);
        lua_error(L);
    }
}

/* Call the function below nargs arguments at the top of run->L, keeping
 * the first error in the run's error slot. */
static void lark_call_hook(const lark_run *run, lbox *b, int nargs) {
    lua_State *L = run->L;
    b->inhook++;
    if (lua_pcall(L, nargs, 0, 0) != 0) {
        if (lua_isnil(L, run->err)) {
            lua_replace(L, run->err);
        } else {
            lua_pop(L, 1);
        }
    }
    b->inhook--;
}

/* Push the env of b for its C hook and return true: the run's own (b's
 * method called ark), or, in a removal cascading from b's entity pool
 * (the owner), b's through the pool's env. Allocates nothing. */
static bool hook_env(lua_State *L, const lark_run *run, lbox *b) {
    if (run->owner == b) {
        lua_pushvalue(L, run->env);
        return true;
    }
    if (run->owner != b->world) {
        return false; /* no call of b's world runs: cannot happen */
    }
    lua_pushlightuserdata(L, b);
    lua_rawget(L, run->env);
    if (lua_type(L, -1) != LUA_TUSERDATA) {
        lua_pop(L, 1);
        return false;
    }
    lark_getenv(L, -1);
    lua_remove(L, -2);
    return true;
}

/* The C hook of every pool: run the Lua hook (if any) with (h, value),
 * then drop the value. An entity's value stays until its removal has
 * finished (the hooks of its keyed containers run after this one and may
 * read it): it goes at the next removal or when the call returns. Any
 * other pool's goes at once. A call into ark that did not set the run
 * (remove on a pool with no Lua hook and no keyed container: nothing to
 * run, and the method drops the value itself) finds none (L NULL), or
 * another container's: then this pool is not its owner's world and the
 * hook does nothing. */
static void pool_hook(void *elem, ark_handle h, void *user) {
    (void)elem;
    lpool *p = user;
    const lark_run *run = &p->b.world->run;
    lua_State *L = run->L;
    if (L == NULL || !lua_checkstack(L, 6) || !hook_env(L, run, &p->b)) {
        return;
    }
    int env = lua_gettop(L);
    uint64_t i = h & p->index_mask;
    if (p->drop != ARK_NULL_HANDLE) {
        pool_drop_removed(L, p, env, p->drop);
        p->drop = ARK_NULL_HANDLE;
    }
    if (p->b.hook) {
        lua_rawgeti(L, env, 0);
        lark_push_u64(L, h);
        lark_env_get(L, env, i);
        lark_call_hook(run, &p->b, 2);
    }
    if (p->b.keyed || p->b.members == 0) {
        lark_env_clear(L, env, i);
    } else {
        if (p->drop != ARK_NULL_HANDLE) { /* a hook's own removal */
            pool_drop_removed(L, p, env, p->drop);
        }
        p->drop = h;
    }
    lua_pop(L, 1);
}

/* p:remove(h), t:remove(h) */
static int l_remove(lua_State *L) {
    lbox *b = check_box(L);
    ark_handle h;
    if (!lark_handle(L, 2, &h)) {
        lua_pushboolean(L, 0);
        return 1;
    }
    /* Hooks to run: a Lua one, or an entity's keyed containers'. Else
     * the removal is over when ark returns, and a pool drops the value
     * here. */
    bool enter = b->hook || b->members != 0;
    lark_run saved;
    if (enter) {
        lark_enter(L, b, &saved);
    }
    ark_status st =
        is_pool(b) ? ark_pool_remove(b->pool, h) : ark_table_remove(b->t, h);
    if (enter) {
        lark_leave(L, b, &saved);
    } else if (st == ARK_OK && is_pool(b)) {
        lark_getenv(L, 1);
        lark_env_clear(L, lua_gettop(L), h & ((lpool *)b)->index_mask);
    }
    lark_nomem(L, st, "remove");
    lua_pushboolean(L, st == ARK_OK);
    return 1;
}

/* p:remove_later(h), t:remove_later(h): get gives nil at once; a pool's
 * value goes at the flush. */
static int l_remove_later(lua_State *L) {
    lbox *b = check_box(L);
    ark_handle h;
    if (!lark_handle(L, 2, &h)) {
        lua_pushboolean(L, 0);
        return 1;
    }
    ark_status st = is_pool(b) ? ark_pool_remove_later(b->pool, h)
                               : ark_table_remove_later(b->t, h);
    lark_nomem(L, st, "remove_later");
    lua_pushboolean(L, st == ARK_OK);
    return 1;
}

/* p:flush(), t:flush() */
static int l_flush(lua_State *L) {
    lbox *b = check_box(L);
    bool enter = b->hook || is_pool(b); /* a pool's C hook drops values */
    lark_run saved;
    if (enter) {
        lark_enter(L, b, &saved);
    }
    size_t n = is_pool(b) ? ark_pool_flush(b->pool) : ark_table_flush(b->t);
    if (enter) {
        lark_leave(L, b, &saved);
    }
    lua_pushinteger(L, (lua_Integer)n);
    return 1;
}

/* Drop every value of env (at idx): after a clear. */
static void lark_wipe(lua_State *L, int env) {
    env = lark_abs(L, env);
    lua_pushnil(L);
    while (lua_next(L, env) != 0) {
        lua_pop(L, 1);
        if (lua_type(L, -1) == LUA_TNUMBER && lua_tonumber(L, -1) >= 1) {
            lua_pushvalue(L, -1);
            lua_pushnil(L);
            lua_rawset(L, env);
        }
    }
}

/* Drop the values of the pools keyed by the entity pool whose env is at
 * env: after a clear that ran no hook. */
static void wipe_keyed_pools(lua_State *L, int env) {
    env = lark_abs(L, env);
    lua_pushnil(L);
    while (lua_next(L, env) != 0) {
        lbox *m = lua_type(L, -2) == LUA_TLIGHTUSERDATA
                      ? lark_test(L, -1, LARK_POOL)
                      : NULL;
        if (m != NULL) {
            lark_getenv(L, -1);
            lark_wipe(L, -1);
            lua_pop(L, 1);
        }
        lua_pop(L, 1);
    }
}

/* p:clear([run_hook]), t:clear([run_hook]) */
static int l_clear(lua_State *L) {
    lbox *b = check_box(L);
    bool run_hook = lua_toboolean(L, 2) && (b->hook || is_pool(b));
    if (b->busy != 0 || b->inhook != 0) {
        return 0; /* from a hook: ark does nothing either */
    }
    lark_run saved;
    if (run_hook) {
        lark_enter(L, b, &saved);
    }
    if (is_pool(b)) {
        ark_pool_clear(b->pool, run_hook);
        lark_getenv(L, 1);
        lark_wipe(L, -1);
        if (!run_hook && b->members != 0) {
            wipe_keyed_pools(L, -1);
        }
        lua_pop(L, 1);
        ((lpool *)b)->drop = ARK_NULL_HANDLE;
    } else {
        ark_table_clear(b->t, run_hook);
    }
    if (run_hook) {
        lark_leave(L, b, &saved);
    }
    return 0;
}

/* p:check(h), t:check(h) */
static int l_check(lua_State *L) {
    lbox *b = check_box(L);
    ark_handle h;
    if (!lark_handle(L, 2, &h)) {
        lua_pushstring(L, "invalid");
    } else {
        lua_pushstring(L, lark_word(is_pool(b) ? ark_pool_check(b->pool, h)
                                               : ark_table_check(b->t, h)));
    }
    return 1;
}

/* #p, #t: live elements or rows (marked ones excluded). */
static int l_len(lua_State *L) {
    lbox *b = check_box(L);
    size_t n = is_pool(b) ? ark_pool_count(b->pool) : ark_table_count(b->t);
    lua_pushinteger(L, (lua_Integer)n);
    return 1;
}

/* p:reserve(n), t:reserve(n) */
static int l_reserve(lua_State *L) {
    lbox *b = check_box(L);
    int64_t n;
    if (!lark_int(L, 2, &n) || n < 0) {
        return luaL_error(L, "%s:reserve: n must be an integer >= 0", b->tag);
    }
    ark_status st = is_pool(b) ? ark_pool_reserve(b->pool, (size_t)n)
                               : ark_table_reserve(b->t, (size_t)n);
    lark_nomem(L, st, "reserve");
    lua_pushboolean(L, st == ARK_OK);
    return 1;
}

/* p:seal(h), p:unseal(wire) and the table's: nil for a value that is not
 * an integer. */
static int seal_or_unseal(lua_State *L, bool seal) {
    lbox *b = check_box(L);
    ark_handle h;
    if (!lark_handle(L, 2, &h)) {
        lua_pushnil(L);
    } else if (is_pool(b)) {
        lark_push_u64(L, seal ? ark_pool_seal(b->pool, h)
                              : ark_pool_unseal(b->pool, h));
    } else {
        lark_push_u64(L, seal ? ark_table_seal(b->t, h)
                              : ark_table_unseal(b->t, h));
    }
    return 1;
}

static int l_seal(lua_State *L) { return seal_or_unseal(L, true); }

static int l_unseal(lua_State *L) { return seal_or_unseal(L, false); }

/* p:layout(), t:layout(): the handle layout as options, so that a table
 * can be keyed by another container's handles. */
static int l_layout(lua_State *L) {
    const lark_layout *l = &check_box(L)->layout;
    lua_createtable(L, 0, 4);
    lua_pushinteger(L, (lua_Integer)l->index_bits);
    lua_setfield(L, -2, "index_bits");
    lua_pushinteger(L, (lua_Integer)l->gen_bits);
    lua_setfield(L, -2, "gen_bits");
    lua_pushinteger(L, (lua_Integer)l->tag_bits);
    lua_setfield(L, -2, "tag_bits");
    lark_push_u64(L, l->tag);
    lua_setfield(L, -2, "tag");
    return 1;
}

static void box_destroy(lbox *b) {
    if (is_pool(b)) {
        ark_pool_destroy(b->pool);
    } else {
        ark_table_destroy(b->t);
    }
    b->c = NULL;
}

/* A member joins the world of entity pool w (userdata at wud): its
 * userdata (at mud) is stored in w's env at the light userdata member. */
static void world_join(lua_State *L, lbox *w, int wud, void *member, int mud) {
    wud = lark_abs(L, wud);
    mud = lark_abs(L, mud);
    lark_getenv(L, wud);
    lua_pushlightuserdata(L, member);
    lua_pushvalue(L, mud);
    lua_rawset(L, -3);
    lua_pop(L, 1);
    w->members++;
}

/* A member leaves it (closed, or a set detached). */
static void world_leave(lua_State *L, lbox *w, int wud, void *member) {
    if (w->c == NULL) {
        return; /* closed: its env went, with the members */
    }
    lark_getenv(L, lark_abs(L, wud));
    lua_pushlightuserdata(L, member);
    lua_pushnil(L);
    lua_rawset(L, -3);
    lua_pop(L, 1);
    w->members--;
}

/* Before an entity pool (self at 1) closes: its id sets are attached to
 * nothing any more (ark detaches them). */
static void world_close(lua_State *L) {
    lark_getenv(L, 1);
    int env = lua_gettop(L);
    lua_pushnil(L);
    while (lua_next(L, env) != 0) {
        lidset *s = lua_type(L, -2) == LUA_TLIGHTUSERDATA
                        ? lark_test(L, -1, LARK_IDSET)
                        : NULL;
        if (s != NULL) {
            s->world = NULL;
        }
        lua_pop(L, 1);
    }
    lua_pop(L, 1);
}

/* p:close(), t:close(), __close */
static int l_close(lua_State *L) {
    lbox *b = lark_box(L, 1);
    if (b == NULL || b->c == NULL) {
        return 0;
    }
    if (b->world->wbusy != 0) {
        return luaL_error(L,
                          "%s: cannot close it while a removal hook of its "
                          "world runs",
                          b->tag);
    }
    if (b->members != 0) {
        world_close(L);
    }
    box_destroy(b);
    if (b->keyed) {
        lark_getenv(L, 1);
        lua_rawgeti(L, -1, LARK_KEYS);
        world_leave(L, b->world, -1, b);
        lua_pop(L, 2);
    }
    if (is_pool(b)) { /* release the values (and members) at once */
#if LARK_INTEGERS
        lua_pushnil(L);
#else
        lua_newtable(L);
#endif
        lark_setenv(L, 1);
    }
    return 0;
}

/* __gc: a keyed container and its entity pool keep each other alive, so
 * they go in the same cycle, in any order: ark detaches whichever is
 * left. */
static int l_gc(lua_State *L) {
    lbox *b = lark_box(L, 1);
    if (b != NULL) {
        box_destroy(b);
    }
    return 0;
}

static int l_tostring(lua_State *L) {
    lbox *b = lark_box(L, 1);
    if (b == NULL || b->c == NULL) {
        lua_pushfstring(L, "%s (closed)", b != NULL ? b->tag : "?");
    } else if (is_pool(b)) {
        lark_pushf(L,
                   b->keyed ? "ark.pool (%llu live, keyed)"
                            : "ark.pool (%llu live)",
                   (unsigned long long)ark_pool_count(b->pool), 0);
    } else {
        lark_pushf(L,
                   b->keyed ? "ark.table (%llu rows, keyed)"
                            : "ark.table (%llu rows)",
                   (unsigned long long)ark_table_count(b->t), 0);
    }
    return 1;
}

/* ---- pool ---- */

static const char *const pool_options[] = {
    "on_remove", "index_bits", "gen_bits", "tag_bits",
    "tag",       "seal_key",   "keys",     NULL};

/* Read option keys of the options at idx and push it: the entity pool
 * whose handles key the new container (returned), or nil (NULL). The
 * layout is the entity pool's: layout options beside it raise. */
static lpool *lark_opt_keys(lua_State *L, int idx, const char *who) {
    static const char *const layout_options[] = {
        "index_bits", "gen_bits", "tag_bits", "tag", "seal_key", NULL};
    if (lua_isnoneornil(L, idx)) {
        lua_pushnil(L);
        return NULL;
    }
    lua_getfield(L, idx, "keys");
    if (lua_isnil(L, -1)) {
        return NULL;
    }
    lpool *k = lark_test(L, -1, LARK_POOL);
    if (k == NULL || k->b.pool == NULL || k->b.keyed) {
        luaL_error(L,
                   "%s: option keys must be an open ark.pool keyed by "
                   "nothing (the entities)",
                   who);
    }
    for (size_t i = 0; layout_options[i] != NULL; i++) {
        lua_getfield(L, idx, layout_options[i]);
        if (!lua_isnil(L, -1)) {
            luaL_error(L,
                       "%s: option %s goes with keys: the entity pool's "
                       "layout applies",
                       who, layout_options[i]);
        }
        lua_pop(L, 1);
    }
    return k;
}

/* Make the container at top keyed by k (its userdata at kud): it joins
 * k's world, and keeps k alive at env[LARK_KEYS]. */
static void keyed_join(lua_State *L, lbox *b, lpool *k, int kud) {
    kud = lark_abs(L, kud);
    b->keyed = true;
    b->world = &k->b;
    b->layout = k->b.layout;
    lark_getenv(L, -1);
    lua_pushvalue(L, kud);
    lua_rawseti(L, -2, LARK_KEYS);
    lua_pop(L, 1);
}

/* ark.pool([opts]) */
static int l_pool_new(lua_State *L) {
    const char *who = "ark.pool";
    lua_settop(L, 1);
    lark_opts_check(L, 1, who, pool_options);
    lpool *k = lark_opt_keys(L, 1, who); /* pushes it or nil: at 2 */
    lark_layout l;
    if (k == NULL) {
        lark_opt_layout(L, 1, who, &l);
    } else {
        l = k->b.layout;
    }
    bool hook = lark_opt_hook(L, 1, who); /* pushes the hook or nil */
    lpool *p = lark_newud(L, sizeof *p);
    memset(p, 0, sizeof *p);
    p->b.tag = LARK_POOL;
    p->b.world = &p->b;
    lua_pushvalue(L, lua_upvalueindex(1));
    lua_setmetatable(L, -2);
    lua_createtable(L, 0, 1);
    lua_pushvalue(L, -3);
    lua_rawseti(L, -2, 0);
    lark_setenv(L, -2);
    p->b.layout = l;
    p->b.hook = hook;
    p->index_mask = ((uint64_t)1 << l.index_bits) - 1;
    /* The C hook is set whatever the options: it drops the values, at the
     * end of each removal, which a cascade from an entity pool may run at
     * any time. */
    ark_pool_config cfg = {
        .elem_size = 1, .elem_align = 1, .on_remove = pool_hook, .user = p};
    if (k != NULL) {
        keyed_join(L, &p->b, k, 2);
        world_join(L, &k->b, 2, p, -1); /* may raise: before ark */
        cfg.keys = k->b.pool;
    } else {
        cfg.index_bits = l.index_bits;
        cfg.gen_bits = l.gen_bits;
        cfg.tag_bits = l.tag_bits;
        cfg.tag = l.tag;
        cfg.seal_key = l.seal_key;
    }
    ark_status st = ark_pool_create(&p->b.pool, &cfg);
    if (st != ARK_OK && k != NULL) {
        world_leave(L, &k->b, 2, p);
    }
    lark_nomem(L, st, who);
    if (st != ARK_OK) {
        luaL_error(L, "%s: invalid layout (%s)", who, ark_strerror(st));
    }
    return 1;
}

/* Raise for insert on a keyed container. */
static void not_keyed(lua_State *L, const lbox *b, const char *who) {
    if (b->keyed) {
        luaL_error(L,
                   "%s: a keyed container takes elements with "
                   "insert_at(entity, ...)",
                   who);
    }
}

/* Raise for insert_at on a keyed container whose entity pool is closed
 * (ark refuses every element then). */
static void keys_open(lua_State *L, const lbox *b, const char *who) {
    if (b->keyed && b->world->c == NULL) {
        luaL_error(L, "%s: the entity pool that keys it is closed", who);
    }
}

/* Store the value at idx as element h's (self at 1). */
static void pool_store(lua_State *L, const lpool *p, ark_handle h, int idx) {
    lark_getenv(L, 1);
    lua_pushvalue(L, idx);
    lark_env_set(L, lua_gettop(L) - 1, h & p->index_mask);
    lua_pop(L, 1);
}

/* p:insert(v) */
static int l_pool_insert(lua_State *L) {
    lpool *p = check_pool(L);
    if (lua_isnoneornil(L, 2)) {
        return luaL_error(L, "ark.pool:insert: the value is nil");
    }
    not_keyed(L, &p->b, "ark.pool:insert");
    unsigned char none = 0;
    ark_handle h;
    ark_status st = ark_pool_insert(p->b.pool, &none, &h);
    if (st != ARK_OK) {
        lark_nomem(L, st, "ark.pool:insert");
        return lark_fail(L, st);
    }
    pool_store(L, p, h, 2);
    lark_push_u64(L, h);
    return 1;
}

/* p:insert_at(h, v) */
static int l_pool_insert_at(lua_State *L) {
    lpool *p = check_pool(L);
    if (lua_isnoneornil(L, 3)) {
        return luaL_error(L, "ark.pool:insert_at: the value is nil");
    }
    keys_open(L, &p->b, "ark.pool:insert_at");
    ark_handle h;
    if (!lark_handle(L, 2, &h)) {
        return lark_fail(L, ARK_EINVAL);
    }
    unsigned char none = 0;
    ark_status st = ark_pool_insert_at(p->b.pool, h, &none);
    if (st != ARK_OK) {
        lark_nomem(L, st, "ark.pool:insert_at");
        return lark_fail(L, st);
    }
    pool_store(L, p, h, 3);
    lua_pushboolean(L, 1);
    return 1;
}

/* p:get(h) */
static int l_pool_get(lua_State *L) {
    lpool *p = check_pool(L);
    ark_handle h;
    if (!lark_handle(L, 2, &h) || ark_pool_get(p->b.pool, h) == NULL) {
        lua_pushnil(L);
        return 1;
    }
    lark_getenv(L, 1);
    lark_env_get(L, lua_gettop(L), h & p->index_mask);
    return 1;
}

/* p:set(h, v) */
static int l_pool_set(lua_State *L) {
    lpool *p = check_pool(L);
    if (lua_isnoneornil(L, 3)) {
        return luaL_error(L, "ark.pool:set: the value is nil");
    }
    ark_handle h;
    bool live = lark_handle(L, 2, &h) && ark_pool_get(p->b.pool, h) != NULL;
    if (live) {
        pool_store(L, p, h, 3);
    }
    lua_pushboolean(L, live);
    return 1;
}

/* Iteration: a closure over (state, values, pool). The C iterator
 * advances at the start of each step, not the end, so an element removed
 * by the loop body after it was reached is never returned. */
typedef struct lpool_iter {
    lpool *p;
    ark_pool_iter it;
    int state; /* 0 not started, 1 running, 2 done */
} lpool_iter;

static int pool_iter_step(lua_State *L) {
    lpool_iter *s = lua_touserdata(L, lua_upvalueindex(1));
    lpool *p = s->p;
    if (p->b.pool == NULL) {
        return luaL_error(L, "ark.pool: the container is closed");
    }
    if (s->state == 0) {
        s->it = ark_pool_iter_begin(p->b.pool);
        s->state = 1;
    } else if (s->state == 1) {
        ark_pool_iter_next(&s->it);
    } else {
        return 0;
    }
    if (!ark_pool_iter_valid(&s->it)) {
        s->state = 2;
        return 0;
    }
    ark_handle h = s->it.handle;
    lark_push_u64(L, h);
    lark_env_get(L, lua_upvalueindex(2), h & p->index_mask);
    return 2;
}

/* p:pairs(), pairs(p) */
static int l_pool_pairs(lua_State *L) {
    lpool *p = check_pool(L);
    lpool_iter *s = lark_newud(L, sizeof *s);
    s->p = p;
    s->state = 0;
    lark_getenv(L, 1);   /* the values (a clear wipes them in place) */
    lua_pushvalue(L, 1); /* keeps the pool alive */
    lua_pushcclosure(L, pool_iter_step, 3);
    return 1;
}

/* ---- typed table ---- */

enum {
    T_I8,
    T_I16,
    T_I32,
    T_I64,
    T_U8,
    T_U16,
    T_U32,
    T_U64,
    T_F32,
    T_F64,
    T_BOOL,
    T_COUNT
};

static const struct {
    const char *name;  /* in ark.table's column list */
    const char *ctype; /* for LuaJIT's ffi.cast */
    unsigned char size;
} lark_types[T_COUNT] = {
    {"int8", "int8_t", 1},     {"int16", "int16_t", 2},
    {"int32", "int32_t", 4},   {"int64", "int64_t", 8},
    {"uint8", "uint8_t", 1},   {"uint16", "uint16_t", 2},
    {"uint32", "uint32_t", 4}, {"uint64", "uint64_t", 8},
    {"float", "float", 4},     {"double", "double", 8},
    {"bool", "bool", 1},
};

typedef struct lcol {
    const char *name; /* env[k + 1]'s characters */
    size_t len;
    unsigned type;
} lcol;

typedef struct ltable {
    lbox b;
    size_t ncols;
    lcol cols[]; /* ncols */
} ltable;

static ltable *check_table(lua_State *L) {
    ltable *t = lark_self(L, LARK_TABLE);
    if (t->b.t == NULL) {
        luaL_error(L, "ark.table: the container is closed");
    }
    return t;
}

static void table_open(lua_State *L, const ltable *t) {
    if (t->b.t == NULL) {
        luaL_error(L, "ark.table: the container is closed");
    }
}

/* The column whose name is the string at idx, or -1. */
static int find_col(lua_State *L, const ltable *t, int idx) {
    if (lua_type(L, idx) != LUA_TSTRING) {
        return -1;
    }
    size_t len;
    const char *s = lua_tolstring(L, idx, &len);
    for (size_t k = 0; k < t->ncols; k++) {
        if (t->cols[k].name == s) {
            return (int)k;
        }
    }
    for (size_t k = 0; k < t->ncols; k++) {
        if (t->cols[k].len == len && memcmp(t->cols[k].name, s, len) == 0) {
            return (int)k;
        }
    }
    return -1;
}

static int check_col(lua_State *L, const ltable *t, int idx) {
    int k = find_col(L, t, idx);
    if (k < 0) {
        luaL_error(L, "ark.table: no column %s%s%s",
                   lua_type(L, idx) == LUA_TSTRING ? "'" : "(",
                   lua_type(L, idx) == LUA_TSTRING ? lua_tostring(L, idx)
                                                   : luaL_typename(L, idx),
                   lua_type(L, idx) == LUA_TSTRING ? "'" : ")");
    }
    return k;
}

/* A cell's value as its C type. */
typedef union lark_cell {
    int8_t i8;
    int16_t i16;
    int32_t i32;
    int64_t i64;
    uint8_t u8;
    uint16_t u16;
    uint32_t u32;
    uint64_t u64;
    float f32;
    double f64;
    unsigned char bytes[8];
} lark_cell;

/* Push the cell at p of a column of type type. */
static void push_cell(lua_State *L, unsigned type, const unsigned char *p) {
    lark_cell v;
    memcpy(&v, p, lark_types[type].size);
    switch (type) {
    case T_I8:
        lua_pushinteger(L, v.i8);
        break;
    case T_I16:
        lua_pushinteger(L, v.i16);
        break;
    case T_I32:
        lua_pushinteger(L, v.i32);
        break;
    case T_I64:
        lua_pushinteger(L, (lua_Integer)v.i64);
        break;
    case T_U8:
        lua_pushinteger(L, v.u8);
        break;
    case T_U16:
        lua_pushinteger(L, v.u16);
        break;
    case T_U32:
        lua_pushinteger(L, (lua_Integer)v.u32);
        break;
    case T_U64:
#if LARK_INTEGERS
        lark_push_u64(L, v.u64); /* wraps above 2^63 - 1, as Lua does */
#else
        lua_pushnumber(L, (lua_Number)v.u64);
#endif
        break;
    case T_F32:
        lua_pushnumber(L, (lua_Number)v.f32);
        break;
    case T_F64:
        lua_pushnumber(L, (lua_Number)v.f64);
        break;
    default:
        lua_pushboolean(L, v.u8 != 0);
        break;
    }
}

/* A double rounded to float the way IEEE 754 does, with no undefined
 * conversion: beyond float's range (past FLT_MAX and half an ulp) it is
 * an infinity. */
static float lark_to_float(double d) {
    if (d >= 0x1.ffffffp127 || d <= -0x1.ffffffp127) {
        return d > 0 ? INFINITY : -INFINITY;
    }
    return (float)d;
}

static void bad_value(lua_State *L, const ltable *t, size_t k, int idx,
                      const char *want) {
    luaL_error(L, "ark.table: column '%s' (%s) takes %s, got %s",
               t->cols[k].name, lark_types[t->cols[k].type].name, want,
               lua_type(L, idx) == LUA_TNUMBER ? lua_tostring(L, idx)
                                               : luaL_typename(L, idx));
}

/* Convert the Lua value at idx for column k into out (8 bytes), or raise.
 * Integer columns take integers in their type's range (uint64: any Lua
 * integer, read back as the same one); float and double any number; bool
 * a boolean. */
static void to_cell(lua_State *L, const ltable *t, size_t k, int idx,
                    unsigned char *out) {
    static const int64_t lo[] = {INT8_MIN, INT16_MIN, INT32_MIN, INT64_MIN,
                                 0,        0,         0};
    static const int64_t hi[] = {INT8_MAX,  INT16_MAX,  INT32_MAX, INT64_MAX,
                                 UINT8_MAX, UINT16_MAX, UINT32_MAX};
    unsigned type = t->cols[k].type;
    if (type == T_BOOL) {
        if (lua_type(L, idx) != LUA_TBOOLEAN) {
            bad_value(L, t, k, idx, "booleans");
        }
        out[0] = (unsigned char)lua_toboolean(L, idx);
        return;
    }
    if (type == T_F32 || type == T_F64) {
        if (lua_type(L, idx) != LUA_TNUMBER) {
            bad_value(L, t, k, idx, "numbers");
        }
        double d = (double)lua_tonumber(L, idx);
        if (type == T_F32) {
            float f = lark_to_float(d);
            memcpy(out, &f, 4);
        } else {
            memcpy(out, &d, 8);
        }
        return;
    }
    int64_t v = 0;
    if (type == T_U64) {
        if (!lark_int(L, idx, &v)) {
#if !LARK_INTEGERS
            /* LuaJIT: [2^63, 2^64) is a number too. */
            lua_Number d = lua_type(L, idx) == LUA_TNUMBER
                               ? lua_tonumber(L, idx)
                               : (lua_Number)-1;
            if (d >= 0x1p63 && d < 0x1p64 && d == floor(d)) {
                uint64_t u = (uint64_t)d;
                memcpy(out, &u, 8);
                return;
            }
#endif
            bad_value(L, t, k, idx, "integers");
        }
        uint64_t u = (uint64_t)v;
        memcpy(out, &u, 8);
        return;
    }
    if (!lark_int(L, idx, &v) || v < lo[type] || v > hi[type]) {
        bad_value(L, t, k, idx, "integers in its range");
    }
    switch (lark_types[type].size) {
    case 1: {
        uint8_t b = (uint8_t)v;
        memcpy(out, &b, 1);
        break;
    }
    case 2: {
        uint16_t b = (uint16_t)v;
        memcpy(out, &b, 2);
        break;
    }
    case 4: {
        uint32_t b = (uint32_t)v;
        memcpy(out, &b, 4);
        break;
    }
    default:
        memcpy(out, &v, 8);
        break;
    }
}

/* The address of row r of column k. */
static unsigned char *cell(const ltable *t, size_t k, size_t r) {
    unsigned char *base = ark_table_column(t->b.t, k);
    return base + r * lark_types[t->cols[k].type].size;
}

/* The C hook: run the Lua hook with h (the row is still readable). */
static void table_hook(void *elem, ark_handle h, void *user) {
    (void)elem;
    ltable *t = user;
    const lark_run *run = &t->b.world->run;
    lua_State *L = run->L;
    if (L == NULL || !lua_checkstack(L, 4) || !hook_env(L, run, &t->b)) {
        return;
    }
    lua_rawgeti(L, -1, 0);
    lua_remove(L, -2);
    lark_push_u64(L, h);
    lark_call_hook(run, &t->b, 1);
}

static const char *const table_options[] = {
    "on_remove", "index_bits", "gen_bits", "tag_bits", "tag",
    "seal_key",  "max_rows",   "keys",     NULL};

/* Make the table userdata for the column list at cols (absolute index) and
 * the hook at hook (absolute index, function or nil); leave it on top.
 * types (ncols entries) are already checked; names are read from cols. */
static ltable *table_ud(lua_State *L, size_t ncols, const unsigned *types,
                        int names, int hook) {
    ltable *t = lark_newud(L, sizeof *t + ncols * sizeof(lcol));
    memset(t, 0, sizeof *t);
    t->b.tag = LARK_TABLE;
    t->b.world = &t->b;
    t->ncols = ncols;
    lua_pushvalue(L, lua_upvalueindex(1));
    lua_setmetatable(L, -2);
    lua_createtable(L, (int)ncols, 1);
    lua_pushvalue(L, hook);
    lua_rawseti(L, -2, 0);
    for (size_t k = 0; k < ncols; k++) {
        lua_rawgeti(L, names, (int)k + 1);
        t->cols[k].name = lua_tolstring(L, -1, &t->cols[k].len);
        t->cols[k].type = types[k];
        lua_rawseti(L, -2, (int)k + 1);
    }
    lark_setenv(L, -2);
    t->b.hook = !lua_isnil(L, hook);
    return t;
}

/* Create t->b.t (for ark.table and ark.table_load): keyed by keys if it
 * is not NULL (the layout is then its). */
static ark_status table_make(ltable *t, const lark_layout *l, size_t max_rows,
                             const ark_reader *r, lpool *keys) {
    size_t sizes[LARK_MAX_COLUMNS];
    for (size_t k = 0; k < t->ncols; k++) {
        sizes[k] = lark_types[t->cols[k].type].size;
    }
    ark_table_config cfg = {.column_sizes = sizes,
                            .ncolumns = t->ncols,
                            .max_rows = max_rows,
                            .on_remove = t->b.hook ? table_hook : NULL,
                            .user = t};
    if (keys != NULL) {
        cfg.keys = keys->b.pool;
    } else {
        cfg.index_bits = l->index_bits;
        cfg.gen_bits = l->gen_bits;
        cfg.tag_bits = l->tag_bits;
        cfg.tag = l->tag;
        cfg.seal_key = l->seal_key;
        t->b.layout = *l;
    }
    return r != NULL ? ark_table_load(&t->b.t, &cfg, r)
                     : ark_table_create(&t->b.t, &cfg);
}

/* Read ark.table's column list at idx: push a table of the names (k ->
 * name) and fill types; return the count. */
static size_t read_columns(lua_State *L, int idx, const char *who,
                           unsigned *types) {
    luaL_checktype(L, idx, LUA_TTABLE);
    size_t n = (size_t)lark_rawlen(L, idx);
    if (n == 0 || n > LARK_MAX_COLUMNS) {
        luaL_error(L, "%s: give 1 to %d columns as { {name, type}, ... }", who,
                   LARK_MAX_COLUMNS);
    }
    lua_createtable(L, (int)n, 0);
    int names = lua_gettop(L);
    for (size_t k = 0; k < n; k++) {
        lua_rawgeti(L, idx, (int)k + 1);
        if (lua_type(L, -1) != LUA_TTABLE) {
            luaL_error(L, "%s: column %d is not a {name, type} table", who,
                       (int)k + 1);
        }
        lua_rawgeti(L, -1, 1);
        lua_rawgeti(L, -2, 2);
        size_t len;
        const char *name =
            lua_type(L, -2) == LUA_TSTRING ? lua_tolstring(L, -2, &len) : NULL;
        const char *type =
            lua_type(L, -1) == LUA_TSTRING ? lua_tostring(L, -1) : "";
        if (name == NULL || len == 0 || len > 255) {
            luaL_error(L,
                       "%s: column %d needs a name (a string of 1 to 255 "
                       "bytes)",
                       who, (int)k + 1);
        }
        types[k] = T_COUNT;
        for (unsigned i = 0; i < T_COUNT; i++) {
            if (strcmp(type, lark_types[i].name) == 0) {
                types[k] = i;
            }
        }
        if (types[k] == T_COUNT) {
            luaL_error(L,
                       "%s: column '%s' has type '%s'; types are int8 int16 "
                       "int32 int64 uint8 uint16 uint32 uint64 float double "
                       "bool",
                       who, name, type);
        }
        for (size_t j = 0; j < k; j++) {
            lua_rawgeti(L, names, (int)j + 1);
            if (lua_rawequal(L, -1, -3)) {
                luaL_error(L, "%s: two columns are named '%s'", who, name);
            }
            lua_pop(L, 1);
        }
        lua_pushvalue(L, -2);
        lua_rawseti(L, names, (int)k + 1);
        lua_pop(L, 3);
    }
    return n;
}

/* ark.table(columns, [opts]) */
static int l_table_new(lua_State *L) {
    const char *who = "ark.table";
    unsigned types[LARK_MAX_COLUMNS];
    lua_settop(L, 2);
    lark_opts_check(L, 2, who, table_options);
    size_t n = read_columns(L, 1, who, types);
    int names = lua_gettop(L);
    lpool *k = lark_opt_keys(L, 2, who); /* pushes it or nil */
    lark_layout l;
    if (k == NULL) {
        lark_opt_layout(L, 2, who, &l);
    }
    size_t max_rows =
        (size_t)lark_opt_int(L, 2, who, "max_rows", 0, 0, (int64_t)1 << 40);
    lark_opt_hook(L, 2, who);
    ltable *t = table_ud(L, n, types, names, names + 2);
    if (k != NULL) {
        keyed_join(L, &t->b, k, names + 1);
        world_join(L, &k->b, names + 1, t, -1); /* may raise: before ark */
    }
    ark_status st = table_make(t, &l, max_rows, NULL, k);
    if (st != ARK_OK && k != NULL) {
        world_leave(L, &k->b, names + 1, t);
    }
    lark_nomem(L, st, who);
    if (st != ARK_OK) {
        luaL_error(L, "%s: invalid layout (%s)", who, ark_strerror(st));
    }
    return 1;
}

/* Convert the values of a row into buf (8 bytes a column) and given: a
 * table of named fields at idx (alone), or the values from idx on in
 * column order. Raises before anything changes. self is at 1. */
static void read_row(lua_State *L, const ltable *t, int idx, unsigned char *buf,
                     bool *given) {
    int top = lua_gettop(L);
    if (idx == top && lua_type(L, idx) == LUA_TTABLE) {
        lark_getenv(L, 1);
        int env = lua_gettop(L);
        for (size_t k = 0; k < t->ncols; k++) {
            lua_rawgeti(L, env, (int)k + 1);
            lua_gettable(L, idx);
            given[k] = !lua_isnil(L, -1);
            if (given[k]) {
                to_cell(L, t, k, -1, buf + 8 * k);
            }
            lua_pop(L, 1);
        }
        lua_pop(L, 1);
        return;
    }
    size_t n = top >= idx ? (size_t)(top - idx + 1) : 0;
    if (n > t->ncols) {
        luaL_error(L, "ark.table: %d values for %d columns", (int)n,
                   (int)t->ncols);
    }
    for (size_t k = 0; k < t->ncols; k++) {
        given[k] = k < n && !lua_isnil(L, idx + (int)k);
        if (given[k]) {
            to_cell(L, t, k, idx + (int)k, buf + 8 * k);
        }
    }
}

static void write_row(const ltable *t, size_t row, const unsigned char *buf,
                      const bool *given) {
    for (size_t k = 0; k < t->ncols; k++) {
        if (given[k]) {
            memcpy(cell(t, k, row), buf + 8 * k,
                   lark_types[t->cols[k].type].size);
        }
    }
}

/* t:insert{fields} or t:insert(v1, v2, ...) */
static int l_table_insert(lua_State *L) {
    ltable *t = check_table(L);
    not_keyed(L, &t->b, "ark.table:insert");
    unsigned char buf[8 * LARK_MAX_COLUMNS];
    bool given[LARK_MAX_COLUMNS];
    read_row(L, t, 2, buf, given);
    ark_handle h;
    size_t row;
    ark_status st = ark_table_insert(t->b.t, &h, &row);
    if (st != ARK_OK) {
        lark_nomem(L, st, "ark.table:insert");
        return lark_fail(L, st);
    }
    write_row(t, row, buf, given);
    lark_push_u64(L, h);
    return 1;
}

/* t:insert_at(h, {fields}) or t:insert_at(h, v1, v2, ...) */
static int l_table_insert_at(lua_State *L) {
    ltable *t = check_table(L);
    keys_open(L, &t->b, "ark.table:insert_at");
    unsigned char buf[8 * LARK_MAX_COLUMNS];
    bool given[LARK_MAX_COLUMNS];
    read_row(L, t, 3, buf, given);
    ark_handle h;
    if (!lark_handle(L, 2, &h)) {
        return lark_fail(L, ARK_EINVAL);
    }
    size_t row;
    ark_status st = ark_table_insert_at(t->b.t, h, &row);
    if (st != ARK_OK) {
        lark_nomem(L, st, "ark.table:insert_at");
        return lark_fail(L, st);
    }
    write_row(t, row, buf, given);
    lua_pushboolean(L, 1);
    return 1;
}

/* The row of the handle at idx, or ARK_NO_ROW. */
static size_t table_row_of(lua_State *L, const ltable *t, int idx) {
    ark_handle h;
    return lark_handle(L, idx, &h) ? ark_table_row(t->b.t, h) : ARK_NO_ROW;
}

/* Push row r as a table of fields. */
static void push_row_table(lua_State *L, const ltable *t, size_t r) {
    lua_createtable(L, 0, (int)t->ncols);
    for (size_t k = 0; k < t->ncols; k++) {
        push_cell(L, t->cols[k].type, cell(t, k, r));
        lua_setfield(L, -2, t->cols[k].name);
    }
}

/* t:get(h, column) or t:get(h) (a table of every field) */
static int l_table_get(lua_State *L) {
    ltable *t = check_table(L);
    int k = lua_isnoneornil(L, 3) ? -1 : check_col(L, t, 3);
    size_t r = table_row_of(L, t, 2);
    if (r == ARK_NO_ROW) {
        lua_pushnil(L);
    } else if (k < 0) {
        push_row_table(L, t, r);
    } else {
        push_cell(L, t->cols[k].type, cell(t, (size_t)k, r));
    }
    return 1;
}

/* t:set(h, column, v) */
static int l_table_set(lua_State *L) {
    ltable *t = check_table(L);
    size_t k = (size_t)check_col(L, t, 3);
    unsigned char v[8];
    to_cell(L, t, k, 4, v);
    size_t r = table_row_of(L, t, 2);
    if (r != ARK_NO_ROW) {
        memcpy(cell(t, k, r), v, lark_types[t->cols[k].type].size);
    }
    lua_pushboolean(L, r != ARK_NO_ROW);
    return 1;
}

/* t:append(n): n zeroed rows at the end in one call, all or none, to be
 * filled through column views or LuaJIT's FFI; the position of the first,
 * or nil and "full". */
static int l_table_append(lua_State *L) {
    ltable *t = check_table(L);
    int64_t n;
    if (!lark_int(L, 2, &n) || n < 0) {
        return luaL_error(L, "ark.table:append: n must be an integer >= 0");
    }
    not_keyed(L, &t->b, "ark.table:append");
    size_t first = ark_table_rows(t->b.t);
    ark_status st =
        ark_table_reserve(t->b.t, ark_table_count(t->b.t) + (size_t)n);
    int64_t done = 0;
    while (st == ARK_OK && done < n) {
        st = ark_table_insert(t->b.t, NULL, NULL);
        done += st == ARK_OK;
    }
    if (st != ARK_OK) {
        /* Take back this call's rows, from the last: nothing moves (a
         * hook, if set, sees them go). */
        lark_run saved;
        if (t->b.hook) {
            lark_enter(L, &t->b, &saved);
        }
        while (done-- > 0) {
            ark_handle h = ark_table_handle_at(t->b.t, first + (size_t)done);
            (void)ark_table_remove(t->b.t, h);
        }
        if (t->b.hook) {
            lark_leave(L, &t->b, &saved);
        }
        lark_nomem(L, st, "ark.table:append");
        return lark_fail(L, st);
    }
    lua_pushinteger(L, (lua_Integer)first + 1);
    return 1;
}

/* t:nrows(): rows in use, live and marked (the span column loops run). */
static int l_table_nrows(lua_State *L) {
    ltable *t = check_table(L);
    lua_pushinteger(L, (lua_Integer)ark_table_rows(t->b.t));
    return 1;
}

/* t:at(i): the handle at position i, or nil. */
static int l_table_at(lua_State *L) {
    ltable *t = check_table(L);
    int64_t i;
    ark_handle h = ARK_NULL_HANDLE;
    if (lark_int(L, 2, &i) && i >= 1) {
        h = ark_table_handle_at(t->b.t, (size_t)(i - 1));
    }
    if (h == ARK_NULL_HANDLE) {
        lua_pushnil(L);
    } else {
        lark_push_u64(L, h);
    }
    return 1;
}

/* t:row(h): the position of h's row, or nil. */
static int l_table_row(lua_State *L) {
    ltable *t = check_table(L);
    size_t r = table_row_of(L, t, 2);
    if (r == ARK_NO_ROW) {
        lua_pushnil(L);
    } else {
        lua_pushinteger(L, (lua_Integer)r + 1);
    }
    return 1;
}

/* t:columns(): { {name, type}, ... }, the list ark.table took. */
static int l_table_columns(lua_State *L) {
    ltable *t = check_table(L);
    lua_createtable(L, (int)t->ncols, 0);
    for (size_t k = 0; k < t->ncols; k++) {
        lua_createtable(L, 2, 0);
        lua_pushlstring(L, t->cols[k].name, t->cols[k].len);
        lua_rawseti(L, -2, 1);
        lua_pushstring(L, lark_types[t->cols[k].type].name);
        lua_rawseti(L, -2, 2);
        lua_rawseti(L, -2, (int)k + 1);
    }
    return 1;
}

/* t:column_ptr(name): the column's base address as a light userdata and
 * its C type, for LuaJIT's ffi.cast (element r is ptr[r], 0-based). */
static int l_table_column_ptr(lua_State *L) {
    ltable *t = check_table(L);
    size_t k = (size_t)check_col(L, t, 2);
    void *base = ark_table_column(t->b.t, k);
    if (base == NULL) {
        lua_pushnil(L);
    } else {
        lua_pushlightuserdata(L, base);
    }
    lua_pushfstring(L, "%s *", lark_types[t->cols[k].type].ctype);
    return 2;
}

/* ---- rows and columns ---- */

/* The row view rows() yields: reads and writes the row of h. */
typedef struct lrow {
    const char *tag; /* LARK_ROW */
    ltable *t;
    ark_handle h;
} lrow;

/* row.name */
static int l_row_index(lua_State *L) {
    lrow *r = lark_self(L, LARK_ROW);
    table_open(L, r->t);
    size_t k = (size_t)check_col(L, r->t, 2);
    size_t row = ark_table_row(r->t->b.t, r->h);
    if (row == ARK_NO_ROW) {
        lua_pushnil(L);
    } else {
        push_cell(L, r->t->cols[k].type, cell(r->t, k, row));
    }
    return 1;
}

/* row.name = v */
static int l_row_newindex(lua_State *L) {
    lrow *r = lark_self(L, LARK_ROW);
    table_open(L, r->t);
    size_t k = (size_t)check_col(L, r->t, 2);
    unsigned char v[8];
    to_cell(L, r->t, k, 3, v);
    size_t row = ark_table_row(r->t->b.t, r->h);
    if (row == ARK_NO_ROW) {
        return luaL_error(L, "ark.table: the row was removed");
    }
    memcpy(cell(r->t, k, row), v, lark_types[r->t->cols[k].type].size);
    return 0;
}

static int l_row_tostring(lua_State *L) {
    lrow *r = lark_self(L, LARK_ROW);
    lark_pushf(L, "ark.row (handle %llu)", (unsigned long long)r->h, 0);
    return 1;
}

/* rows() walks the handles of the rows live when it started, so a loop
 * may remove any row (the swap-and-pop moves another one, which is still
 * visited once) or insert rows (not visited); a removed row that was not
 * reached is skipped. */
typedef struct lrows {
    size_t n, i;
    ark_handle h[]; /* n */
} lrows;

static int rows_step(lua_State *L) {
    lrows *s = lua_touserdata(L, lua_upvalueindex(1));
    lrow *r = lua_touserdata(L, lua_upvalueindex(2));
    table_open(L, r->t);
    while (s->i < s->n) {
        ark_handle h = s->h[s->i++];
        if (ark_table_row(r->t->b.t, h) != ARK_NO_ROW) {
            r->h = h;
            lark_push_u64(L, h);
            lua_pushvalue(L, lua_upvalueindex(2));
            return 2;
        }
    }
    return 0;
}

/* t:rows() */
static int l_table_rows(lua_State *L) {
    ltable *t = check_table(L);
    size_t rows = ark_table_rows(t->b.t);
    lrows *s = lark_newud(L, sizeof *s + rows * sizeof(ark_handle));
    s->n = 0;
    s->i = 0;
    for (size_t r = 0; r < rows; r++) {
        ark_handle h = ark_table_handle_at(t->b.t, r);
        if (h != ARK_NULL_HANDLE) {
            s->h[s->n++] = h;
        }
    }
    lrow *row = lark_newud(L, sizeof *row);
    row->tag = LARK_ROW;
    row->t = t;
    row->h = ARK_NULL_HANDLE;
    luaL_getmetatable(L, LARK_ROW);
    lua_setmetatable(L, -2);
    lark_anchor(L, -1, 1);
    lua_pushcclosure(L, rows_step, 2);
    return 1;
}

/* A column view: c[i] reads and writes position i (1-based) of one
 * column; #c is the rows in use. One C call per read or write. */
typedef struct lcolumn {
    const char *tag; /* LARK_COLUMN */
    ltable *t;
    size_t k;
} lcolumn;

/* The row of position i at idx, or ARK_NO_ROW when out of range. */
static size_t column_pos(lua_State *L, const lcolumn *c, int idx) {
    int64_t i;
    if (!lark_int(L, idx, &i) || i < 1 ||
        (uint64_t)i > ark_table_rows(c->t->b.t)) {
        return ARK_NO_ROW;
    }
    return (size_t)(i - 1);
}

static int l_column_index(lua_State *L) {
    lcolumn *c = lark_self(L, LARK_COLUMN);
    table_open(L, c->t);
    size_t r = column_pos(L, c, 2);
    if (r == ARK_NO_ROW) {
        lua_pushnil(L);
    } else {
        push_cell(L, c->t->cols[c->k].type, cell(c->t, c->k, r));
    }
    return 1;
}

static int l_column_newindex(lua_State *L) {
    lcolumn *c = lark_self(L, LARK_COLUMN);
    table_open(L, c->t);
    size_t r = column_pos(L, c, 2);
    if (r == ARK_NO_ROW) {
        return luaL_error(L, "ark.table: column '%s' has no position %s",
                          c->t->cols[c->k].name,
                          lua_type(L, 2) == LUA_TNUMBER ? lua_tostring(L, 2)
                                                        : luaL_typename(L, 2));
    }
    unsigned char v[8];
    to_cell(L, c->t, c->k, 3, v);
    memcpy(cell(c->t, c->k, r), v, lark_types[c->t->cols[c->k].type].size);
    return 0;
}

static int l_column_len(lua_State *L) {
    lcolumn *c = lark_self(L, LARK_COLUMN);
    table_open(L, c->t);
    lua_pushinteger(L, (lua_Integer)ark_table_rows(c->t->b.t));
    return 1;
}

static int l_column_tostring(lua_State *L) {
    lcolumn *c = lark_self(L, LARK_COLUMN);
    lua_pushfstring(L, "ark.column '%s' (%s)", c->t->cols[c->k].name,
                    lark_types[c->t->cols[c->k].type].name);
    return 1;
}

/* t:column(name) */
static int l_table_column(lua_State *L) {
    ltable *t = check_table(L);
    size_t k = (size_t)check_col(L, t, 2);
    lcolumn *c = lark_newud(L, sizeof *c);
    c->tag = LARK_COLUMN;
    c->t = t;
    c->k = k;
    luaL_getmetatable(L, LARK_COLUMN);
    lua_setmetatable(L, -2);
    lark_anchor(L, -1, 1);
    return 1;
}

/* ---- snapshots: strings out, strings in ---- */

/* A memory buffer owned by a userdata, so that a Lua error between the
 * save and the string copy cannot leak it. */
typedef struct lbuffer {
    const char *tag; /* LARK_BUFFER */
    ark_membuf b;
} lbuffer;

static int l_buffer_gc(lua_State *L) {
    lbuffer *u = lark_test(L, 1, LARK_BUFFER);
    if (u != NULL) {
        ark_membuf_free(&u->b);
    }
    return 0;
}

static ark_membuf *push_buffer(lua_State *L) {
    lbuffer *u = lark_newud(L, sizeof *u);
    memset(u, 0, sizeof *u);
    u->tag = LARK_BUFFER;
    luaL_getmetatable(L, LARK_BUFFER);
    lua_setmetatable(L, -2);
    return &u->b;
}

/* Replace the buffer on top with a string of its bytes. */
static void buffer_to_string(lua_State *L, ark_membuf *b) {
    lua_pushlstring(L, (const char *)b->data, b->size);
    ark_membuf_free(b);
    lua_remove(L, -2);
}

/* The table header ahead of ark_table_save's bytes, since a load needs
 * the layout and the column types before ark reads its own descriptor:
 *   8  magic "arkluat\x01"
 *   1+1+1 index_bits, gen_bits, tag_bits;  8 tag (little-endian)
 *   2  ncolumns; per column: 1 type, 1 name length, the name
 *   8  checksum of the header's bytes before it (FNV-1a 64)
 * ark's snapshot follows, with its own checksums, and ends the string. */
static const char lark_magic[8] = {'a', 'r', 'k', 'l', 'u', 'a', 't', 1};

static uint64_t lark_fnv(const unsigned char *p, size_t n) {
    uint64_t h = 0xcbf29ce484222325u;
    for (size_t i = 0; i < n; i++) {
        h = (h ^ p[i]) * 0x100000001b3u;
    }
    return h;
}

static void put_u64(unsigned char *p, uint64_t v) {
    for (int i = 0; i < 8; i++) {
        p[i] = (unsigned char)(v >> (8 * i));
    }
}

static uint64_t get_u64(const unsigned char *p) {
    uint64_t v = 0;
    for (int i = 0; i < 8; i++) {
        v |= (uint64_t)p[i] << (8 * i);
    }
    return v;
}

/* t:save() */
static int l_table_save(lua_State *L) {
    ltable *t = check_table(L);
    ark_membuf *b = push_buffer(L);
    ark_writer w = ark_membuf_writer(b);
    unsigned char head[8 + 3 + 8 + 2];
    memcpy(head, lark_magic, 8);
    head[8] = (unsigned char)t->b.layout.index_bits;
    head[9] = (unsigned char)t->b.layout.gen_bits;
    head[10] = (unsigned char)t->b.layout.tag_bits;
    put_u64(head + 11, t->b.layout.tag);
    head[19] = (unsigned char)(t->ncols & 0xff);
    head[20] = (unsigned char)(t->ncols >> 8);
    ark_status st = w.write(w.ctx, head, sizeof head);
    for (size_t k = 0; k < t->ncols && st == ARK_OK; k++) {
        unsigned char col[2] = {(unsigned char)t->cols[k].type,
                                (unsigned char)t->cols[k].len};
        st = w.write(w.ctx, col, 2);
        if (st == ARK_OK) {
            st = w.write(w.ctx, t->cols[k].name, t->cols[k].len);
        }
    }
    if (st == ARK_OK) {
        put_u64(head, lark_fnv(b->data, b->size));
        st = w.write(w.ctx, head, 8);
    }
    if (st == ARK_OK) {
        st = ark_table_save(t->b.t, &w);
    }
    if (st != ARK_OK) {
        return luaL_error(L, "ark.table:save: %s", ark_strerror(st));
    }
    buffer_to_string(L, b);
    return 1;
}

/* Parse the header of the string at 1 into types, names (a table pushed,
 * k -> name) and l; return its length, or 0 if it is malformed. */
static size_t parse_header(lua_State *L, unsigned *types, size_t *ncols,
                           lark_layout *l) {
    size_t size;
    const unsigned char *s = (const unsigned char *)lua_tolstring(L, 1, &size);
    lua_newtable(L);
    if (size < 8 + 3 + 8 + 2 || memcmp(s, lark_magic, 8) != 0) {
        return 0;
    }
    size_t n = 8;
    l->index_bits = s[n];
    l->gen_bits = s[n + 1];
    l->tag_bits = s[n + 2];
    n += 3;
    l->tag = get_u64(s + n);
    n += 8;
    *ncols = (size_t)s[n] | (size_t)s[n + 1] << 8;
    n += 2;
    if (*ncols == 0 || *ncols > LARK_MAX_COLUMNS) {
        return 0;
    }
    for (size_t k = 0; k < *ncols; k++) {
        if (size - n < 2 || s[n] >= T_COUNT || s[n + 1] == 0 ||
            size - n - 2 < s[n + 1]) {
            return 0;
        }
        types[k] = s[n];
        lua_pushlstring(L, (const char *)s + n + 2, s[n + 1]);
        lua_rawseti(L, -2, (int)k + 1);
        n += 2 + (size_t)s[n + 1];
    }
    if (size - n < 8 || get_u64(s + n) != lark_fnv(s, n)) {
        return 0;
    }
    l->seal_key = 0; /* the saved one */
    if (l->index_bits + l->gen_bits + l->tag_bits > LARK_MAX_BITS) {
        return 0;
    }
    return n + 8;
}

static const char *const load_options[] = {"on_remove", "max_rows", "keys",
                                           NULL};

static bool same_layout(const lark_layout *a, const lark_layout *b) {
    return a->index_bits == b->index_bits && a->gen_bits == b->gen_bits &&
           a->tag_bits == b->tag_bits && a->tag == b->tag;
}

/* ark.table_load(s, [columns], [opts]): the table, or nil and a message. */
static int l_table_load(lua_State *L) {
    const char *who = "ark.table_load";
    luaL_checktype(L, 1, LUA_TSTRING);
    lua_settop(L, 3);
    lark_opts_check(L, 3, who, load_options);
    unsigned types[LARK_MAX_COLUMNS];
    size_t ncols = 0;
    lark_layout l;
    size_t start = parse_header(L, types, &ncols, &l);
    int names = lua_gettop(L);
    if (start == 0) {
        lua_pushnil(L);
        lua_pushfstring(L, "%s: not a saved ark.table, or a damaged one", who);
        return 2;
    }
    if (!lua_isnoneornil(L, 2)) {
        unsigned want[LARK_MAX_COLUMNS];
        size_t n = read_columns(L, 2, who, want);
        bool same = n == ncols;
        for (size_t k = 0; same && k < n; k++) {
            lua_rawgeti(L, -1, (int)k + 1);
            lua_rawgeti(L, names, (int)k + 1);
            same = want[k] == types[k] && lua_rawequal(L, -1, -2);
            lua_pop(L, 2);
        }
        if (!same) {
            lua_pushnil(L);
            lua_pushfstring(L, "%s: the columns differ from the saved ones",
                            who);
            return 2;
        }
    }
    size_t max_rows =
        (size_t)lark_opt_int(L, 3, who, "max_rows", 0, 0, (int64_t)1 << 40);
    lpool *k = lark_opt_keys(L, 3, who); /* pushes it or nil */
    int kud = lua_gettop(L);
    if (k != NULL && !same_layout(&l, &k->b.layout)) {
        lua_pushnil(L);
        lua_pushfstring(L,
                        "%s: the saved table's handle layout is not the "
                        "entity pool's",
                        who);
        return 2;
    }
    lark_opt_hook(L, 3, who);
    ltable *t = table_ud(L, ncols, types, names, lua_gettop(L));
    if (k != NULL) {
        keyed_join(L, &t->b, k, kud);
        world_join(L, &k->b, kud, t, -1); /* may raise: before ark */
    }
    size_t size;
    const char *s = lua_tolstring(L, 1, &size);
    ark_bytes in = {.data = s + start, .size = size - start, .pos = 0};
    ark_reader r = ark_bytes_reader(&in);
    ark_status st = table_make(t, &l, max_rows, &r, k);
    if (st == ARK_OK && in.pos != in.size) {
        ark_table_destroy(t->b.t);
        t->b.t = NULL;
        st = ARK_ECORRUPT;
    }
    if (st != ARK_OK && k != NULL) {
        world_leave(L, &k->b, kud, t);
    }
    lark_nomem(L, st, who);
    if (st != ARK_OK) {
        lua_pushnil(L);
        if (k != NULL) {
            lua_pushfstring(L,
                            "%s: not a saved keyed ark.table, a damaged "
                            "one, or one with rows of entities that the "
                            "pool does not have (%s)",
                            who, ark_strerror(st));
        } else {
            lua_pushfstring(L, "%s: %s", who,
                            st == ARK_EINVAL ? "not a saved ark.table, or a "
                                               "damaged one"
                                             : ark_strerror(st));
        }
        return 2;
    }
    return 1;
}

/* ---- id set ---- */

static lidset *check_idset(lua_State *L) {
    lidset *s = lark_self(L, LARK_IDSET);
    if (s->s == NULL) {
        luaL_error(L, "ark.idset: the container is closed");
    }
    return s;
}

/* Read an id: an integer in [0, 2^32). */
static bool lark_id(lua_State *L, int idx, uint32_t *id) {
    int64_t v;
    if (!lark_int(L, idx, &v) || v < 0 || v > (int64_t)UINT32_MAX) {
        return false;
    }
    *id = (uint32_t)v;
    return true;
}

/* A new empty set userdata on top, its ark_idset made unless load. */
static lidset *push_idset(lua_State *L, int mt, bool make) {
    lidset *s = lark_newud(L, sizeof *s);
    s->tag = LARK_IDSET;
    s->s = NULL;
    s->version = 0;
    s->world = NULL;
    lua_pushvalue(L, mt);
    lua_setmetatable(L, -2);
    if (make) {
        ark_status st = ark_idset_create(&s->s, NULL);
        lark_nomem(L, st, "ark.idset");
    }
    return s;
}

static int l_idset_new(lua_State *L) {
    push_idset(L, lua_upvalueindex(1), true);
    return 1;
}

/* Raise if s is attached to an entity pool: its ids are entities',
 * changed through the pool's tag and untag only. */
static void not_attached(lua_State *L, const lidset *s, const char *who) {
    if (s->world != NULL) {
        luaL_error(L,
                   "%s: the set is attached to an entity pool: use "
                   "pool:tag and pool:untag",
                   who);
    }
}

static int l_idset_insert(lua_State *L) {
    lidset *s = check_idset(L);
    not_attached(L, s, "ark.idset:insert");
    uint32_t id;
    if (!lark_id(L, 2, &id)) {
        return luaL_error(L, "ark.idset:insert: an id is an integer in "
                             "[0, 2^32)");
    }
    ark_status st = ark_idset_insert(s->s, id);
    lark_nomem(L, st, "ark.idset:insert");
    s->version += st == ARK_OK;
    lua_pushboolean(L, st == ARK_OK);
    return 1;
}

static int l_idset_remove(lua_State *L) {
    lidset *s = check_idset(L);
    not_attached(L, s, "ark.idset:remove");
    uint32_t id;
    ark_status st =
        lark_id(L, 2, &id) ? ark_idset_remove(s->s, id) : ARK_ENOTFOUND;
    lark_nomem(L, st, "ark.idset:remove");
    s->version += st == ARK_OK;
    lua_pushboolean(L, st == ARK_OK);
    return 1;
}

static int l_idset_contains(lua_State *L) {
    lidset *s = check_idset(L);
    uint32_t id;
    lua_pushboolean(L, lark_id(L, 2, &id) && ark_idset_contains(s->s, id));
    return 1;
}

/* s:at(i): the id at position i (1-based), or nil. */
static int l_idset_at(lua_State *L) {
    lidset *s = check_idset(L);
    int64_t i;
    if (!lark_int(L, 2, &i) || i < 1 || (uint64_t)i > ark_idset_count(s->s)) {
        lua_pushnil(L);
    } else {
        lua_pushinteger(L, (lua_Integer)ark_idset_at(s->s, (size_t)(i - 1)));
    }
    return 1;
}

/* s:find(id): its position (1-based), or nil. */
static int l_idset_find(lua_State *L) {
    lidset *s = check_idset(L);
    uint32_t id;
    size_t pos = lark_id(L, 2, &id) ? ark_idset_find(s->s, id) : ARK_NOT_FOUND;
    if (pos == ARK_NOT_FOUND) {
        lua_pushnil(L);
    } else {
        lua_pushinteger(L, (lua_Integer)pos + 1);
    }
    return 1;
}

static int l_idset_len(lua_State *L) {
    lidset *s = check_idset(L);
    lua_pushinteger(L, (lua_Integer)ark_idset_count(s->s));
    return 1;
}

/* a:intersect(b), a:union(b), a:difference(b): new sets. */
static int idset_algebra(lua_State *L,
                         ark_status (*op)(ark_idset *, const ark_idset *,
                                          const ark_idset *),
                         const char *who) {
    lidset *a = check_idset(L);
    lidset *b = lark_test(L, 2, LARK_IDSET);
    if (b == NULL || b->s == NULL) {
        return luaL_error(L, "%s: the argument is not an open ark.idset", who);
    }
    lidset *out = push_idset(L, lua_upvalueindex(1), true);
    ark_status st = op(out->s, a->s, b->s);
    lark_nomem(L, st, who);
    return 1;
}

static int l_idset_intersect(lua_State *L) {
    return idset_algebra(L, ark_idset_intersect, "ark.idset:intersect");
}

static int l_idset_union(lua_State *L) {
    return idset_algebra(L, ark_idset_union, "ark.idset:union");
}

static int l_idset_difference(lua_State *L) {
    return idset_algebra(L, ark_idset_difference, "ark.idset:difference");
}

static int l_idset_intersect_count(lua_State *L) {
    lidset *a = check_idset(L);
    lidset *b = lark_test(L, 2, LARK_IDSET);
    if (b == NULL || b->s == NULL) {
        return luaL_error(L, "ark.idset:intersect_count: the argument is not "
                             "an open ark.idset");
    }
    lua_pushinteger(L, (lua_Integer)ark_idset_intersect_count(a->s, b->s));
    return 1;
}

/* Iteration in increasing order. The C iterator is valid until the set
 * changes; after a change the walk resumes at the first id above the last
 * one it returned, so ids removed before they are reached are skipped
 * and ids inserted above the current one are visited. */
typedef struct lids {
    lidset *s;
    ark_idset_iter it;
    uint64_t version;
    uint32_t last;
    int state; /* 0 not started, 1 running, 2 done */
} lids;

static int ids_step(lua_State *L) {
    lids *w = lua_touserdata(L, lua_upvalueindex(1));
    lidset *s = w->s;
    if (s->s == NULL) {
        return luaL_error(L, "ark.idset: the container is closed");
    }
    if (w->state == 0) {
        w->it = ark_idset_iter_begin(s->s, 0);
        w->state = 1;
    } else if (w->state != 1) {
        return 0;
    } else if (w->version != s->version || s->world != NULL) {
        /* An attached set also changes when its entities are removed. */
        size_t pos = w->last == UINT32_MAX
                         ? ark_idset_count(s->s)
                         : ark_idset_lower_bound(s->s, w->last + 1);
        w->it = ark_idset_iter_begin(s->s, pos);
    } else {
        ark_idset_iter_next(&w->it);
    }
    w->version = s->version;
    if (!ark_idset_iter_valid(&w->it)) {
        w->state = 2;
        return 0;
    }
    w->last = w->it.id;
    lua_pushinteger(L, (lua_Integer)w->it.id);
    lua_pushinteger(L, (lua_Integer)w->it.pos + 1);
    return 2;
}

/* s:ids(): for id, pos in s:ids() */
static int l_idset_ids(lua_State *L) {
    lidset *s = check_idset(L);
    lids *w = lark_newud(L, sizeof *w);
    memset(w, 0, sizeof *w);
    w->s = s;
    lark_anchor(L, -1, 1);
    lua_pushcclosure(L, ids_step, 1);
    return 1;
}

static int l_idset_save(lua_State *L) {
    lidset *s = check_idset(L);
    ark_membuf *b = push_buffer(L);
    ark_writer w = ark_membuf_writer(b);
    ark_status st = ark_idset_save(s->s, &w);
    if (st != ARK_OK) {
        return luaL_error(L, "ark.idset:save: %s", ark_strerror(st));
    }
    buffer_to_string(L, b);
    return 1;
}

/* ark.idset_load(s): the set, or nil and a message. */
static int l_idset_load(lua_State *L) {
    luaL_checktype(L, 1, LUA_TSTRING);
    size_t size;
    const char *str = lua_tolstring(L, 1, &size);
    lidset *s = push_idset(L, lua_upvalueindex(1), false);
    ark_bytes in = {.data = str, .size = size, .pos = 0};
    ark_reader r = ark_bytes_reader(&in);
    ark_status st = ark_idset_load(&s->s, NULL, &r);
    lark_nomem(L, st, "ark.idset_load");
    if (st == ARK_OK && in.pos != in.size) {
        ark_idset_destroy(s->s);
        s->s = NULL;
        st = ARK_ECORRUPT;
    }
    if (st != ARK_OK) {
        lua_pushnil(L);
        lua_pushfstring(L, "ark.idset_load: %s", ark_strerror(st));
        return 2;
    }
    return 1;
}

/* s:validate(): true, or false if ark_idset_validate finds a broken
 * invariant (a debugging aid). */
static int l_idset_validate(lua_State *L) {
    lidset *s = check_idset(L);
    lua_pushboolean(L, ark_idset_validate(s->s) == ARK_OK);
    return 1;
}

static int l_idset_tostring(lua_State *L) {
    lidset *s = lark_self(L, LARK_IDSET);
    if (s->s == NULL) {
        lua_pushstring(L, "ark.idset (closed)");
    } else {
        lark_pushf(L, "ark.idset (%llu ids)",
                   (unsigned long long)ark_idset_count(s->s), 0);
    }
    return 1;
}

/* Destroy the set (an attached one detaches itself). */
static void idset_destroy(lidset *s) {
    ark_idset_destroy(s->s);
    s->s = NULL;
}

static int l_idset_close(lua_State *L) {
    lidset *s = lark_self(L, LARK_IDSET);
    if (s->s != NULL && s->world != NULL) {
        if (s->world->wbusy != 0) {
            return luaL_error(L, "ark.idset: cannot close it while a "
                                 "removal hook of its entity pool runs");
        }
        lark_push_anchor(L, 1);
        world_leave(L, s->world, -1, s);
        lua_pop(L, 1);
    }
    idset_destroy(s);
    s->world = NULL;
    return 0;
}

/* __gc: an attached set goes in the same cycle as its entity pool. */
static int l_idset_gc(lua_State *L) {
    lidset *s = lark_test(L, 1, LARK_IDSET);
    if (s != NULL) {
        idset_destroy(s);
    }
    return 0;
}

/* ---- entities: tags, ids and queries ---- */

/* The set at idx: an open ark.idset attached to entity pool p, or raise. */
static lidset *check_tags(lua_State *L, const lpool *p, int idx,
                          const char *who) {
    lidset *s = lark_test(L, idx, LARK_IDSET);
    if (s == NULL || s->s == NULL) {
        luaL_error(L, "%s: the set is not an open ark.idset", who);
    }
    if (s->world != &p->b) {
        luaL_error(L,
                   "%s: the set is not attached to this pool "
                   "(pool:attach(set))",
                   who);
    }
    return s;
}

/* Drop what lark_anchor keeps for the userdata at ud (absolute). */
static void lark_unanchor(lua_State *L, int ud) {
#if LARK_INTEGERS
    lua_pushnil(L);
    lark_setenv(L, ud);
#else
    lark_getenv(L, ud);
    if (lua_type(L, -1) == LUA_TTABLE) {
        lark_env_clear(L, lua_gettop(L), 1);
    }
    lua_pop(L, 1);
#endif
}

/* p:attach(set): the set becomes a tag of p's entities. True, or nil and
 * a message when it holds an id of no live entity (a loaded set). */
static int l_pool_attach(lua_State *L) {
    const char *who = "ark.pool:attach";
    lpool *p = check_pool(L);
    lidset *s = lark_test(L, 2, LARK_IDSET);
    if (s == NULL || s->s == NULL) {
        return luaL_error(L, "%s: the set is not an open ark.idset", who);
    }
    if (p->b.keyed) {
        return luaL_error(L, "%s: a keyed pool holds no entities", who);
    }
    if (s->world == &p->b) {
        lua_pushboolean(L, 1);
        return 1;
    }
    if (s->world != NULL) {
        return luaL_error(L, "%s: the set is attached to another pool", who);
    }
    /* What may allocate (raise) first: then ark, which may refuse. */
    lark_anchor(L, 2, 1); /* the set keeps the pool alive */
    world_join(L, &p->b, 1, s, 2);
    ark_status st = ark_pool_attach_idset(p->b.pool, s->s);
    if (st != ARK_OK) {
        world_leave(L, &p->b, 1, s);
        lark_unanchor(L, 2);
        lark_nomem(L, st, who);
        lua_pushnil(L);
        lua_pushfstring(L, "%s: the set holds ids of no live entity", who);
        return 2;
    }
    s->world = &p->b;
    s->version++;
    lua_pushboolean(L, 1);
    return 1;
}

/* p:detach(set): true if it was attached to p (its ids stay). */
static int l_pool_detach(lua_State *L) {
    lpool *p = check_pool(L);
    lidset *s = lark_test(L, 2, LARK_IDSET);
    if (s == NULL || s->s == NULL || s->world != &p->b) {
        lua_pushboolean(L, 0);
        return 1;
    }
    if (p->b.wbusy != 0) {
        return luaL_error(L, "ark.pool:detach: not while a removal hook of "
                             "the pool's world runs");
    }
    ark_pool_detach_idset(p->b.pool, s->s);
    s->world = NULL;
    s->version++;
    world_leave(L, &p->b, 1, s);
    lark_unanchor(L, 2);
    lua_pushboolean(L, 1);
    return 1;
}

/* p:tag(set, h), p:untag(set, h): true, or false and why ("exists",
 * "notfound", "stale", "range", "null", "foreign", "invalid"). */
static int tag_or_untag(lua_State *L, bool tag) {
    const char *who = tag ? "ark.pool:tag" : "ark.pool:untag";
    lpool *p = check_pool(L);
    lidset *s = check_tags(L, p, 2, who);
    ark_handle h;
    ark_status st = ARK_EINVAL;
    if (lark_handle(L, 3, &h)) {
        st = tag ? ark_pool_tag(p->b.pool, s->s, h)
                 : ark_pool_untag(p->b.pool, s->s, h);
    }
    lark_nomem(L, st, who);
    s->version += st == ARK_OK;
    lua_pushboolean(L, st == ARK_OK);
    if (st == ARK_OK) {
        return 1;
    }
    lua_pushstring(L, lark_word(st));
    return 2;
}

static int l_pool_tag(lua_State *L) { return tag_or_untag(L, true); }

static int l_pool_untag(lua_State *L) { return tag_or_untag(L, false); }

/* p:has_tag(set, h) */
static int l_pool_has_tag(lua_State *L) {
    lpool *p = check_pool(L);
    lidset *s = check_tags(L, p, 2, "ark.pool:has_tag");
    ark_handle h;
    lua_pushboolean(L, lark_handle(L, 3, &h) &&
                           ark_pool_has_tag(p->b.pool, s->s, h));
    return 1;
}

/* p:id(h): the id of the live element h (what tag sets hold), or nil. */
static int l_pool_id(lua_State *L) {
    lpool *p = check_pool(L);
    ark_handle h;
    uint32_t id = lark_handle(L, 2, &h) ? ark_pool_id(p->b.pool, h) : 0;
    if (id == 0) {
        lua_pushnil(L);
    } else {
        lua_pushinteger(L, (lua_Integer)id);
    }
    return 1;
}

/* p:handle_by_id(id): the handle of the live element with that id, or
 * nil. */
static int l_pool_handle_by_id(lua_State *L) {
    lpool *p = check_pool(L);
    uint32_t id;
    ark_handle h = lark_id(L, 2, &id) ? ark_pool_handle_by_id(p->b.pool, id)
                                      : ARK_NULL_HANDLE;
    if (h == ARK_NULL_HANDLE) {
        lua_pushnil(L);
    } else {
        lark_push_u64(L, h);
    }
    return 1;
}

/* A query: ark_query over the C containers, and the Lua containers of its
 * terms (env[0] the entity pool, env[k + 1] term k's, kept alive there).
 * Terms 0 .. nwith - 1 are the `with` ones, in the order given; the
 * `without` ones follow. */
enum { LQ_TABLE, LQ_POOL, LQ_TAG };

typedef struct lquery {
    const char *tag; /* LARK_QUERY */
    ark_query q;
    lbox *entities;
    unsigned n, nwith;
    unsigned char kind[ARK_QUERY_MAX_TERMS];
    void *term[ARK_QUERY_MAX_TERMS]; /* lbox (LQ_TABLE, LQ_POOL) or lidset */
} lquery;

/* Raise unless every container of q is open and its tag sets attached. */
static void query_open(lua_State *L, const lquery *q) {
    bool open = q->entities->c != NULL;
    for (unsigned k = 0; k < q->n && open; k++) {
        if (q->kind[k] == LQ_TAG) {
            const lidset *s = q->term[k];
            open = s->s != NULL && s->world == q->entities;
        } else {
            open = ((const lbox *)q->term[k])->c != NULL;
        }
    }
    if (!open) {
        luaL_error(L, "ark.query: a container of the query is closed (or a "
                      "tag set detached)");
    }
}

static lquery *check_query(lua_State *L) {
    lquery *q = lark_self(L, LARK_QUERY);
    query_open(L, q);
    return q;
}

/* Add the container at idx (absolute) as a with or without term. */
static void query_term(lua_State *L, lquery *q, int idx, bool with,
                       const char *who) {
    const char *list = with ? "with" : "without";
    if (q->n == ARK_QUERY_MAX_TERMS) {
        luaL_error(L, "%s: at most %d terms", who, ARK_QUERY_MAX_TERMS);
    }
    lbox *b = lark_box(L, idx);
    lidset *s = lark_test(L, idx, LARK_IDSET);
    ark_status st = ARK_EINVAL;
    unsigned k = q->n;
    if (b != NULL && b->c != NULL) {
        if (is_pool(b)) {
            st = with ? ark_query_with_pool(&q->q, b->pool, NULL)
                      : ark_query_without_pool(&q->q, b->pool, NULL);
            q->kind[k] = LQ_POOL;
        } else {
            st = with ? ark_query_with_table(&q->q, b->t, NULL)
                      : ark_query_without_table(&q->q, b->t, NULL);
            q->kind[k] = LQ_TABLE;
        }
        q->term[k] = b;
    } else if (s != NULL && s->s != NULL) {
        st = with ? ark_query_with_tag(&q->q, s->s, NULL)
                  : ark_query_without_tag(&q->q, s->s, NULL);
        q->kind[k] = LQ_TAG;
        q->term[k] = s;
    } else {
        luaL_error(L,
                   "%s: a %s term is a keyed ark.table or ark.pool or an "
                   "attached ark.idset, open (got %s)",
                   who, list, luaL_typename(L, idx));
    }
    if (st != ARK_OK) {
        luaL_error(L,
                   "%s: a %s term is not keyed by (or, a set, attached to) "
                   "the query's entity pool",
                   who, list);
    }
    q->n++;
}

/* ark.query(entities, { with = {...}, without = {...} }) */
static int l_query_new(lua_State *L) {
    static const char *const options[] = {"with", "without", NULL};
    const char *who = "ark.query";
    lua_settop(L, 2);
    lpool *e = lark_test(L, 1, LARK_POOL);
    if (e == NULL || e->b.pool == NULL || e->b.keyed) {
        return luaL_error(L,
                          "%s: the entities are an open ark.pool keyed by "
                          "nothing",
                          who);
    }
    lark_opts_check(L, 2, who, options);
    lquery *q = lark_newud(L, sizeof *q);
    memset(q, 0, sizeof *q);
    q->tag = LARK_QUERY;
    q->entities = &e->b;
    ark_query_init(&q->q, e->b.pool);
    lua_pushvalue(L, lua_upvalueindex(1));
    lua_setmetatable(L, -2);
    lua_createtable(L, ARK_QUERY_MAX_TERMS, 1);
    int env = lua_gettop(L);
    lua_pushvalue(L, 1);
    lua_rawseti(L, env, 0);
    for (int pass = 0; pass < 2 && !lua_isnil(L, 2); pass++) {
        lua_getfield(L, 2, options[pass]);
        int list = lua_gettop(L);
        if (!lua_isnil(L, list)) {
            luaL_checktype(L, list, LUA_TTABLE);
            int n = (int)lark_rawlen(L, list);
            for (int i = 1; i <= n; i++) {
                lua_rawgeti(L, list, i);
                query_term(L, q, lua_gettop(L), pass == 0, who);
                lua_rawseti(L, env, (int)q->n);
            }
        }
        lua_pop(L, 1);
        if (pass == 0) {
            q->nwith = q->n;
        }
    }
    lark_setenv(L, env - 1);
    return 1;
}

/* The walk each() returns: the C iterator, advanced at the start of each
 * step (an entity the loop body removes is never returned). */
typedef struct lqiter {
    lquery *q;
    ark_query_iter it;
    int state; /* 0 not started, 1 running, 2 done */
} lqiter;

/* Upvalues: the walk, the query, then per `with` term a row view (table),
 * the values (pool) or nil (tag). Allocates nothing. */
static int query_step(lua_State *L) {
    lqiter *s = lua_touserdata(L, lua_upvalueindex(1));
    lquery *q = s->q;
    query_open(L, q);
    if (s->state == 0) {
        s->it = ark_query_iter_begin(&q->q);
        s->state = 1;
    } else if (s->state == 1) {
        ark_query_iter_next(&s->it);
    } else {
        return 0;
    }
    if (!ark_query_iter_valid(&s->it)) {
        s->state = 2;
        return 0;
    }
    ark_handle h = ark_query_iter_handle(&s->it);
    lark_push_u64(L, h);
    for (unsigned k = 0; k < q->nwith; k++) {
        int up = lua_upvalueindex((int)k + 3);
        switch (q->kind[k]) {
        case LQ_TABLE:
            ((lrow *)lua_touserdata(L, up))->h = h;
            lua_pushvalue(L, up);
            break;
        case LQ_POOL:
            lark_env_get(L, up, s->it.id);
            break;
        default:
            lua_pushboolean(L, 1);
            break;
        }
    }
    return 1 + (int)q->nwith;
}

/* q:each(), pairs(q): for e, c1, c2, ... in q:each() */
static int l_query_each(lua_State *L) {
    lquery *q = check_query(L);
    lqiter *s = lark_newud(L, sizeof *s);
    memset(s, 0, sizeof *s);
    s->q = q;
    lua_pushvalue(L, 1);
    lark_getenv(L, 1);
    int env = lua_gettop(L);
    for (unsigned k = 0; k < q->nwith; k++) {
        lua_rawgeti(L, env, (int)k + 1);
        if (q->kind[k] == LQ_TABLE) {
            lrow *row = lark_newud(L, sizeof *row);
            row->tag = LARK_ROW;
            row->t = q->term[k];
            row->h = ARK_NULL_HANDLE;
            luaL_getmetatable(L, LARK_ROW);
            lua_setmetatable(L, -2);
            lark_anchor(L, -1, -2);
        } else if (q->kind[k] == LQ_POOL) {
            lark_getenv(L, -1);
        } else {
            lua_pushnil(L);
        }
        lua_remove(L, -2);
    }
    lua_remove(L, env);
    lua_pushcclosure(L, query_step, 2 + (int)q->nwith);
    return 1;
}

/* q:count(): the entities that match now. */
static int l_query_count(lua_State *L) {
    lquery *q = check_query(L);
    size_t n = 0;
    for (ark_query_iter it = ark_query_iter_begin(&q->q);
         ark_query_iter_valid(&it); ark_query_iter_next(&it)) {
        n++;
    }
    lua_pushinteger(L, (lua_Integer)n);
    return 1;
}

static int l_query_tostring(lua_State *L) {
    lquery *q = lark_self(L, LARK_QUERY);
    lark_pushf(L, "ark.query (%llu with, %llu without)",
               (unsigned long long)q->nwith,
               (unsigned long long)(q->n - q->nwith));
    return 1;
}

/* ---- the module ---- */

/* The methods pools and tables share. */
static const luaL_Reg box_methods[] = {
    {"remove", l_remove}, {"remove_later", l_remove_later},
    {"flush", l_flush},   {"clear", l_clear},
    {"check", l_check},   {"reserve", l_reserve},
    {"seal", l_seal},     {"unseal", l_unseal},
    {"layout", l_layout}, {"close", l_close},
    {NULL, NULL}};

static const luaL_Reg pool_methods[] = {{"insert", l_pool_insert},
                                        {"insert_at", l_pool_insert_at},
                                        {"get", l_pool_get},
                                        {"set", l_pool_set},
                                        {"pairs", l_pool_pairs},
                                        {"attach", l_pool_attach},
                                        {"detach", l_pool_detach},
                                        {"tag", l_pool_tag},
                                        {"untag", l_pool_untag},
                                        {"has_tag", l_pool_has_tag},
                                        {"id", l_pool_id},
                                        {"handle_by_id", l_pool_handle_by_id},
                                        {NULL, NULL}};

static const luaL_Reg pool_meta[] = {{"__len", l_len},
                                     {"__pairs", l_pool_pairs},
                                     {"__tostring", l_tostring},
                                     {"__close", l_close},
                                     {"__gc", l_gc},
                                     {NULL, NULL}};

static const luaL_Reg table_methods[] = {{"insert", l_table_insert},
                                         {"insert_at", l_table_insert_at},
                                         {"get", l_table_get},
                                         {"set", l_table_set},
                                         {"rows", l_table_rows},
                                         {"column", l_table_column},
                                         {"column_ptr", l_table_column_ptr},
                                         {"columns", l_table_columns},
                                         {"at", l_table_at},
                                         {"row", l_table_row},
                                         {"nrows", l_table_nrows},
                                         {"append", l_table_append},
                                         {"save", l_table_save},
                                         {NULL, NULL}};

static const luaL_Reg table_meta[] = {{"__len", l_len},
                                      {"__tostring", l_tostring},
                                      {"__close", l_close},
                                      {"__gc", l_gc},
                                      {NULL, NULL}};

static const luaL_Reg idset_methods[] = {
    {"insert", l_idset_insert},
    {"remove", l_idset_remove},
    {"contains", l_idset_contains},
    {"at", l_idset_at},
    {"find", l_idset_find},
    {"ids", l_idset_ids},
    {"intersect", l_idset_intersect},
    {"union", l_idset_union},
    {"difference", l_idset_difference},
    {"intersect_count", l_idset_intersect_count},
    {"save", l_idset_save},
    {"validate", l_idset_validate},
    {"close", l_idset_close},
    {NULL, NULL}};

static const luaL_Reg idset_meta[] = {{"__len", l_idset_len},
                                      {"__tostring", l_idset_tostring},
                                      {"__close", l_idset_close},
                                      {"__gc", l_idset_gc},
                                      {NULL, NULL}};

static const luaL_Reg query_methods[] = {
    {"each", l_query_each}, {"count", l_query_count}, {NULL, NULL}};

static const luaL_Reg query_meta[] = {
    {"__pairs", l_query_each}, {"__tostring", l_query_tostring}, {NULL, NULL}};

static const luaL_Reg row_meta[] = {{"__index", l_row_index},
                                    {"__newindex", l_row_newindex},
                                    {"__tostring", l_row_tostring},
                                    {NULL, NULL}};

static const luaL_Reg column_meta[] = {{"__index", l_column_index},
                                       {"__newindex", l_column_newindex},
                                       {"__len", l_column_len},
                                       {"__tostring", l_column_tostring},
                                       {NULL, NULL}};

/* Set the functions of l into the table on top, each closing over the
 * metatable at mt. */
static void set_funcs(lua_State *L, const luaL_Reg *l, int mt) {
    for (; l->name != NULL; l++) {
        lua_pushvalue(L, mt);
        lua_pushcclosure(L, l->func, 1);
        lua_setfield(L, -2, l->name);
    }
}

/* Make metatable name with meta and (if given) an __index table of
 * methods and more methods; leave it on top. */
static int new_type(lua_State *L, const char *name, const luaL_Reg *meta,
                    const luaL_Reg *methods, const luaL_Reg *more) {
    luaL_newmetatable(L, name);
    int mt = lua_gettop(L);
    set_funcs(L, meta, mt);
    if (methods != NULL) {
        lua_newtable(L);
        set_funcs(L, methods, mt);
        if (more != NULL) {
            set_funcs(L, more, mt);
        }
        lua_setfield(L, mt, "__index");
    }
    lua_pushstring(L, name);
    lua_setfield(L, mt, "__name");
    /* getmetatable gives the name: the metamethods stay inside. */
    lua_pushstring(L, name);
    lua_setfield(L, mt, "__metatable");
    return mt;
}

LARK_EXPORT int luaopen_ark(lua_State *L);

LARK_EXPORT int luaopen_ark(lua_State *L) {
    lua_newtable(L);
    int mod = lua_gettop(L);
    luaL_newmetatable(L, LARK_BUFFER);
    lua_pushcfunction(L, l_buffer_gc);
    lua_setfield(L, -2, "__gc");
    lua_pop(L, 1);
    new_type(L, LARK_ROW, row_meta, NULL, NULL);
    new_type(L, LARK_COLUMN, column_meta, NULL, NULL);
    lua_pop(L, 2);

    int mt = new_type(L, LARK_POOL, pool_meta, pool_methods, box_methods);
    lua_pushcclosure(L, l_pool_new, 1);
    lua_setfield(L, mod, "pool");
    (void)mt;

    mt = new_type(L, LARK_TABLE, table_meta, table_methods, box_methods);
    lua_pushvalue(L, mt);
    lua_pushcclosure(L, l_table_new, 1);
    lua_setfield(L, mod, "table");
    lua_pushcclosure(L, l_table_load, 1);
    lua_setfield(L, mod, "table_load");

    mt = new_type(L, LARK_IDSET, idset_meta, idset_methods, NULL);
    lua_pushvalue(L, mt);
    lua_pushcclosure(L, l_idset_new, 1);
    lua_setfield(L, mod, "idset");
    lua_pushcclosure(L, l_idset_load, 1);
    lua_setfield(L, mod, "idset_load");

    mt = new_type(L, LARK_QUERY, query_meta, query_methods, NULL);
    lua_pushcclosure(L, l_query_new, 1);
    lua_setfield(L, mod, "query");

    /* The sizes of the C API's structs as this module's compiler lays
     * them out: the tests hold LuaJIT's FFI declarations to them. */
    static const struct {
        const char *name;
        size_t size;
    } sizes[] = {{"ark_query", sizeof(ark_query)},
                 {"ark_query_iter", sizeof(ark_query_iter)},
                 {"ark_pool_iter", sizeof(ark_pool_iter)},
                 {"ark_idset_iter", sizeof(ark_idset_iter)},
                 {"ark_pool_config", sizeof(ark_pool_config)},
                 {"ark_table_config", sizeof(ark_table_config)}};
    lua_createtable(L, 0, (int)(sizeof sizes / sizeof *sizes));
    for (size_t i = 0; i < sizeof sizes / sizeof *sizes; i++) {
        lua_pushinteger(L, (lua_Integer)sizes[i].size);
        lua_setfield(L, -2, sizes[i].name);
    }
    lua_setfield(L, mod, "_sizeof");

    lua_pushfstring(L, "ark %d.%d.%d", ARK_VERSION_MAJOR, ARK_VERSION_MINOR,
                    ARK_VERSION_PATCH);
    lua_setfield(L, mod, "_VERSION");
    lua_settop(L, mod);
    return 1;
}
