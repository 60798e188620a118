-- SPDX-License-Identifier: MIT
-- ark.pool: values behind generational handles.
local ark = require "ark"
local H = require "harness"
local case, case54, casejit = H.case, H.case54, H.casejit
local eq, ok, raises = H.eq, H.ok, H.raises

case("insert_get_set_remove", function()
  local p = ark.pool()
  local a, b = p:insert("a"), p:insert({ 1, 2 })
  ok(math.floor(a) == a and a ~= b, "handles are distinct integers")
  eq(p:get(a), "a")
  eq(p:get(b)[2], 2)
  eq(#p, 2)
  eq(p:check(a), "ok")
  eq(p:set(a, "A"), true)
  eq(p:get(a), "A")
  eq(p:remove(a), true)
  eq(p:get(a), nil)
  eq(p:check(a), "stale")
  eq(p:remove(a), false)
  eq(p:set(a, 1), false)
  eq(#p, 1)
  eq(p:check(0), "null")
  eq(p:check(12345), "range")
  eq(p:check("1"), "invalid")
  ok(tostring(p):find("1 live", 1, true), tostring(p))
  -- false is a value like any other
  local f = p:insert(false)
  eq(p:get(f), false)
  raises("nil", function() p:insert(nil) end)
  raises("nil", function() p:insert() end)
  raises("nil", function() p:set(b, nil) end)
  raises("ark.pool", function() p.get(ark.idset(), 1) end)
  raises("ark.pool", function() p.get(1, 1) end)
end)

-- A stale handle never names the element that reused its slot: every
-- reuse of a slot bumps its generation.
case("reuse_is_refused", function()
  local p = ark.pool()
  local old = {}
  for round = 1, 3 do
    local hs = {}
    for i = 1, 100 do
      hs[i] = p:insert(round * 1000 + i)
    end
    for _, h in ipairs(hs) do
      old[#old + 1] = h
      p:remove(h)
    end
  end
  for i = 1, 300 do
    p:insert(i)
  end
  for _, h in ipairs(old) do
    eq(p:get(h), nil, "stale handle " .. h)
    eq(p:check(h), "stale")
  end
end)

-- Any Lua value given as a handle: lookups give nil, removals false,
-- check a word, and nothing raises.
case("hostile_handles", function()
  local p = ark.pool({ seal_key = 7 })
  local live = {}
  for i = 1, 50 do
    live[i] = p:insert(i)
  end
  p:remove(live[10])
  local h = live[1]
  local bad = H.hostile({ live[10], tostring(h), h + 0.5, h + 2 ^ 52,
                          h + 2 ^ 32, h - 1 + 2 ^ 32 * 7, -h })
  for _, v in ipairs(bad) do
    local what = "hostile " .. tostring(v)
    eq(p:get(v), nil, what)
    eq(p:set(v, 1), false, what)
    eq(p:remove(v), false, what)
    eq(p:remove_later(v), false, what)
    local c = p:check(v)
    ok(c ~= "ok", what .. " checks " .. c)
    local r, msg = p:insert_at(v, 1)
    if r then -- an integer naming a free slot may be taken: give it back
      ok(math.floor(v) == v, what)
      p:remove(v)
    else
      ok(type(msg) == "string", what)
    end
    local s = p:seal(v)
    ok(s == nil or math.floor(s) == s, what)
    local u = p:unseal(v)
    ok(u == nil or p:get(u) == nil or p:check(u) == "ok", what)
  end
  eq(#p, 49)
  for i = 1, 50 do
    if i ~= 10 then
      eq(p:get(live[i]), i)
    end
  end
  -- an integral float is the same number
  eq(p:get(h + 0.0), 1)
end)

-- Random operations against a model (a Lua table of handle -> value).
case("model", function()
  local r = H.rng(H.seed)
  local p = ark.pool()
  local model, handles, marked = {}, {}, {}
  local count = 0
  local function pick()
    if #handles == 0 then
      return 0
    end
    return handles[r.int(1, #handles)]
  end
  for step = 1, H.n(20000) do
    local op = r.int(1, 100)
    if op <= 40 then
      local v = { step }
      local h = p:insert(v)
      eq(model[h], nil, "fresh handle")
      model[h] = v
      handles[#handles + 1] = h
      count = count + 1
    elseif op <= 60 then
      local h = pick()
      local live = model[h] ~= nil
      eq(p:remove(h), live, "remove")
      if live then
        model[h] = nil
        count = count - 1
      end
    elseif op <= 70 then
      local h = pick()
      local live = model[h] ~= nil
      eq(p:remove_later(h), live, "remove_later")
      if live then
        model[h] = nil
        marked[#marked + 1] = h
        count = count - 1
      end
    elseif op <= 73 then
      eq(p:flush(), #marked, "flush")
      marked = {}
    elseif op <= 85 then
      local h = pick()
      eq(p:get(h), model[h], "get")
      eq(p:check(h), model[h] and "ok" or h == 0 and "null" or "stale",
         "check")
    else
      local h = pick()
      local v = { -step }
      eq(p:set(h, v), model[h] ~= nil, "set")
      if model[h] then
        model[h] = v
      end
    end
    eq(#p, count, "count")
    if #handles > 4000 then
      local keep = {}
      for _, h in ipairs(handles) do
        if model[h] then
          keep[#keep + 1] = h
        end
      end
      handles = keep
    end
  end
  local seen = 0
  for h, v in p:pairs() do
    eq(model[h], v, "pairs value")
    seen = seen + 1
  end
  eq(seen, count, "pairs count")
end)

case("hook_sees_value_and_element", function()
  local got = {}
  local p
  p = ark.pool({ on_remove = function(h, v)
    got[#got + 1] = v
    eq(p:get(h), v, "get from the hook")
    eq(p:check(h), "ok")
  end })
  local a = p:insert("a")
  local b = p:insert("b")
  eq(p:remove(a), true)
  eq(got[1], "a")
  eq(p:remove_later(b), true)
  eq(p:get(b), nil, "marked: invisible at once")
  eq(#got, 1, "no hook before the flush")
  eq(p:flush(), 1)
  eq(got[2], "b")
  p:insert("c")
  p:insert("d")
  p:clear(true)
  eq(#got, 4)
  eq(#p, 0)
  p:insert("e")
  p:clear(false)
  eq(#got, 4, "clear(false) runs no hook")
  eq(#p, 0)
end)

-- A tree: each value lists its children; the hook removes them.
case("hook_removes_children", function()
  local removed = {}
  local p
  p = ark.pool({ on_remove = function(h, node)
    removed[#removed + 1] = node.name
    for _, c in ipairs(node.children) do
      ok(p:remove(c), "remove child from the hook")
    end
  end })
  local function node(name, parent)
    local h = p:insert({ name = name, children = {} })
    if parent then
      local pv = p:get(parent)
      pv.children[#pv.children + 1] = h
    end
    return h
  end
  local root = node("root")
  local a = node("a", root)
  node("a1", a)
  node("a2", a)
  local b = node("b", root)
  node("b1", b)
  local other = node("other")
  eq(#p, 7)
  eq(p:remove(root), true)
  eq(#removed, 6)
  eq(#p, 1)
  eq(p:get(other).name, "other")
  -- the same through remove_later / flush
  local r2 = node("r2")
  node("c", r2)
  p:remove_later(r2)
  eq(p:flush(), 1)
  eq(#p, 1)
  eq(#removed, 8)
end)

case("hook_errors_propagate", function()
  local p = ark.pool({ on_remove = function(h, v)
    if v == "bad" then
      error("hook failed on " .. v)
    end
  end })
  local a = p:insert("bad")
  local b = p:insert("good")
  raises("hook failed on bad", function() p:remove(a) end)
  eq(p:get(a), nil, "removed despite the error")
  eq(#p, 1)
  eq(p:remove(b), true)
  local c = p:insert("bad")
  p:insert("bad")
  raises("hook failed", function() p:clear(true) end)
  eq(#p, 0)
  p:insert("x")
  eq(#p, 1, "usable after")
  eq(p:check(c), "stale")
end)

case("hook_calls_back", function()
  local p
  local log = {}
  p = ark.pool({ on_remove = function(h, v)
    log[#log + 1] = v
    if v == "spawn" then
      local n = p:insert("spawned")
      eq(p:get(n), "spawned", "insert from a hook")
    end
    eq(p:flush(), 0, "flush from a hook does nothing")
    p:clear(true) -- does nothing from a hook
    raises("removal hook", function() p:close() end)
  end })
  p:insert("keep")
  local s = p:insert("spawn")
  p:remove(s)
  eq(#p, 2, "keep and spawned")
  eq(log[1], "spawn")
end)

case("remove_during_iteration", function()
  local p = ark.pool()
  local hs = {}
  for i = 1, 1000 do
    hs[i] = p:insert(i)
  end
  -- remove the current element, and every element 500 ahead of it
  local seen = {}
  for h, v in p:pairs() do
    ok(not seen[v], "visited once")
    seen[v] = true
    p:remove(h)
    if v + 500 <= 1000 then
      p:remove(hs[v + 500])
    end
  end
  for v = 1, 500 do
    ok(seen[v], "visited " .. v)
  end
  for v = 501, 1000 do
    ok(not seen[v], "removed before it was reached: " .. v)
  end
  eq(#p, 0)
  -- inserting during the walk is allowed
  for i = 1, 100 do
    p:insert(i)
  end
  local n = 0
  for h in p:pairs() do
    n = n + 1
    if n <= 100 then
      p:insert(-n)
    end
  end
  ok(n >= 100, "walked at least the first 100")
  eq(#p, 200)
end)

case("break_leaves_nothing", function()
  local p = ark.pool()
  for i = 1, 100 do
    p:insert(i)
  end
  local weak = setmetatable({}, { __mode = "k" })
  local function loops() -- in a frame of its own, gone before the check
    for _ = 1, 50 do
      local it = p:pairs()
      weak[it] = true
      for h, v in it do
        if v == 10 then
          break
        end
      end
    end
  end
  loops()
  H.gc()
  eq(next(weak), nil, "every iterator collected")
  eq(#p, 100)
  local n = 0
  for _ in p:pairs() do
    n = n + 1
  end
  eq(n, 100)
  -- an ended iterator stays ended
  local it = p:pairs()
  for _ in it do end
  eq(it(), nil)
end)

case("values_released", function()
  local weak = setmetatable({}, { __mode = "v" })
  local p = ark.pool()
  local hooked = ark.pool({ on_remove = function() end })
  local function put(pool, name)
    local v = {}
    weak[name] = v
    return pool:insert(v)
  end
  local a = put(p, "removed")
  local b = put(p, "replaced")
  local c = put(p, "marked")
  local d = put(hooked, "marked_hooked")
  put(p, "cleared")
  put(hooked, "cleared_hooked")
  local e = put(hooked, "removed_hooked")
  p:remove(a)
  p:set(b, 1)
  p:remove_later(c)
  hooked:remove_later(d)
  hooked:remove(e)
  H.gc()
  eq(weak.removed, nil, "remove drops the value")
  eq(weak.replaced, nil, "set drops the old value")
  ok(weak.marked, "remove_later keeps it until the flush (a keyed container's hook may read it)")
  ok(weak.marked_hooked, "kept for the hook until the flush")
  eq(weak.removed_hooked, nil, "after its hook")
  ok(weak.cleared and weak.cleared_hooked, "live values are kept")
  hooked:flush()
  eq(p:flush(), 1)
  H.gc()
  eq(weak.marked, nil, "flushed without a hook")
  p:clear()
  hooked:clear(false)
  H.gc()
  eq(weak.marked_hooked, nil, "flushed")
  eq(weak.cleared, nil, "clear(false)")
  eq(weak.cleared_hooked, nil, "clear(false) with a hook set")
  -- closing, and collecting the pool itself
  local q = ark.pool()
  put(q, "closed")
  q:close()
  put(ark.pool(), "collected")
  weak.pool = ark.pool()
  H.gc()
  eq(weak.closed, nil, "close releases the values")
  eq(weak.collected, nil, "an unreachable pool releases its values")
  eq(weak.pool, nil, "an unreachable pool is collected")
end)

case("close", function()
  local p = ark.pool()
  local h = p:insert(1)
  local it = p:pairs()
  p:close()
  p:close() -- twice is fine
  ok(tostring(p):find("closed", 1, true))
  for _, f in ipairs({ "insert", "get", "set", "remove", "remove_later",
                       "flush", "clear", "check", "pairs", "seal", "unseal" }) do
    raises("closed", function() p[f](p, h, 1) end)
  end
  raises("closed", function() return #p end)
  raises("closed", it)
end)

case54("close_variable", function()
  local chunk = assert(load([[
    local ark, weak = ...
    do
      local p <close> = ark.pool()
      weak.p = p
      p:insert(1)
    end
    assert(tostring(weak.p):find("closed", 1, true), "closed at scope end")
    local p = ark.pool()
    for i = 1, 10 do p:insert(i) end
    for h, v in pairs(p) do
      if v == 3 then break end
    end
    local n = 0
    for h, v in pairs(p) do n = n + 1 end
    assert(n == 10, "pairs(p)")
  ]]))
  chunk(ark, setmetatable({}, { __mode = "v" }))
end)

case("seal", function()
  local p = ark.pool({ index_bits = 20, gen_bits = 12, seal_key = 42 })
  local hs = {}
  for i = 1, 1000 do
    hs[i] = p:insert(i)
  end
  for i = 1, 1000 do
    local w = p:seal(hs[i])
    ok(w >= 0 and w < 2 ^ 32, "32-bit wire value")
    eq(p:unseal(w), hs[i])
    eq(p:get(p:unseal(w)), i)
  end
  -- guessed wire values name a live element about live / 2^32 of the time
  local r = H.rng(H.seed)
  local hits = 0
  for _ = 1, H.n(20000) do
    if p:get(p:unseal(r.next() * 2 % 2 ^ 32)) then
      hits = hits + 1
    end
  end
  ok(hits <= 2, "guessed wire values hit " .. hits .. " times")
  -- the same key seals the same way
  local q = ark.pool({ index_bits = 20, gen_bits = 12, seal_key = 42 })
  eq(q:seal(q:insert(1)), p:seal(hs[1]))
end)

case("insert_at", function()
  local server = ark.pool()
  local replica = ark.pool()
  local hs = {}
  for i = 1, 200 do
    hs[i] = server:insert(i)
  end
  for i = 1, 100 do
    server:remove(hs[i])
  end
  -- mirror the live ones in reverse order
  for i = 200, 101, -1 do
    eq(replica:insert_at(hs[i], server:get(hs[i])), true)
  end
  for i = 101, 200 do
    eq(replica:get(hs[i]), i)
  end
  local r, why = replica:insert_at(hs[150], 0)
  eq(r, nil)
  eq(why, "exists")
  replica:remove(hs[150])
  r, why = replica:insert_at(hs[150], 0)
  eq(why, "stale")
  eq(select(2, replica:insert_at(0, 1)), "null")
  eq(select(2, replica:insert_at(hs[1] + 2 ^ 52, 1)), "foreign")
  eq(select(2, replica:insert_at("1", 1)), "invalid")
  raises("nil", function() replica:insert_at(hs[1], nil) end)
end)

case("layout_options", function()
  local p = ark.pool({ index_bits = 2, gen_bits = 2 })
  eq(p:layout().index_bits, 2)
  local n = 0
  while p:insert(n) do
    n = n + 1
  end
  eq(n, 3, "slots 1..3")
  local r, why = p:insert(1)
  eq(r, nil)
  eq(why, "full")
  raises("unknown option 'index'", function() ark.pool({ index = 3 }) end)
  raises("index_bits", function() ark.pool({ index_bits = 33 }) end)
  raises("index_bits", function() ark.pool({ index_bits = 1.5 }) end)
  raises("on_remove", function() ark.pool({ on_remove = 1 }) end)
  local wide = { index_bits = 32, gen_bits = 32 }
  if H.jit then
    raises("53 bits", function() ark.pool(wide) end)
  else
    local q = ark.pool(wide)
    local h = q:insert(1)
    eq(q:get(h), 1)
  end
end)

case54("wide_handles", function()
  -- a 64-bit layout: handles use every bit of a Lua integer
  local p = ark.pool({ index_bits = 24, gen_bits = 32, tag_bits = 8, tag = 255 })
  local h = p:insert("x")
  ok(h < 0, "tag 255 sets the sign bit")
  eq(p:get(h), "x")
  eq(p:check(h + math.tointeger(2 ^ 56)), "foreign")
end)

casejit("jit_compiled_loops", function()
  -- the same calls from traces LuaJIT compiles
  local p = ark.pool()
  local hs = {}
  for i = 1, 2000 do
    hs[i] = p:insert(i)
  end
  local sum = 0
  for _ = 1, 5 do
    for i = 1, 2000 do
      sum = sum + p:get(hs[i])
    end
  end
  eq(sum, 5 * 2000 * 2001 / 2)
end)
