-- SPDX-License-Identifier: MIT
-- bench/lua/bench.lua [full|quick|smoke]: the "lua" section of make bench.
-- One interpreter, one process: each workload runs RUNS times (medians,
-- with min-max), ark and the plain-Lua way side by side, and the ratio
-- ark / Lua (below 1: ark is faster or smaller) against the goal.
-- Needs package.cpath to reach the module (bench/run.sh sets it).
local ark = require "ark"

local mode = arg and arg[1] or "full"
local sizes = {
  full = { rows = 1000000, pool = 1000000, ids = 100000, ents = 100000, runs = 5 },
  quick = { rows = 100000, pool = 100000, ids = 100000, ents = 100000, runs = 3 },
  smoke = { rows = 2000, pool = 2000, ids = 2000, ents = 2000, runs = 1 },
}
local S = assert(sizes[mode], "mode: full, quick or smoke")
local RUNS = tonumber(os.getenv("ARK_BENCH_RUNS") or "") or S.runs
local JIT = type(rawget(_G, "jit")) == "table"
local clock = os.clock

-- ---- reporting ----------------------------------------------------------

local function first_line(path, pattern)
  local f = io.open(path)
  if not f then
    return nil
  end
  for line in f:lines() do
    local m = line:match(pattern)
    if m then
      f:close()
      return m
    end
  end
  f:close()
end

print(("# ark lua bench, mode %s, %d runs each (medians, min-max)"):format(mode, RUNS))
print("# machine: " .. (first_line("/proc/cpuinfo", "^model name%s*:%s*(.*)") or "?")
      .. ", " .. (first_line("/proc/meminfo", "^MemTotal:%s*(%d+)") or "?") .. " kB")
print("# interpreter: " .. (JIT and jit.version or _VERSION) .. ", module " .. ark._VERSION)

local results = {}

-- A row: what, n, ark's and Lua's samples (seconds or bytes), the unit,
-- the goal on ark / Lua (nil: reported only).
local function median(xs)
  table.sort(xs)
  return xs[math.floor((#xs + 1) / 2)], xs[1], xs[#xs]
end

local function fmt(v, unit)
  if unit == "ms" then
    return ("%.2f"):format(v * 1000)
  elseif unit == "MB" then
    return ("%.1f"):format(v / 1048576)
  end
  return tostring(v)
end

local function report(what, n, a, b, unit, goal)
  if mode == "smoke" then
    goal = nil -- sizes too small to judge: the smoke run checks it runs
  end
  local am, alo, ahi = median(a)
  local bm, blo, bhi = median(b)
  local r = am / bm
  local verdict = ""
  if goal then
    verdict = r <= goal and ("<= %.2f met"):format(goal)
      or ("<= %.2f MISSED (%.2fx the goal)"):format(goal, r / goal)
  end
  local spread = ""
  if #a > 1 then
    spread = (" [%s-%s | %s-%s]"):format(fmt(alo, unit), fmt(ahi, unit),
                                         fmt(blo, unit), fmt(bhi, unit))
  end
  print(("%-44s %8d %10s %10s %s %7.3f  %s%s"):format(what, n, fmt(am, unit),
        fmt(bm, unit), unit, r, verdict, spread))
  results[#results + 1] = { what = what, ratio = r, goal = goal }
end

local function header(title, a, b)
  print()
  print("## " .. title)
  print(("%-44s %8s %10s %10s    %7s  goal [ark min-max | %s min-max]"):format(
    "workload", "n", "ark", b, "ark/" .. b, b))
end

-- Run fn(k) RUNS times and return the timings; setup(k) (untimed) before.
local function times(fn, setup)
  local out = {}
  for k = 1, RUNS do
    if setup then
      setup(k)
    end
    collectgarbage()
    local t0 = clock()
    fn(k)
    out[k] = clock() - t0
  end
  return out
end

local function rss()
  local f = io.open("/proc/self/statm")
  if not f then
    return 0
  end
  local _, res = f:read("*n", "*n")
  f:close()
  return res * 4096
end

local function heap()
  return collectgarbage("count") * 1024
end

-- ---- typed table vs Lua tables -------------------------------------------

local N = S.rows
local COLS = { { "x", "float" }, { "y", "float" }, { "vx", "float" }, { "vy", "float" } }

local function fill_ark(t, n)
  for i = 1, n do
    t:insert(i, -i, 1, 0.5)
  end
end

local function fill_lua(n)
  local objs = {}
  for i = 1, n do
    objs[i] = { x = i, y = -i, vx = 1, vy = 0.5 }
  end
  return objs
end

header(("typed table, %d rows of {x, y, vx, vy} (float), vs Lua tables"):format(N), "ark", "lua")

-- Memory first, in a fresh process state: the table's pages are new, so
-- the growth of the resident set is its size; the Lua tables' size is
-- the growth of the Lua heap (exact).
collectgarbage()
local r0, h0 = rss(), heap()
local t = ark.table(COLS)
fill_ark(t, N)
collectgarbage()
local ark_bytes = (rss() - r0) + (heap() - h0)
t:close()
t = nil
collectgarbage()
h0 = heap()
local objs = fill_lua(N)
collectgarbage()
local lua_bytes = heap() - h0
report("memory (ark: resident growth; lua: heap)", N, { ark_bytes }, { lua_bytes }, "MB", 0.25)

-- A full collection with the data alive, ark's and then Lua's.
local gct_lua = times(function() collectgarbage() end)
objs = nil
collectgarbage()
t = ark.table(COLS)
fill_ark(t, N)
local gct_ark = times(function() collectgarbage() end)
report("full collectgarbage() with the rows alive", N, gct_ark, gct_lua, "ms", 0.05)
t:close()
t = nil

local ti_ark = times(function() fill_ark(t, N) end, function()
  if t then
    t:close()
  end
  t = ark.table(COLS)
end)
local ti_lua = times(function() objs = fill_lua(N) end, function() objs = nil end)
report("insert every row: t:insert(x, y, vx, vy)", N, ti_ark, ti_lua, "ms", 1.0)
local ti_named = times(function()
  for i = 1, N do
    t:insert({ x = i, y = -i, vx = 1, vy = 0.5 })
  end
end, function()
  t:close()
  t = ark.table(COLS)
end)
report("insert every row: t:insert{x=, y=, vx=, vy=}", N, ti_named, ti_lua, "ms")
local function fresh()
  t:close()
  t = ark.table(COLS)
end
if JIT then
  local ffi = require "ffi"
  local ti_bulk = times(function()
    local first = t:append(N) - 1
    local function col(name)
      local p, ctype = t:column_ptr(name)
      return ffi.cast(ctype, p)
    end
    local x, y, vx, vy = col("x"), col("y"), col("vx"), col("vy")
    for i = 0, N - 1 do
      local r = first + i
      x[r], y[r], vx[r], vy[r] = i + 1, -i - 1, 1, 0.5
    end
  end, fresh)
  report("insert every row: t:append(n), FFI columns", N, ti_bulk, ti_lua, "ms", 1.0)
else
  local ti_bulk = times(function()
    local first = t:append(N) - 1
    local x, y, vx, vy = t:column("x"), t:column("y"), t:column("vx"), t:column("vy")
    for i = 1, N do
      local r = first + i
      x[r], y[r], vx[r], vy[r] = i, -i, 1, 0.5
    end
  end, fresh)
  report("insert every row: t:append(n), column views", N, ti_bulk, ti_lua, "ms")
end

-- The update loop x += vx, y += vy over every row.
local function update_lua()
  local o = objs
  for i = 1, #o do
    local e = o[i]
    e.x = e.x + e.vx
    e.y = e.y + e.vy
  end
end
local tu_lua = times(update_lua)
if JIT then
  local ffi = require "ffi"
  local function col(name)
    local p, ctype = t:column_ptr(name)
    return ffi.cast(ctype, p)
  end
  local x, y, vx, vy = col("x"), col("y"), col("vx"), col("vy")
  local tu_ffi = times(function()
    for i = 0, t:nrows() - 1 do
      x[i] = x[i] + vx[i]
      y[i] = y[i] + vy[i]
    end
  end)
  report("update x += vx, y += vy: FFI columns", N, tu_ffi, tu_lua, "ms", 1.0)
end
local cx, cy, cvx, cvy = t:column("x"), t:column("y"), t:column("vx"), t:column("vy")
local tu_col = times(function()
  for i = 1, #cx do
    cx[i] = cx[i] + cvx[i]
    cy[i] = cy[i] + cvy[i]
  end
end)
report("update: column views x[i] (1 C call/access)", N, tu_col, tu_lua, "ms")
local tu_rows = times(function()
  for _, row in t:rows() do
    row.x = row.x + row.vx
    row.y = row.y + row.vy
  end
end)
report("update: for h, row in t:rows()", N, tu_rows, tu_lua, "ms")
t:close()
t, objs = nil, nil
collectgarbage()

-- ---- value pool vs a pure-Lua generational map ----------------------------

local NP = S.pool
local function shuffled(list, seed)
  local x = seed
  for i = #list, 2, -1 do
    x = x * 48271 % 2147483647
    local j = x % i + 1
    list[i], list[j] = list[j], list[i]
  end
  return list
end

if not math.type then
  print()
  print("## value pool vs a pure-Lua generational map: measured under Lua 5.4 only")
else
  local genmap = dofile((arg[0]:match("^(.*)/[^/]*$") or ".") .. "/genmap.lua")
  header(("value pool vs bench/lua/genmap.lua, %d values"):format(NP), "ark", "lua")
  local function run(new)
    local ins, get, rem, iter, it2 = {}, {}, {}, {}, {}
    for k = 1, RUNS do
      local m = new()
      collectgarbage()
      local hs = {}
      local t0 = clock()
      for i = 1, NP do
        hs[i] = m:insert(i)
      end
      ins[k] = clock() - t0
      shuffled(hs, k)
      t0 = clock()
      local s = 0
      for i = 1, NP do
        s = s + m:get(hs[i])
      end
      get[k] = clock() - t0
      assert(s == NP * (NP + 1) / 2)
      if m.pairs then
        t0 = clock()
        s = 0
        for _, v in m:pairs() do
          s = s + v
        end
        iter[k] = clock() - t0
        assert(s == NP * (NP + 1) / 2)
      else
        t0 = clock()
        s = 0
        for _, v in pairs(m.values) do
          s = s + v
        end
        iter[k] = clock() - t0
      end
      t0 = clock()
      for i = 1, NP do
        m:remove(hs[i])
      end
      rem[k] = clock() - t0
      if m.close then
        m:close()
      end
    end
    return ins, get, rem, iter
  end
  local ai, ag, ar, ait = run(ark.pool)
  local li, lg, lr, lit = run(genmap.new)
  report("insert", NP, ai, li, "ms", 3.0)
  report("get, random order", NP, ag, lg, "ms", 3.0)
  report("remove, random order", NP, ar, lr, "ms", 3.0)
  report("iterate: p:pairs() vs pairs(values array)", NP, ait, lit, "ms", 1.5)
end

-- ---- id sets ----------------------------------------------------------------

local NI = S.ids
header(("id sets: intersect two sets of %d ids vs a Lua merge of sorted arrays"):format(NI), "ark", "lua")
local function sample(seed, n, span)
  local x, seen, list = seed, {}, {}
  while #list < n do
    x = x * 48271 % 2147483647
    local id = x % span
    if not seen[id] then
      seen[id] = true
      list[#list + 1] = id
    end
  end
  table.sort(list)
  return list
end
local la, lb = sample(1, NI, 4 * NI), sample(2, NI, 4 * NI)
local sa, sb = ark.idset(), ark.idset()
for i = 1, NI do
  sa:insert(la[i])
  sb:insert(lb[i])
end
local function merge(a, b)
  local out, i, j, n = {}, 1, 1, 0
  local na, nb = #a, #b
  while i <= na and j <= nb do
    local x, y = a[i], b[j]
    if x < y then
      i = i + 1
    elseif y < x then
      j = j + 1
    else
      n = n + 1
      out[n] = x
      i = i + 1
      j = j + 1
    end
  end
  return out
end
local expect = #merge(la, lb)
local tm = times(function() assert(#merge(la, lb) == expect) end)
local tx = times(function() assert(#sa:intersect(sb) == expect) end)
local tc = times(function() assert(sa:intersect_count(sb) == expect) end)
report("a:intersect(b) (a new set)", NI, tx, tm, "ms", 0.1)
report("a:intersect_count(b)", NI, tc, tm, "ms")

-- ---- entities: queries and removal vs Lua tables of components -------------

-- NE entities; 80% have a body {x, vx} (a keyed table), 50% a brain (a
-- keyed pool of Lua values); tags: 30% burning, 10% frozen. The plain-Lua
-- world is an array of entity tables holding the same, the fields of a
-- body in a table of its own.
local NE = S.ents
header(("entities: %d, queries and removal vs Lua tables of components"):format(NE), "ark", "lua")
local function world(seed)
  local x = seed
  local function roll(pct)
    x = x * 48271 % 2147483647
    return x % 100 < pct
  end
  local units = ark.pool()
  local body = ark.table({ { "x", "float" }, { "vx", "float" } }, { keys = units })
  local brain = ark.pool({ keys = units })
  local burning, frozen = ark.idset(), ark.idset()
  units:attach(burning)
  units:attach(frozen)
  local lua = {}
  local hs = {}
  for i = 1, NE do
    local e = units:insert(i)
    hs[i] = e
    local le = { id = i }
    lua[i] = le
    if roll(80) then
      body:insert_at(e, i, 1)
      le.body = { x = i, vx = 1 }
    end
    if roll(50) then
      brain:insert_at(e, i)
      le.brain = i
    end
    if roll(30) then
      units:tag(burning, e)
      le.burning = true
    end
    if roll(10) then
      units:tag(frozen, e)
      le.frozen = true
    end
  end
  return { units = units, body = body, brain = brain, burning = burning,
           frozen = frozen, lua = lua, hs = hs }
end
local W = world(7)
local moving = ark.query(W.units, { with = { W.body }, without = { W.frozen } })
local panic = ark.query(W.units, { with = { W.brain, W.burning } })
local function lua_moving(f)
  local l = W.lua
  local n = 0
  for i = 1, #l do
    local e = l[i]
    local b = e.body
    if b and not e.frozen then
      n = n + 1
      if f then
        b.x = b.x + b.vx
      end
    end
  end
  return n
end
local expect_moving = lua_moving()
local qa = times(function()
  local n = 0
  for _, b in moving:each() do
    b.x = b.x + b.vx
    n = n + 1
  end
  assert(n == expect_moving)
end)
local ql = times(function() lua_moving(true) end)
report("update x += vx: with body, without frozen", NE, qa, ql, "ms")
local qc = times(function() assert(moving:count() == expect_moving) end)
local qn = times(function() assert(lua_moving() == expect_moving) end)
report("match only: q:count() vs the Lua loop's test", NE, qc, qn, "ms")
local expect_panic = 0
for i = 1, NE do
  local e = W.lua[i]
  if e.brain and e.burning then expect_panic = expect_panic + e.brain end
end
local pa = times(function()
  local s = 0
  for _, v in panic:each() do s = s + v end
  assert(s == expect_panic)
end)
local pl = times(function()
  local s, l = 0, W.lua
  for i = 1, #l do
    local e = l[i]
    if e.brain and e.burning then s = s + e.brain end
  end
  assert(s == expect_panic)
end)
report("sum of brain values: with brain, burning", NE, pa, pl, "ms")
-- Removal of every entity, its components and tags with it, in random
-- order; the Lua world drops the entity table from a map of live ones.
local ra, rl = {}, {}
for k = 1, RUNS do
  local w = k == 1 and W or world(7 + k)
  local order = {}
  for i = 1, NE do order[i] = i end
  shuffled(order, k)
  collectgarbage()
  local t0 = clock()
  for i = 1, NE do
    w.units:remove(w.hs[order[i]])
  end
  ra[k] = clock() - t0
  assert(#w.units + #w.body + #w.brain + #w.burning + #w.frozen == 0)
  local live = {}
  for i = 1, NE do live[i] = w.lua[i] end
  collectgarbage()
  t0 = clock()
  for i = 1, NE do
    local id = order[i]
    local e = live[id]
    e.body, e.brain = nil, nil
    live[id] = nil
  end
  rl[k] = clock() - t0
  for _, c in ipairs({ w.body, w.brain, w.units }) do c:close() end
end
report("remove every entity (components, tags too)", NE, ra, rl, "ms")

print()
local missed = 0
for _, r in ipairs(results) do
  if r.goal and r.ratio > r.goal then
    missed = missed + 1
  end
end
print(("# goals: %d missed"):format(missed))
