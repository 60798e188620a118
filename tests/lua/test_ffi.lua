-- SPDX-License-Identifier: MIT
-- require "ark.ffi" (LuaJIT): the C API called directly, and the cdef
-- generator run on headers shaped as the refactored ones will be.
local H = require "harness"
local casejit = H.casejit
local eq, ok = H.eq, H.ok

local ffi = H.jit and require "ffi"

casejit("pool", function()
  local C = require "ark.ffi"
  local out = ffi.new("ark_pool *[1]")
  local cfg = ffi.new("ark_pool_config", { elem_size = 8, elem_align = 8,
                                           index_bits = 20, gen_bits = 12 })
  eq(C.ark_pool_create(out, cfg), C.ARK_OK)
  local p = ffi.gc(out[0], C.ark_pool_destroy)
  local h = ffi.new("ark_handle[1]")
  local v = ffi.new("double[1]")
  local hs = {}
  for i = 1, 1000 do
    v[0] = i
    eq(C.ark_pool_insert(p, v, h), C.ARK_OK)
    hs[i] = h[0]
  end
  eq(tonumber(C.ark_pool_count(p)), 1000)
  eq(ffi.cast("double *", C.ark_pool_get(p, hs[7]))[0], 7)
  eq(C.ark_pool_remove(p, hs[7]), C.ARK_OK)
  eq(C.ark_pool_get(p, hs[7]), nil)
  eq(C.ark_pool_check(p, hs[7]), C.ARK_ESTALE)
  eq(ffi.string(C.ark_strerror(C.ARK_ESTALE)):match("^stale") ~= nil, true)
  eq(C.ark_pool_unseal(p, C.ark_pool_seal(p, hs[8])), hs[8])
  -- the inline iterator, called as exported functions
  local sum, n = 0, 0
  local it = C.ark_pool_iter_begin(p)
  while C.ark_pool_iter_valid(it) do
    sum = sum + ffi.cast("double *", it.elem)[0]
    n = n + 1
    C.ark_pool_iter_next(it)
  end
  eq(n, 999)
  eq(sum, 1000 * 1001 / 2 - 7)
end)

casejit("table", function()
  local C = require "ark.ffi"
  local sizes = ffi.new("size_t[2]", 4, 4)
  local cfg = ffi.new("ark_table_config", { column_sizes = sizes, ncolumns = 2 })
  local out = ffi.new("ark_table *[1]")
  eq(C.ark_table_create(out, cfg), C.ARK_OK)
  local t = ffi.gc(out[0], C.ark_table_destroy)
  local h, row = ffi.new("ark_handle[1]"), ffi.new("size_t[1]")
  local hs = {}
  for i = 1, 100 do
    eq(C.ark_table_insert(t, h, row), C.ARK_OK)
    hs[i] = h[0]
    ffi.cast("float *", C.ark_table_column(t, 0))[row[0]] = i
  end
  local x = ffi.cast("float *", C.ark_table_column(t, 0))
  local vx = ffi.cast("float *", C.ark_table_column(t, 1))
  for i = 0, tonumber(C.ark_table_rows(t)) - 1 do
    vx[i] = 1
    x[i] = x[i] + vx[i]
  end
  eq(x[C.ark_table_row(t, hs[10])], 11)
  eq(C.ark_table_remove(t, hs[1]), C.ARK_OK)
  eq(C.ark_table_row(t, hs[1]), ffi.cast("size_t", ffi.cast("int64_t", -1)))
  eq(tonumber(C.ark_table_count(t)), 99)
  eq(C.ark_table_handle_at(t, 0), hs[100], "swap-and-pop")
end)

casejit("idset", function()
  local C = require "ark.ffi"
  local function new()
    local out = ffi.new("ark_idset *[1]")
    eq(C.ark_idset_create(out, nil), C.ARK_OK)
    return ffi.gc(out[0], C.ark_idset_destroy)
  end
  local a, b, i = new(), new(), new()
  for id = 0, 999 do
    C.ark_idset_insert(a, id)
    if id % 3 == 0 then
      C.ark_idset_insert(b, id)
    end
  end
  eq(C.ark_idset_contains(a, 500), true)
  eq(C.ark_idset_at(a, 10), 10)
  eq(C.ark_idset_intersect(i, a, b), C.ARK_OK)
  eq(tonumber(C.ark_idset_count(i)), 334)
  eq(tonumber(C.ark_idset_intersect_count(a, b)), 334)
  local n, last = 0, -1
  local it = C.ark_idset_iter_begin(i, 0)
  while C.ark_idset_iter_valid(it) do
    ok(it.id > last and it.id % 3 == 0)
    last = it.id
    n = n + 1
    C.ark_idset_iter_next(it)
  end
  eq(n, 334)
end)

-- The cdef carries ark/entity.h, and its structs are laid out as the C
-- compiler lays them out (ark._sizeof: the sizes ark.so was built with).
casejit("entity_layout", function()
  local C = require "ark.ffi"
  local ark = require "ark"
  local n = 0
  for name, size in pairs(ark._sizeof) do
    eq(ffi.sizeof(name), size, "sizeof(" .. name .. ")")
    n = n + 1
  end
  ok(n >= 6)
  eq(ffi.offsetof("ark_query_iter", "id"), 0)
  ok(C.ark_pool_attach_idset and C.ark_query_with_tag and C.ark_pool_handle_by_id)
end)

-- Entities through the FFI: a keyed pool and a keyed table, a tag, and
-- the inline query iterator called as exported functions.
casejit("entity_query", function()
  local C = require "ark.ffi"
  local function pool(keys, size)
    local out = ffi.new("ark_pool *[1]")
    local cfg = ffi.new("ark_pool_config", { elem_size = size, elem_align = size, keys = keys })
    eq(C.ark_pool_create(out, cfg), C.ARK_OK)
    return ffi.gc(out[0], C.ark_pool_destroy)
  end
  local units = pool(nil, 4)
  local hp = pool(units, 8) -- a double per unit
  local sizes = ffi.new("size_t[1]", 4)
  local tout = ffi.new("ark_table *[1]")
  eq(C.ark_table_create(tout, ffi.new("ark_table_config",
    { column_sizes = sizes, ncolumns = 1, keys = units })), C.ARK_OK)
  local speed = ffi.gc(tout[0], C.ark_table_destroy)
  local sout = ffi.new("ark_idset *[1]")
  eq(C.ark_idset_create(sout, nil), C.ARK_OK)
  local hot = sout[0]
  eq(C.ark_pool_attach_idset(units, hot), C.ARK_OK)
  local h = ffi.new("ark_handle[1]")
  local v, d = ffi.new("int32_t[1]"), ffi.new("double[1]")
  local row = ffi.new("size_t[1]")
  local hs = {}
  for i = 1, 100 do
    v[0] = i
    eq(C.ark_pool_insert(units, v, h), C.ARK_OK)
    hs[i] = h[0]
    if i % 2 == 0 then
      d[0] = i / 2
      eq(C.ark_pool_insert_at(hp, h[0], d), C.ARK_OK)
    end
    if i % 3 == 0 then
      eq(C.ark_table_insert_at(speed, h[0], row), C.ARK_OK)
      ffi.cast("float *", C.ark_table_column(speed, 0))[row[0]] = i
    end
    if i % 5 == 0 then
      eq(C.ark_pool_tag(units, hot, h[0]), C.ARK_OK)
    end
  end
  eq(C.ark_pool_id(units, hs[7]), 7)
  eq(C.ark_pool_handle_by_id(units, 7), hs[7])
  local q = ffi.new("ark_query")
  C.ark_query_init(q, units)
  local term = ffi.new("unsigned[1]")
  eq(C.ark_query_with_pool(q, hp, term), C.ARK_OK)
  eq(term[0], 0)
  eq(C.ark_query_with_table(q, speed, term), C.ARK_OK)
  eq(C.ark_query_without_tag(q, hot, term), C.ARK_OK)
  eq(term[0], 2)
  local function walk()
    local n, sum = 0, 0
    local it = C.ark_query_iter_begin(q)
    while C.ark_query_iter_valid(it) do
      local i = ffi.cast("int32_t *", C.ark_pool_get(units, C.ark_query_iter_handle(it)))[0]
      eq(ffi.cast("double *", C.ark_query_iter_elem(it, 0))[0], i / 2)
      local x = ffi.cast("float *", C.ark_table_column(speed, 0))
      eq(x[C.ark_query_iter_row(it, 1)], i)
      eq(it.id, i)
      n, sum = n + 1, sum + i
      C.ark_query_iter_next(it)
    end
    return n, sum
  end
  local n, sum = walk()
  -- multiples of 6 below 100 not multiples of 5: 6 ... 96 but 30, 60, 90
  eq(n, 13)
  eq(sum, 6 * (16 * 17 / 2) - 180)
  eq(C.ark_pool_remove(units, hs[6]), C.ARK_OK) -- its components go too
  eq(C.ark_pool_get(hp, hs[6]), nil)
  eq(select(1, walk()), 12)
  C.ark_idset_destroy(hot) -- attached: it detaches itself (valgrind: no leak)
end)

-- Headers shaped as the refactor leaves them: inline bodies and private
-- structs in ark/internal/, public structs with private fields pointing
-- to forward-declared struct ark__... types, FILE, _Atomic, _Alignas.
local fixture_public = [[
#ifndef ARK_DEMO_H
#define ARK_DEMO_H
#include <stdatomic.h>
#include <stdint.h>
#include <stdio.h>
#ifdef __cplusplus
extern "C" {
#endif
#define ARK_API __attribute__((visibility("default")))
#define ARK_INLINE inline
typedef struct ark_demo ark_demo;
typedef struct ark__demo_priv ark__demo_priv;
typedef struct ark_demo_iter {
    uint64_t handle;
    const struct ark__demo_view *view;
    const ark__demo_priv *priv;
    _Alignas(16) unsigned char pad[16];
} ark_demo_iter;
typedef struct ark_demo_ref {
    _Atomic uint32_t count;
    void (*destroy)(struct ark_demo_ref *r);
} ark_demo_ref;
ARK_API ark_demo_iter ark_demo_iter_begin(const ark_demo *d);
ARK_INLINE void *ark_demo_get(const ark_demo *d, uint64_t h);
ARK_API void ark_demo_dump(const ark_demo *d, FILE *f);
ARK_API int ark__demo_private(void);
#ifdef __cplusplus
}
#endif
#include "ark/internal/demo.h"
#endif
]]
local fixture_internal = [[
struct ark__demo_view { uint64_t *slots; };
struct ark__demo_priv { int x; };
typedef unsigned __int128 ark__demo_wide;
static inline uint32_t ark__demo_helper(uint32_t x) { return x + 1u; }
ARK_INLINE __attribute__((always_inline)) void *
ark_demo_get(const ark_demo *d, uint64_t h) {
    const char *s = "}{";
    (void)d; (void)s;
    if (h == 0) { return (void *)0; }
    return (void *)0;
}
]]

casejit("gen_ffi_refactored_headers", function()
  local cc, src = os.getenv("ARK_CC"), os.getenv("ARK_LUA_SRC")
  ok(cc and src, "ARK_CC and ARK_LUA_SRC are set by ctest")
  local dir = os.tmpname()
  os.remove(dir)
  ok(os.execute("mkdir -p " .. dir .. "/include/ark/internal"))
  local function write(path, text)
    local f = assert(io.open(dir .. "/" .. path, "w"))
    f:write(text)
    f:close()
  end
  write("include/ark/ark.h", '#include "ark/demo.h"\n')
  write("include/ark/demo.h", fixture_public)
  write("include/ark/internal/demo.h", fixture_internal)
  ok(os.execute(("%s -std=c11 -E -I%s/include %s/include/ark/ark.h -o %s/pp.i")
                :format(cc, dir, dir, dir)))
  assert(loadfile(src .. "/gen_ffi.lua"))(dir .. "/pp.i", dir .. "/include",
                                          dir .. "/cdef.lua")
  local text = dofile(dir .. "/cdef.lua")
  os.execute("rm -rf " .. dir)
  ffi.cdef(text)
  ok(text:find("ark_demo_get", 1, true), "inline function declared")
  ok(text:find("ark_demo_iter_begin", 1, true))
  ok(text:find("typedef struct FILE FILE;", 1, true), "FILE opaque")
  ok(not text:find("ark__demo_private", 1, true), "private function dropped")
  ok(not text:find("ark__demo_helper", 1, true), "internal function dropped")
  ok(not text:find("__int128", 1, true), "internal type dropped")
  ok(not text:find("slots", 1, true), "internal struct body dropped")
  ok(not text:find("inline", 1, true) and not text:find("__attribute__((visibility", 1, true))
  eq(ffi.offsetof("ark_demo_iter", "pad"), 32, "_Alignas kept")
  eq(ffi.sizeof("ark_demo_iter"), 48)
  eq(ffi.sizeof("ark_demo_ref"), 16)
end)
