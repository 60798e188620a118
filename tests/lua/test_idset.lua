-- SPDX-License-Identifier: MIT
-- ark.idset: sorted uint32 ids with positions.
local ark = require "ark"
local H = require "harness"
local case, case54 = H.case, H.case54
local eq, ok, raises = H.eq, H.ok, H.raises

local function set_of(list)
  local s = ark.idset()
  for _, id in ipairs(list) do
    s:insert(id)
  end
  return s
end

local function ids(s)
  local out = {}
  for id in s:ids() do
    out[#out + 1] = id
  end
  return out
end

case("basics", function()
  local s = ark.idset()
  eq(s:insert(5), true)
  eq(s:insert(1), true)
  eq(s:insert(5), false, "present")
  eq(s:insert(0), true)
  eq(s:insert(2 ^ 32 - 1), true)
  eq(#s, 4)
  eq(s:at(1), 0)
  eq(s:at(2), 1)
  eq(s:at(4), 2 ^ 32 - 1)
  eq(s:at(5), nil)
  eq(s:find(5), 3)
  eq(s:find(4), nil)
  eq(s:contains(1), true)
  eq(s:remove(1), true)
  eq(s:remove(1), false, "absent")
  eq(s:contains(1), false)
  eq(table.concat(ids(s), ","), "0,5,4294967295")
  local pos = {}
  for id, p in s:ids() do
    pos[#pos + 1] = p
  end
  eq(table.concat(pos, ","), "1,2,3")
  ok(tostring(s):find("3 ids", 1, true))
  raises("an id is an integer", function() s:insert(-1) end)
  raises("an id is an integer", function() s:insert(2 ^ 32) end)
  raises("an id is an integer", function() s:insert("3") end)
  raises("an id is an integer", function() s:insert(nil) end)
  raises("ark.idset", function() s.insert(ark.pool(), 1) end)
end)

case("hostile_ids", function()
  local s = set_of({ 1, 2, 3, 1000 })
  for _, v in ipairs(H.hostile({ 2 ^ 32, 2 ^ 32 + 1, -1, 1000.5, "1000" })) do
    local what = "hostile " .. tostring(v)
    eq(s:contains(v), v == 0 and false or false, what)
    eq(s:find(v), nil, what)
    eq(s:remove(v), false, what)
    if not (type(v) == "number" and v >= 1 and v <= 4 and v % 1 == 0) then
      eq(s:at(v), nil, what)
    end
  end
  eq(#s, 4)
  eq(s:contains(1000.0), true, "an integral float is the same id")
end)

-- Random operations against a sorted Lua array.
case("model", function()
  local r = H.rng(H.seed)
  local s = ark.idset()
  local model = {} -- id -> true
  local function sorted()
    local list = {}
    for id in pairs(model) do
      list[#list + 1] = id
    end
    table.sort(list)
    return list
  end
  local span = 5000
  for step = 1, H.n(20000) do
    if step % 5000 == 0 then
      span = span * 40 -- from dense groups to sparse ones
    end
    local id = r.int(0, span)
    local op = r.int(1, 10)
    if op <= 5 then
      eq(s:insert(id), not model[id], "insert")
      model[id] = true
    elseif op <= 8 then
      eq(s:remove(id), model[id] == true, "remove")
      model[id] = nil
    else
      eq(s:contains(id), model[id] == true, "contains")
    end
    if step % 1000 == 0 then
      local list = sorted()
      eq(#s, #list)
      for i = 1, #list, 37 do
        eq(s:at(i), list[i], "at")
        eq(s:find(list[i]), i, "find")
      end
      local got = ids(s)
      eq(#got, #list)
      for i = 1, #list do
        eq(got[i], list[i], "ids")
      end
      ok(s:validate(), "validate")
    end
  end
end)

case("algebra", function()
  local r = H.rng(H.seed + 2)
  for round = 1, H.n(30) do
    local ma, mb = {}, {}
    local a, b = ark.idset(), ark.idset()
    local span = ({ 100, 5000, 2 ^ 32 - 1 })[round % 3 + 1]
    for _ = 1, r.int(0, 2000) do
      local id = r.int(0, span)
      a:insert(id)
      ma[id] = true
    end
    for _ = 1, r.int(0, 2000) do
      local id = r.int(0, span)
      b:insert(id)
      mb[id] = true
    end
    local i, u, d = a:intersect(b), a:union(b), a:difference(b)
    local ni, nu, nd = 0, 0, 0
    for id in pairs(ma) do
      nu = nu + 1
      if mb[id] then
        ni = ni + 1
        ok(i:contains(id), "intersect has " .. id)
      else
        nd = nd + 1
        ok(d:contains(id), "difference has " .. id)
      end
      ok(u:contains(id), "union has " .. id)
    end
    for id in pairs(mb) do
      if not ma[id] then
        nu = nu + 1
        ok(u:contains(id), "union has " .. id)
      end
    end
    eq(#i, ni, "intersect count")
    eq(#u, nu, "union count")
    eq(#d, nd, "difference count")
    eq(a:intersect_count(b), ni, "intersect_count")
    ok(i:validate() and u:validate() and d:validate(), "validate")
  end
  local a = set_of({ 1 })
  raises("not an open ark.idset", function() a:intersect({}) end)
  raises("not an open ark.idset", function() a:union(nil) end)
  raises("not an open ark.idset", function() a:intersect_count(ark.pool()) end)
  local c = ark.idset()
  c:close()
  raises("not an open ark.idset", function() a:difference(c) end)
end)

-- Ids removed before they are reached are not visited; ids inserted
-- above the current one are; nothing is visited twice.
case("change_during_iteration", function()
  local r = H.rng(H.seed + 3)
  for _ = 1, H.n(30) do
    local s = ark.idset()
    local live = {}
    for _ = 1, r.int(1, 1500) do
      local id = r.int(0, 3000)
      s:insert(id)
      live[id] = true
    end
    local last = -1
    local visited = {}
    for id in s:ids() do
      ok(id > last, "increasing")
      ok(live[id], "visited a removed id " .. id)
      visited[id] = true
      last = id
      local op = r.int(1, 4)
      local other = r.int(0, 3000)
      if op == 1 then
        s:remove(id)
        live[id] = nil
      elseif op == 2 then
        s:remove(other)
        live[other] = nil
      else
        s:insert(other)
        live[other] = true
        if other > id then
          live[other] = "ahead"
        end
      end
    end
    for id, v in pairs(live) do
      if v == "ahead" then
        ok(visited[id], "inserted ahead and not visited: " .. id)
      end
    end
  end
  -- break, and closing under an iterator
  local s = set_of({ 1, 2, 3 })
  for id in s:ids() do
    if id == 2 then
      break
    end
  end
  local it = s:ids()
  eq(it(), 1)
  s:close()
  raises("closed", it)
  raises("closed", function() return #s end)
end)

case("save_load", function()
  local s = set_of({ 0, 1, 2, 100, 65536, 2 ^ 31, 2 ^ 32 - 1 })
  local str = s:save()
  local t = assert(ark.idset_load(str))
  eq(table.concat(ids(t), ","), table.concat(ids(s), ","))
  eq(t:save(), str)
  local step = H.scale < 1 and 3 or 1
  for n = 0, #str - 1, step do
    local r, msg = ark.idset_load(str:sub(1, n))
    eq(r, nil, "truncated to " .. n)
    eq(type(msg), "string")
  end
  eq(ark.idset_load(str .. "x"), nil, "trailing byte")
  for i = 1, #str, step do
    local bad = str:sub(1, i - 1) .. string.char((str:byte(i) + 1) % 256)
                .. str:sub(i + 1)
    local r, msg = ark.idset_load(bad)
    eq(r, nil, "byte " .. i)
    eq(type(msg), "string")
  end
  raises("string expected", function() ark.idset_load(42) end)
  local empty = assert(ark.idset_load(ark.idset():save()))
  eq(#empty, 0)
end)

case("gc_and_close", function()
  local weak = setmetatable({}, { __mode = "v" })
  weak.s = set_of({ 1, 2 })
  weak.i = weak.s and weak.s:intersect(weak.s)
  H.gc()
  eq(weak.s, nil)
  eq(weak.i, nil)
  local s = set_of({ 1 })
  s:close()
  s:close()
  ok(tostring(s):find("closed", 1, true))
  raises("closed", function() s:insert(1) end)
  raises("closed", function() s:contains(1) end)
end)

case54("close_variable", function()
  assert(load([[
    local ark = ...
    local keep
    do
      local s <close> = ark.idset()
      s:insert(1)
      keep = s
    end
    assert(tostring(keep):find("closed", 1, true))
  ]]))(ark)
end)
