-- SPDX-License-Identifier: MIT
-- ark.table: typed columns outside the Lua heap.
local ark = require "ark"
local H = require "harness"
local case, case54, casejit = H.case, H.case54, H.casejit
local eq, ok, raises = H.eq, H.ok, H.raises

local function body()
  return ark.table({ { "x", "float" }, { "y", "float" }, { "vx", "float" },
                     { "vy", "float" } })
end

case("insert_get_set", function()
  local t = ark.table({ { "x", "float" }, { "y", "double" }, { "hp", "int32" },
                        { "alive", "bool" } })
  local a = t:insert({ x = 1, y = 2, hp = 100, alive = true })
  local b = t:insert({ x = 0.5 }) -- missing fields are 0 / false
  local c = t:insert(3, 4, 5) -- positional, in column order
  local d = t:insert() -- all zero
  eq(#t, 4)
  eq(t:nrows(), 4)
  eq(t:get(a, "x"), 1)
  eq(t:get(a, "hp"), 100)
  eq(t:get(a, "alive"), true)
  eq(t:get(b, "hp"), 0)
  eq(t:get(b, "alive"), false)
  eq(t:get(c, "y"), 4)
  eq(t:get(d, "x"), 0)
  eq(t:set(a, "hp", 70), true)
  eq(t:get(a, "hp"), 70)
  local row = t:get(a)
  eq(row.x, 1)
  eq(row.hp, 70)
  eq(row.alive, true)
  eq(t:row(a), 1)
  eq(t:at(1), a)
  eq(t:at(5), nil)
  eq(t:remove(a), true)
  eq(t:get(a, "hp"), nil)
  eq(t:set(a, "hp", 1), false)
  eq(t:remove(a), false)
  eq(#t, 3)
  eq(t:at(1), d, "the last row moved into the hole")
  eq(t:columns()[3][1], "hp")
  eq(t:columns()[3][2], "int32")
  ok(tostring(t):find("3 rows", 1, true), tostring(t))
  raises("no column 'nope'", function() t:get(b, "nope") end)
  raises("no column 'nope'", function() t:set(b, "nope", 1) end)
  raises("no column", function() t:get(b, 1) end)
  raises("values for", function() t:insert(1, 2, 3, true, 5) end)
  raises("ark.table", function() t.get(ark.pool(), b, "x") end)
end)

case("types", function()
  local types = { "int8", "int16", "int32", "int64", "uint8", "uint16",
                  "uint32", "uint64", "float", "double", "bool" }
  local cols = {}
  for i, ty in ipairs(types) do
    cols[i] = { ty, ty }
  end
  local t = ark.table(cols)
  local h = t:insert()
  local function rt(col, v, ...)
    local want = v
    if select("#", ...) > 0 then
      want = ...
    end
    t:set(h, col, v)
    eq(t:get(h, col), want, col .. " " .. tostring(v))
  end
  local ranges = { int8 = { -128, 127 }, int16 = { -32768, 32767 },
                   int32 = { -2 ^ 31, 2 ^ 31 - 1 }, uint8 = { 0, 255 },
                   uint16 = { 0, 65535 }, uint32 = { 0, 2 ^ 32 - 1 } }
  for ty, r in pairs(ranges) do
    rt(ty, r[1])
    rt(ty, r[2])
    rt(ty, 7.0, 7) -- an integral float is an integer
    raises("integers", function() t:set(h, ty, r[1] - 1) end)
    raises("integers", function() t:set(h, ty, r[2] + 1) end)
    raises("integers", function() t:set(h, ty, 1.5) end)
    raises("integers", function() t:set(h, ty, "1") end)
    raises("integers", function() t:set(h, ty, 0 / 0) end)
  end
  rt("int64", -2 ^ 53)
  rt("int64", 2 ^ 53)
  rt("uint64", 2 ^ 53)
  if math.type then
    rt("int64", math.mininteger)
    rt("int64", math.maxinteger)
    rt("uint64", -1) -- the bits of 2^64 - 1, read back as Lua has them
  else
    rt("uint64", 2 ^ 63) -- LuaJIT: a number in [2^63, 2^64) is taken too
  end
  rt("float", 0.1, (string.unpack and string.unpack("f", string.pack("f", 0.1)))
     or 0.10000000149011612)
  rt("float", 1e39, 1 / 0) -- past float's range
  rt("float", -1e39, -1 / 0)
  rt("float", 3.4028234663852886e38) -- FLT_MAX
  rt("double", 0.1)
  rt("double", 1e300)
  local nan = 0 / 0
  t:set(h, "double", nan)
  ok(t:get(h, "double") ~= t:get(h, "double"), "NaN")
  rt("bool", true)
  rt("bool", false)
  raises("booleans", function() t:set(h, "bool", 1) end)
  raises("booleans", function() t:set(h, "bool", nil) end)
  raises("numbers", function() t:set(h, "float", "1") end)
  raises("numbers", function() t:set(h, "double", nil) end)
  -- a refused value changes nothing and adds no row
  local n = #t
  raises("integers", function() t:insert({ int8 = 1000 }) end)
  eq(#t, n)
  if math.type then
    eq(math.type(t:get(h, "int32")), "integer")
    eq(math.type(t:get(h, "float")), "float")
  end
end)

case("column_specs", function()
  raises("1 to 256 columns", function() ark.table({}) end)
  raises("table expected", function() ark.table("x") end)
  raises("is not a {name, type}", function() ark.table({ "x" }) end)
  raises("has type 'float32'", function() ark.table({ { "x", "float32" } }) end)
  raises("needs a name", function() ark.table({ { 1, "float" } }) end)
  raises("needs a name", function() ark.table({ { "", "float" } }) end)
  raises("two columns are named 'x'", function()
    ark.table({ { "x", "float" }, { "x", "int8" } })
  end)
  raises("unknown option 'rows'", function()
    ark.table({ { "x", "float" } }, { rows = 1 })
  end)
  local long = ("n"):rep(100) -- longer than Lua 5.4's interned strings
  local t = ark.table({ { long, "int32" } })
  local h = t:insert({ [long] = 5 })
  eq(t:get(h, long), 5)
  eq(t:get(h, ("n"):rep(99) .. "n"), 5, "a name built at run time")
end)

case("hostile_handles", function()
  local t = body()
  local hs = {}
  for i = 1, 20 do
    hs[i] = t:insert(i, i, i, i)
  end
  t:remove(hs[5])
  local h = hs[1]
  local bad = H.hostile({ hs[5], tostring(h), h + 0.5, h + 2 ^ 52, -h,
                          h + 2 ^ 32 })
  for _, v in ipairs(bad) do
    local what = "hostile " .. tostring(v)
    eq(t:get(v, "x"), nil, what)
    eq(t:get(v), nil, what)
    eq(t:set(v, "x", 1), false, what)
    eq(t:remove(v), false, what)
    eq(t:remove_later(v), false, what)
    eq(t:row(v), nil, what)
    ok(t:check(v) ~= "ok", what)
    local r, msg = t:insert_at(v, { x = 1 })
    if r then
      t:remove(v)
    else
      ok(type(msg) == "string", what)
    end
    local s = t:seal(v)
    ok(s == nil or math.floor(s) == s, what)
  end
  eq(#t, 19)
  eq(t:get(h + 0.0, "x"), 1)
  for _, v in ipairs(H.hostile({ 20, 100 })) do
    eq(t:at(v), nil, "hostile position " .. tostring(v))
  end
end)

-- Random operations against a model: handle -> {x, hp}.
case("model", function()
  local r = H.rng(H.seed)
  local t = ark.table({ { "x", "double" }, { "hp", "int32" } })
  local model, handles, count, marked = {}, {}, 0, 0
  local function pick()
    return #handles > 0 and handles[r.int(1, #handles)] or 0
  end
  for step = 1, H.n(20000) do
    local op = r.int(1, 100)
    if op <= 40 then
      local x, hp = r.next() / 7, r.int(-1000, 1000)
      local h = t:insert({ x = x, hp = hp })
      model[h] = { x, hp }
      handles[#handles + 1] = h
      count = count + 1
    elseif op <= 60 then
      local h = pick()
      eq(t:remove(h), model[h] ~= nil, "remove")
      if model[h] then
        model[h] = nil
        count = count - 1
      end
    elseif op <= 68 then
      local h = pick()
      eq(t:remove_later(h), model[h] ~= nil, "remove_later")
      if model[h] then
        model[h] = nil
        count = count - 1
        marked = marked + 1
      end
    elseif op <= 70 then
      eq(t:flush(), marked, "flush")
      marked = 0
    elseif op <= 85 then
      local h = pick()
      local m = model[h]
      eq(t:get(h, "x"), m and m[1], "get x")
      eq(t:get(h, "hp"), m and m[2], "get hp")
    else
      local h = pick()
      local hp = r.int(-5, 5)
      eq(t:set(h, "hp", hp), model[h] ~= nil, "set")
      if model[h] then
        model[h][2] = hp
      end
    end
    eq(#t, count, "count")
    eq(t:nrows(), count + marked, "rows in use")
  end
  local seen = 0
  for h, row in t:rows() do
    eq(row.x, model[h][1], "row x")
    eq(row.hp, model[h][2], "row hp")
    seen = seen + 1
  end
  eq(seen, count)
end)

-- Every row live at the start is visited once unless removed before it is
-- reached, whatever the loop removes; rows inserted meanwhile are not.
case("rows_with_removal", function()
  local r = H.rng(H.seed + 1)
  for round = 1, H.n(20) do
    local t = ark.table({ { "id", "int32" } })
    local live, hs = {}, {}
    local n = r.int(1, 300)
    for i = 1, n do
      hs[i] = t:insert(i)
      live[i] = true
    end
    local visited = {}
    for h, row in t:rows() do
      local id = row.id
      ok(live[id], "visited a removed row " .. id)
      ok(not visited[id], "visited twice: " .. id)
      visited[id] = true
      -- remove the current row, or another one (visited or not), or
      -- insert a row, at random
      local op = r.int(1, 4)
      if op == 1 then
        t:remove(h)
        live[id] = false
      elseif op == 2 then
        local j = r.int(1, n)
        if live[j] then
          t:remove(hs[j])
          live[j] = false
        end
      elseif op == 3 then
        local j = r.int(1, n)
        if live[j] then
          t:remove_later(hs[j])
          live[j] = false
        end
      else
        t:insert(100000 + id)
      end
      eq(row.id, live[id] and id or nil, "the row view reads the current row")
    end
    for i = 1, n do
      if live[i] then
        ok(visited[i], "round " .. round .. ": live row " .. i .. " skipped")
      end
    end
    t:flush()
  end
end)

case("rows_break_nested_close", function()
  local t = body()
  for i = 1, 100 do
    t:insert(i, 0, 1, 1)
  end
  local weak = setmetatable({}, { __mode = "k" })
  local function loops()
    for _ = 1, 20 do
      local it = t:rows()
      weak[it] = true
      for h, row in it do
        if row.x > 10 then
          break
        end
      end
    end
  end
  loops()
  H.gc()
  eq(next(weak), nil, "iterators collected after break")
  local pairs_seen = 0
  for _, a in t:rows() do
    local ax = a.x
    for _, b in t:rows() do
      pairs_seen = pairs_seen + 1
    end
    eq(a.x, ax, "the outer view still reads its row")
  end
  eq(pairs_seen, 100 * 100)
  -- views of a closed table raise
  local it = t:rows()
  local _, row = it()
  local x = t:column("x")
  t:close()
  raises("closed", function() return row.x end)
  raises("closed", function() return x[1] end)
  raises("closed", it)
  raises("closed", function() return #t end)
  raises("closed", function() t:insert() end)
  t:close()
end)

case("append", function()
  local t = body()
  t:insert(9, 9, 9, 9)
  t:remove_later(t:at(1))
  eq(t:append(3), 2, "after the marked row")
  eq(#t, 3)
  eq(t:nrows(), 4)
  local x = t:column("x")
  for i = 2, 4 do
    eq(x[i], 0, "zeroed")
    x[i] = i
  end
  eq(t:get(t:at(4), "x"), 4)
  eq(t:append(0), 5)
  local small = ark.table({ { "v", "int8" } }, { index_bits = 3, gen_bits = 2 })
  eq(small:append(7), 1, "slots 1..7")
  local r, why = small:append(1)
  eq(r, nil)
  eq(why, "full")
  eq(#small, 7, "nothing added")
  small:remove(small:at(1))
  r, why = small:append(2)
  eq(why, "full")
  eq(#small, 6, "all or none")
  raises("n must be", function() t:append(-1) end)
  raises("n must be", function() t:append("1") end)
end)

case("row_view", function()
  local t = body()
  local h = t:insert(1, 2, 3, 4)
  local _, row = t:rows()()
  row.x = row.x + row.vx
  eq(t:get(h, "x"), 4)
  raises("no column 'z'", function() return row.z end)
  raises("no column 'z'", function() row.z = 1 end)
  raises("numbers", function() row.x = "a" end)
  t:remove(h)
  eq(row.x, nil, "a removed row reads nil")
  raises("was removed", function() row.x = 1 end)
end)

case("columns", function()
  local t = body()
  for i = 1, 10 do
    t:insert(i, -i, 0.5, 0.25)
  end
  local x, y, vx, vy = t:column("x"), t:column("y"), t:column("vx"),
                       t:column("vy")
  eq(#x, 10)
  for i = 1, #x do
    x[i] = x[i] + vx[i]
    y[i] = y[i] + vy[i]
  end
  eq(x[1], 1.5)
  eq(y[10], -9.75)
  for _, v in ipairs(H.hostile({ 11, 100 })) do
    eq(x[v], nil, "hostile position " .. tostring(v))
  end
  raises("no position", function() x[11] = 1 end)
  raises("no position", function() x[0] = 1 end)
  raises("no position", function() x.a = 1 end)
  raises("numbers", function() x[1] = true end)
  raises("no column", function() t:column("z") end)
  ok(tostring(x):find("'x'", 1, true), tostring(x))
  -- a view keeps its table alive
  local weak = setmetatable({}, { __mode = "v" })
  local function make()
    local tt = body()
    tt:insert(7, 0, 0, 0)
    weak.t = tt
    return tt:column("x")
  end
  local c = make()
  H.gc()
  ok(weak.t, "kept alive by its column view")
  eq(c[1], 7)
  c = nil
  H.gc()
  eq(weak.t, nil, "collected with its view")
end)

case("hooks", function()
  local t
  local seen = {}
  t = ark.table({ { "parent", "int64" }, { "hp", "int32" } }, {
    on_remove = function(h)
      seen[#seen + 1] = t:get(h, "hp") -- still readable
      -- remove the children of h
      for ch, row in t:rows() do
        if row.parent == h then
          t:remove(ch)
        end
      end
    end })
  local root = t:insert({ hp = 1 })
  local a = t:insert({ parent = root, hp = 2 })
  t:insert({ parent = a, hp = 3 })
  t:insert({ parent = root, hp = 4 })
  local other = t:insert({ hp = 5 })
  eq(t:remove(root), true)
  eq(#t, 1)
  eq(#seen, 4)
  eq(t:get(other, "hp"), 5)
  t:remove_later(other)
  eq(t:flush(), 1)
  eq(seen[5], 5)
  local bad = ark.table({ { "v", "int8" } }, { on_remove = function()
    error("table hook failed")
  end })
  local h = bad:insert(1)
  raises("table hook failed", function() bad:remove(h) end)
  eq(#bad, 0)
  bad:insert(2)
  raises("table hook failed", function() bad:clear(true) end)
  eq(#bad, 0)
  local self
  self = ark.table({ { "v", "int8" } }, { on_remove = function()
    raises("removal hook", function() self:close() end)
  end })
  self:remove(self:insert(1))
end)

-- Components keyed by the handles of an entity pool (insert_at with the
-- handle of another container).
case("components_of_entities", function()
  local entities = ark.pool()
  local pos
  entities = ark.pool({ on_remove = function(e)
    pos:remove(e) -- the entity's component goes with it
  end })
  pos = ark.table({ { "x", "float" }, { "y", "float" } }, entities:layout())
  local es = {}
  for i = 1, 200 do
    local e = entities:insert({ name = "e" .. i })
    es[i] = e
    if i % 2 == 0 then
      eq(pos:insert_at(e, { x = i, y = -i }), true)
    end
  end
  eq(#pos, 100)
  for i = 1, 200 do
    eq(pos:get(es[i], "x"), i % 2 == 0 and i or nil)
  end
  for i = 1, 100 do
    entities:remove(es[i])
  end
  eq(#pos, 50)
  -- slots are reused with new generations: the old handles miss, the new
  -- entities get components at their own handles
  for i = 1, 200 do
    local e = entities:insert({})
    local r, why = pos:insert_at(e, { x = -i })
    ok(r, "insert_at a reused entity handle: " .. tostring(why))
    eq(pos:get(e, "x"), -i)
  end
  for i = 1, 100 do
    eq(pos:get(es[i], "x"), nil, "old entity handle")
  end
  eq(#pos, 250)
  local r, why = pos:insert_at(es[150], { x = 0 })
  eq(why, "exists")
end)

case("save_load", function()
  local t = ark.table({ { "x", "float" }, { "n", "int64" }, { "ok", "bool" } },
                      { seal_key = 99 })
  local hs = {}
  for i = 1, 500 do
    hs[i] = t:insert(i / 4, i * 1000, i % 3 == 0)
  end
  for i = 1, 500, 3 do
    t:remove(hs[i])
  end
  t:remove_later(hs[2])
  local s = t:save()
  eq(type(s), "string")
  local u = assert(ark.table_load(s))
  eq(#u, #t)
  eq(u:nrows(), t:nrows())
  for i = 1, 500 do
    eq(u:check(hs[i]), t:check(hs[i]))
    eq(u:get(hs[i], "n"), t:get(hs[i], "n"))
    eq(u:get(hs[i], "ok"), t:get(hs[i], "ok"))
    eq(u:seal(hs[i]), t:seal(hs[i]), "the seal key is kept")
  end
  -- the same operations issue the same handles afterwards
  eq(u:flush(), t:flush())
  for i = 1, 100 do
    eq(u:insert(i), t:insert(i))
  end
  eq(u:save(), t:save(), "equal tables save equal strings")
  -- with the columns given, they must match
  ok(ark.table_load(s, t:columns()))
  local r, msg = ark.table_load(s, { { "x", "float" }, { "n", "int64" },
                                     { "ok", "int8" } })
  eq(r, nil)
  ok(msg:find("columns differ", 1, true), msg)
  r, msg = ark.table_load(s, { { "y", "float" }, { "n", "int64" },
                               { "ok", "bool" } })
  ok(msg:find("columns differ", 1, true), msg)
  -- options: a hook for the loaded table
  local gone = 0
  local v = ark.table_load(s, nil, { on_remove = function() gone = gone + 1 end })
  v:remove(hs[3])
  eq(gone, 1)
  raises("unknown option 'gen_bits'", function()
    ark.table_load(s, nil, { gen_bits = 3 })
  end)
  raises("string expected", function() ark.table_load(nil) end)
end)

-- Every truncation and every changed byte is refused with nil and a
-- message (a sample of them under valgrind).
case("load_refuses_damage", function()
  local t = ark.table({ { "x", "float" }, { "name", "uint32" } })
  for i = 1, 40 do
    t:insert(i, i)
  end
  t:remove(t:at(3))
  local s = t:save()
  local step = H.scale < 1 and 7 or 1
  for n = 0, #s - 1, step do
    local r, msg = ark.table_load(s:sub(1, n))
    eq(r, nil, "truncated to " .. n)
    eq(type(msg), "string")
  end
  local r0, msg0 = ark.table_load(s .. "\0")
  eq(r0, nil, "trailing byte")
  ok(msg0, "trailing byte message")
  for i = 1, #s, step do
    local c = s:byte(i)
    for _, flip in ipairs({ 1, 128 }) do
      local b = (c + flip) % 256
      local bad = s:sub(1, i - 1) .. string.char(b) .. s:sub(i + 1)
      local r, msg = ark.table_load(bad)
      eq(r, nil, ("byte %d changed to %d"):format(i, b))
      eq(type(msg), "string")
    end
  end
  for _, junk in ipairs({ "", "arkluat", ("\0"):rep(100), s:sub(1, 30) }) do
    eq(ark.table_load(junk), nil)
  end
end)

case54("close_variable", function()
  assert(load([[
    local ark, weak = ...
    do
      local t <close> = ark.table({ { "x", "float" } })
      weak.t = t
    end
    assert(tostring(weak.t):find("closed", 1, true))
    local t = ark.table({ { "x", "float" } })
    for i = 1, 5 do t:insert(i) end
    for h, row in t:rows() do
      if row.x == 2 then break end
    end
    assert(#t == 5)
  ]]))(ark, setmetatable({}, { __mode = "v" }))
end)

casejit("ffi_columns", function()
  local ffi = require "ffi"
  local t = body()
  for i = 1, 1000 do
    t:insert(i, 2 * i, 1, -1)
  end
  local function col(name)
    local p, ctype = t:column_ptr(name)
    eq(ctype, "float *")
    return ffi.cast(ctype, p)
  end
  local x, y, vx, vy = col("x"), col("y"), col("vx"), col("vy")
  for _ = 1, 3 do
    for i = 0, t:nrows() - 1 do
      x[i] = x[i] + vx[i]
      y[i] = y[i] + vy[i]
    end
  end
  eq(t:get(t:at(1), "x"), 4)
  eq(t:get(t:at(1000), "y"), 1997)
  local p, ctype = ark.table({ { "n", "uint16" } }):column_ptr("n")
  eq(ctype, "uint16_t *")
end)
