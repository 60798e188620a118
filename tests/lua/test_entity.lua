-- SPDX-License-Identifier: MIT
-- Entities: tables and pools keyed by an entity pool, id sets attached to
-- it as tags, removal that cascades, and queries.
local ark = require "ark"
local H = require "harness"
local case, case54 = H.case, H.case54
local eq, ok, raises = H.eq, H.ok, H.raises

local XY = { { "x", "float" }, { "y", "float" } }

case("keyed_table", function()
  local units = ark.pool()
  local body = ark.table(XY, { keys = units })
  local a, b = units:insert("a"), units:insert("b")
  eq(body:insert_at(a, 1, 2), true)
  eq(body:insert_at(b, { y = 5 }), true)
  eq(body:get(a, "x"), 1)
  eq(body:get(b, "x"), 0, "missing fields are 0")
  eq(body:get(b).y, 5)
  eq(#body, 2)
  eq(body:row(a), 1)
  local r, why = body:insert_at(a, 3, 4)
  eq(r, nil)
  eq(why, "exists")
  eq(body:get(a, "x"), 1, "unchanged")
  -- a row only for a live entity
  local c = units:insert("c")
  units:remove(c)
  r, why = body:insert_at(c, 1, 1)
  eq(r, nil)
  eq(why, "stale")
  r, why = body:insert_at(0, 1, 1)
  eq(why, "null")
  eq(body:insert_at(a + 2 ^ 40, 1, 1), nil, "bits above the layout")
  -- the layout, the seal key and the handles are the entity pool's
  local l, ul = body:layout(), units:layout()
  for k, v in pairs(ul) do
    eq(l[k], v, "layout " .. k)
  end
  eq(body:seal(a), units:seal(a))
  eq(body:check(a), "ok")
  eq(body:check(c), "stale")
  -- elements come with insert_at only
  raises("insert_at(entity", function() body:insert(1, 2) end)
  raises("insert_at(entity", function() body:append(3) end)
  eq(#body, 2)
  -- a row removed by itself, and created again
  eq(body:remove(a), true)
  eq(body:get(a, "x"), nil)
  eq(body:insert_at(a, 7, 7), true)
  eq(body:get(a, "x"), 7)
  ok(tostring(body):find("keyed", 1, true))
end)

case("keyed_options", function()
  local units = ark.pool()
  raises("goes with keys", function() ark.table(XY, { keys = units, index_bits = 20 }) end)
  raises("goes with keys", function() ark.pool({ keys = units, seal_key = 7 }) end)
  raises("option keys", function() ark.table(XY, { keys = ark.table(XY) }) end)
  raises("option keys", function() ark.table(XY, { keys = ark.idset() }) end)
  raises("option keys", function() ark.pool({ keys = 3 }) end)
  local keyed = ark.pool({ keys = units })
  raises("option keys", function() ark.table(XY, { keys = keyed }) end)
  local closed = ark.pool()
  closed:close()
  raises("option keys", function() ark.pool({ keys = closed }) end)
  -- nil keys: a container of its own
  local t = ark.table(XY, { keys = nil })
  ok(t:insert(1, 2))
  -- a narrow layout is inherited
  local small = ark.pool({ index_bits = 10, gen_bits = 4 })
  local st = ark.table(XY, { keys = small })
  eq(st:layout().index_bits, 10)
  local e = small:insert(1)
  ok(st:insert_at(e, 1, 1))
end)

case("keyed_pool", function()
  local units = ark.pool()
  local ai = ark.pool({ keys = units })
  local a, b = units:insert("a"), units:insert("b")
  eq(ai:insert_at(a, "chase"), true)
  eq(ai:get(a), "chase")
  eq(ai:get(b), nil)
  local r, why = ai:insert_at(a, "again")
  eq(r, nil)
  eq(why, "exists")
  raises("insert_at(entity", function() ai:insert("x") end)
  raises("value is nil", function() ai:insert_at(b, nil) end)
  eq(ai:set(a, "flee"), true)
  eq(ai:get(a), "flee")
  eq(ai:set(b, "x"), false)
  eq(ai:id(a), units:id(a), "a keyed element has its entity's id")
  local n = 0
  for h, v in ai:pairs() do
    eq(h, a)
    eq(v, "flee")
    n = n + 1
  end
  eq(n, 1)
  units:remove(a)
  eq(ai:get(a), nil, "gone with its entity")
  eq(#ai, 0)
end)

-- Removing an entity: its tags go when the removal starts, then its own
-- hook runs (components readable), then each keyed container's, in the
-- order they were created, while the entity and its value still resolve.
case("cascade_order", function()
  local IXY = { { "x", "int32" }, { "y", "int32" } }
  local log = {}
  local units, body, ai, burning
  local function seen(who, h)
    log[#log + 1] = table.concat({ who, tostring(units:get(h)),
      tostring(body:get(h, "x")), tostring(ai:get(h)),
      tostring(units:has_tag(burning, h)), tostring(burning:contains(units:id(h) or -1)) }, " ")
  end
  units = ark.pool({ on_remove = function(h, v)
    eq(v, "orc")
    seen("unit", h)
  end })
  body = ark.table(IXY, { keys = units, on_remove = function(h) seen("body", h) end })
  ai = ark.pool({ keys = units, on_remove = function(h, v)
    eq(v, "chase")
    seen("ai", h)
  end })
  burning = ark.idset()
  units:attach(burning)
  for _, mode in ipairs({ "remove", "later", "clear" }) do
    log = {}
    local e = units:insert("orc")
    body:insert_at(e, 3, 4)
    ai:insert_at(e, "chase")
    eq(units:tag(burning, e), true)
    eq(units:has_tag(burning, e), true)
    if mode == "remove" then
      eq(units:remove(e), true)
    elseif mode == "later" then
      eq(units:remove_later(e), true)
      eq(units:get(e), nil, "marked: gone from get at once")
      eq(units:has_tag(burning, e), false, "and from its tags")
      eq(body:get(e, "x"), 3, "its components wait for the flush")
      eq(#log, 0)
      eq(units:flush(), 1)
    else
      units:clear(true)
    end
    -- (clear empties the sets at its end: the id is there meanwhile)
    local inset = tostring(mode == "clear")
    eq(#log, 3, mode)
    eq(log[1], "unit orc 3 chase false " .. inset, mode)
    eq(log[2], "body orc 3 chase false " .. inset, mode)
    eq(log[3], "ai orc nil chase false " .. inset, mode .. ": the body row is gone by then")
    eq(units:get(e), nil)
    eq(body:get(e, "x"), nil)
    eq(ai:get(e), nil)
    eq(#burning, 0)
    eq(#body + #ai + #units, 0)
  end
  -- clear(false): no hook anywhere, everything gone
  log = {}
  local e = units:insert("orc")
  body:insert_at(e, 1, 1)
  ai:insert_at(e, "chase")
  units:tag(burning, e)
  units:clear(false)
  eq(#log, 0)
  eq(#body + #ai + #units + #burning, 0)
end)

case("cascade_without_hooks", function()
  -- an entity pool with no hook of its own still takes its components
  local units = ark.pool()
  local gone = {}
  local body = ark.table(XY, { keys = units, on_remove = function(h)
    gone[#gone + 1] = units:get(h)
  end })
  local hs = {}
  for i = 1, 10 do
    hs[i] = units:insert(i)
    body:insert_at(hs[i], i, i)
  end
  units:remove(hs[1])
  units:remove_later(hs[2])
  units:remove_later(hs[3])
  eq(units:flush(), 2)
  units:clear(true)
  eq(#gone, 10)
  for i = 1, 10 do
    eq(gone[i], i, "the entity's value is readable in its components' hooks")
  end
end)

case("values_released", function()
  local weak = setmetatable({}, { __mode = "v" })
  local units = ark.pool()
  local ai = ark.pool({ keys = units })
  local names = { "removed", "later", "cleared" }
  local hs = {}
  for _, name in ipairs(names) do
    local v, w = {}, {}
    weak[name], weak[name .. "_ai"] = v, w
    hs[name] = units:insert(v)
    ai:insert_at(hs[name], w)
  end
  units:remove(hs.removed)
  units:remove_later(hs.later)
  H.gc()
  eq(weak.removed, nil)
  eq(weak.removed_ai, nil)
  ok(weak.later and weak.later_ai, "kept until the flush")
  units:flush()
  units:clear(false) -- no hook runs: the keyed pool's values go too
  H.gc()
  for _, name in ipairs(names) do
    eq(weak[name], nil, name)
    eq(weak[name .. "_ai"], nil, name .. " (keyed)")
  end
end)

case("hooks_call_back", function()
  local units, body, burning
  local log = {}
  -- a tree: removing a unit removes its children, from its hook
  local children = {}
  units = ark.pool({ on_remove = function(h, v)
    log[#log + 1] = v
    for _, c in ipairs(children[h] or {}) do
      eq(units:remove(c), true, "a child, removed from the hook")
    end
    local r, why = body:insert_at(h, 1, 1)
    eq(r, nil, "no new component for a dying entity")
    ok(why == "stale" or why == "exists", why)
    local t, why2 = units:tag(burning, h)
    eq(t, false)
    eq(why2, "stale")
    eq(units:flush(), 0, "flush from a hook does nothing")
    units:clear(true) -- does nothing from a hook
    raises("removal hook", function() units:close() end)
    raises("removal hook", function() body:close() end)
    raises("removal hook", function() burning:close() end)
    raises("removal hook", function() units:detach(burning) end)
  end })
  body = ark.table(XY, { keys = units, on_remove = function(h)
    log[#log + 1] = "body " .. units:get(h)
    body:clear(true) -- does nothing from its own hook
    -- a component's hook removes another entity: after this removal
    if units:get(h) == "root" and children.extra then
      eq(units:remove(children.extra), true)
    end
    local n = units:insert("spawned")
    ok(body:insert_at(n, 9, 9), "a new entity gets a component at once")
  end })
  burning = ark.idset()
  units:attach(burning)
  local root = units:insert("root")
  local kid1, kid2 = units:insert("kid1"), units:insert("kid2")
  local grandkid = units:insert("grandkid")
  children.extra = units:insert("extra")
  children[root] = { kid1, kid2 }
  children[kid1] = { grandkid }
  for _, h in ipairs({ root, kid1, kid2, grandkid, children.extra }) do
    body:insert_at(h, 0, 0)
    units:tag(burning, h)
  end
  eq(units:remove(root), true)
  for _, h in ipairs({ root, kid1, kid2, grandkid, children.extra }) do
    eq(units:get(h), nil)
    eq(body:get(h, "x"), nil)
  end
  eq(#burning, 0)
  eq(#units, 5, "the spawned ones")
  eq(#body, 5)
  local count = {}
  for _, v in ipairs(log) do
    count[v] = (count[v] or 0) + 1
  end
  for _, v in ipairs({ "root", "kid1", "kid2", "grandkid", "extra" }) do
    eq(count[v], 1, v .. ": one on_remove")
    eq(count["body " .. v], 1, v .. ": one body on_remove")
  end
  eq(log[1], "root")
  eq(log[2], "body root", "the entity's hook, then its component's")
end)

case("hook_errors", function()
  local units = ark.pool({ on_remove = function(h, v)
    if v == "bad" then error("unit hook failed") end
  end })
  local body = ark.table(XY, { keys = units, on_remove = function()
    error("body hook failed")
  end })
  local a = units:insert("bad")
  body:insert_at(a, 1, 1)
  raises("unit hook failed", function() units:remove(a) end)
  eq(units:get(a), nil, "the removal completed")
  eq(body:get(a, "x"), nil, "and took the component")
  local b = units:insert("good")
  body:insert_at(b, 1, 1)
  raises("body hook failed", function() units:remove(b) end)
  eq(#units + #body, 0)
  -- a component's own removal raises its own error
  local c = units:insert("good")
  body:insert_at(c, 1, 1)
  raises("body hook failed", function() body:remove(c) end)
  eq(body:get(c, "x"), nil)
  eq(units:get(c), "good")
  -- and the world is usable after
  body:insert_at(c, 2, 2)
  eq(body:get(c, "x"), 2)
end)

case("hostile_handles", function()
  local units = ark.pool()
  local body = ark.table(XY, { keys = units })
  local ai = ark.pool({ keys = units })
  local tags = ark.idset()
  units:attach(tags)
  local live = units:insert("live")
  local dead = units:insert("dead")
  units:remove(dead)
  body:insert_at(live, 1, 1)
  ai:insert_at(live, "x")
  units:tag(tags, live)
  local other = ark.pool({ index_bits = 20, gen_bits = 12, tag_bits = 2, tag = 1 })
  local foreign = other:insert(1)
  for _, v in ipairs(H.hostile({ dead, foreign, live + 2 ^ 40 })) do
    eq(units:has_tag(tags, v), false)
    local t, why = units:tag(tags, v)
    eq(t, false)
    eq(type(why), "string")
    eq(units:untag(tags, v), false)
    eq(units:id(v), nil)
    eq(body:get(v, "x"), nil)
    eq(ai:get(v), nil)
    eq(body:insert_at(v, 1, 1), nil)
    eq(ai:insert_at(v, 1), nil)
    eq(body:remove(v), false)
    eq(ai:remove(v), false)
    eq(units:remove(v), false)
    if v ~= 0 then
      eq(units:handle_by_id(v), nil)
    end
  end
  eq(units:handle_by_id(units:id(live)), live)
  eq(units:handle_by_id(0), nil)
  eq(units:handle_by_id(2 ^ 32), nil)
  eq(units:handle_by_id(2 ^ 32 + units:id(live)), nil)
  eq(#units, 1)
  eq(#tags, 1)
  eq(body:get(live, "x"), 1)
  -- sets and containers are no client input: they raise
  raises("not attached", function() units:tag(ark.idset(), live) end)
  raises("not an open ark.idset", function() units:has_tag(nil, live) end)
  raises("not an open ark.idset", function() units:tag("tags", live) end)
  local other_tags = ark.idset()
  other:attach(other_tags)
  raises("not attached", function() units:has_tag(other_tags, live) end)
end)

case("attach_rules", function()
  local units = ark.pool()
  local s = ark.idset()
  eq(units:attach(s), true)
  eq(units:attach(s), true, "twice is fine")
  raises("another pool", function() ark.pool():attach(s) end)
  raises("not an open ark.idset", function() units:attach({}) end)
  raises("keyed pool", function() ark.pool({ keys = units }):attach(ark.idset()) end)
  -- an attached set changes through tag and untag only
  raises("pool:tag", function() s:insert(1) end)
  raises("pool:tag", function() s:remove(1) end)
  local e = units:insert("e")
  eq(units:tag(s, e), true)
  local t, why = units:tag(s, e)
  eq(t, false)
  eq(why, "exists")
  eq(s:contains(units:id(e)), true, "read as any set")
  eq(s:at(1), units:id(e))
  eq(units:untag(s, e), true)
  t, why = units:untag(s, e)
  eq(why, "notfound")
  units:tag(s, e)
  -- detached: its ids stay, and it is a plain set again
  eq(units:detach(s), true)
  eq(units:detach(s), false)
  eq(units:detach(ark.idset()), false)
  eq(units:detach(nil), false)
  eq(#s, 1)
  ok(s:insert(12345))
  raises("not attached", function() units:has_tag(s, e) end)
  -- attaching checks the ids: 12345 is no entity
  local r, msg = units:attach(s)
  eq(r, nil)
  ok(msg:find("no live entity", 1, true), msg)
  raises("not attached", function() units:has_tag(s, e) end)
end)

case("attached_set_iteration", function()
  -- ids() over a set whose entities are removed during the loop
  local units = ark.pool()
  local s = ark.idset()
  units:attach(s)
  local hs = {}
  for i = 1, 300 do
    hs[i] = units:insert(i)
    units:tag(s, hs[i])
  end
  local seen, n = {}, 0
  for id in s:ids() do
    ok(not seen[id], "once")
    seen[id] = true
    n = n + 1
    local h = units:handle_by_id(id)
    local v = units:get(h)
    units:remove(h)
    if v + 100 <= 300 then
      units:remove(hs[v + 100])
    end
  end
  eq(n, 200, "the removed ones ahead are skipped")
  eq(#s, 0)
end)

-- Queries against a Lua model, with a fixed seed: entities, components in
-- a keyed table and a keyed pool, two tags; removals of every kind. The
-- model walks arrays, not pairs(): LuaJIT 2.1's compiled pairs() can loop
-- forever over a table of handles (LuaJIT issue #744).
case("query_model", function()
  local rng = H.rng(H.seed)
  local got = { ent = 0, pos = 0, vel = 0 }
  local want = { ent = 0, pos = 0, vel = 0 }
  local E = ark.pool({ on_remove = function() got.ent = got.ent + 1 end })
  local pos = ark.table({ { "x", "int32" } }, { keys = E,
    on_remove = function() got.pos = got.pos + 1 end })
  local vel = ark.pool({ keys = E, on_remove = function() got.vel = got.vel + 1 end })
  local burning, frozen = ark.idset(), ark.idset()
  E:attach(burning)
  E:attach(frozen)
  local sets = { burning, frozen }
  -- the model
  local live, marked = {}, {} -- entity handle -> id
  local comp = { [pos] = {}, [vel] = {} } -- handle -> value, live components
  local cmarked = { [pos] = {}, [vel] = {} } -- id -> true, marked components
  local tag = { [burning] = {}, [frozen] = {} } -- handle -> true, live entities
  local ntag = { [burning] = 0, [frozen] = 0 }
  local pending = { [burning] = 0, [frozen] = 0 } -- ids of marked entities
  local ncmarked = { [pos] = 0, [vel] = 0 }
  local list = {} -- every entity issued, in order
  local function pick() -- mostly a recent entity, live or not
    if #list == 0 then
      return 12345
    end
    local from = rng.int(0, 1) == 0 and 1 or math.max(1, #list - 200)
    return list[rng.int(from, #list)]
  end
  local function kill_components(h)
    for _, c in ipairs({ pos, vel }) do
      if comp[c][h] ~= nil then
        comp[c][h] = nil
        want[c == pos and "pos" or "vel"] = want[c == pos and "pos" or "vel"] + 1
      end
    end
  end
  local function get(c, h)
    if c == pos then
      return pos:get(h, "x")
    end
    return vel:get(h)
  end
  local queries = {
    { with = { pos, vel } },
    { with = { pos }, without = { frozen } },
    { with = { burning }, without = { vel } },
    { with = { vel, burning, frozen } },
    { without = { pos, burning } },
    {},
  }
  for i, spec in ipairs(queries) do
    queries[i] = { spec = spec, q = ark.query(E, spec) }
  end
  local function model_match(spec, h)
    for _, t in ipairs(spec.with or {}) do
      if (tag[t] and not tag[t][h]) or (comp[t] and comp[t][h] == nil) then
        return false
      end
    end
    for _, t in ipairs(spec.without or {}) do
      if (tag[t] and tag[t][h]) or (comp[t] and comp[t][h] ~= nil) then
        return false
      end
    end
    return true
  end
  local function check(step)
    local where = "step " .. step
    for _, q in ipairs(queries) do
      local expect = {}
      for _, h in ipairs(list) do
        if live[h] and model_match(q.spec, h) then
          expect[#expect + 1] = { h = h, id = live[h] }
        end
      end
      table.sort(expect, function(a, b) return a.id < b.id end)
      local n = 0
      for e, v1, v2, v3 in q.q:each() do
        n = n + 1
        local x = expect[n]
        ok(x, where .. ": more matches than the model")
        eq(e, x.h, where .. ": entity " .. n)
        for k, t in ipairs(q.spec.with or {}) do
          local v = ({ v1, v2, v3 })[k]
          if t == pos then
            eq(v.x, comp[pos][e], where .. ": row")
          elseif t == vel then
            eq(v, comp[vel][e], where .. ": value")
          else
            eq(v, true, where .. ": tag")
          end
        end
      end
      eq(n, #expect, where .. ": matches")
      eq(q.q:count(), n, where .. ": count")
    end
    for _, h in ipairs(list) do
      for _, c in ipairs({ pos, vel }) do
        eq(get(c, h), comp[c][h], where .. ": component")
      end
      for _, s in ipairs(sets) do
        eq(E:has_tag(s, h), tag[s][h] == true, where .. ": has_tag")
      end
      eq(E:get(h) ~= nil, live[h] ~= nil, where .. ": entity")
    end
    for _, s in ipairs(sets) do
      eq(#s, ntag[s] + pending[s], where .. ": tag set size")
    end
    for _, k in ipairs({ "ent", "pos", "vel" }) do
      eq(got[k], want[k], where .. ": " .. k .. " hooks")
    end
  end
  local steps = H.n(12000)
  for step = 1, steps do
    local op = rng.int(1, 100)
    local h = pick()
    if op <= 16 or #list < 5 then
      local e = E:insert(step)
      list[#list + 1] = e
      live[e] = E:id(e)
    elseif op <= 19 then -- remove
      local was = live[h]
      eq(E:remove(h), was ~= nil)
      if was then
        live[h] = nil
        want.ent = want.ent + 1
        kill_components(h)
        for _, s in ipairs(sets) do
          if tag[s][h] then
            tag[s][h] = nil
            ntag[s] = ntag[s] - 1
          end
        end
      end
    elseif op <= 22 then -- remove_later
      local was = live[h]
      eq(E:remove_later(h), was ~= nil)
      if was then
        live[h], marked[h] = nil, was
        for _, s in ipairs(sets) do
          if tag[s][h] then
            tag[s][h] = nil
            ntag[s] = ntag[s] - 1
            pending[s] = pending[s] + 1
          end
        end
      end
    elseif op <= 24 then -- flush the entities
      local n = 0
      for _, m in ipairs(list) do
        if marked[m] then
          n = n + 1
          kill_components(m)
        end
      end
      eq(E:flush(), n)
      want.ent = want.ent + n
      marked = {}
      pending = { [burning] = 0, [frozen] = 0 }
    elseif op <= 60 then -- add a component
      local c = rng.int(0, 1) == 0 and pos or vel
      local v = rng.int(-1000, 1000)
      local r, why = c:insert_at(h, v)
      local id = live[h]
      if id and comp[c][h] == nil and not cmarked[c][id] then
        eq(r, true, "insert_at")
        comp[c][h] = v
      else
        eq(r, nil, "insert_at refused")
        eq(why, id and "exists" or "stale")
      end
    elseif op <= 66 then -- remove a component
      local c = rng.int(0, 1) == 0 and pos or vel
      local has = comp[c][h] ~= nil
      eq(c:remove(h), has)
      if has then
        comp[c][h] = nil
        want[c == pos and "pos" or "vel"] = want[c == pos and "pos" or "vel"] + 1
      end
    elseif op <= 70 then -- mark a component
      local c = rng.int(0, 1) == 0 and pos or vel
      local has = comp[c][h] ~= nil
      eq(c:remove_later(h), has)
      if has then
        comp[c][h] = nil
        cmarked[c][E:id(h) or marked[h]] = true
        ncmarked[c] = ncmarked[c] + 1
      end
    elseif op <= 72 then -- flush a component
      local c = rng.int(0, 1) == 0 and pos or vel
      local n = ncmarked[c]
      eq(c:flush(), n)
      want[c == pos and "pos" or "vel"] = want[c == pos and "pos" or "vel"] + n
      cmarked[c], ncmarked[c] = {}, 0
    elseif op <= 92 then -- tag or untag
      local s = sets[rng.int(1, 2)]
      if rng.int(0, 1) == 0 then
        local r = E:tag(s, h)
        eq(r, live[h] ~= nil and not tag[s][h])
        if r then
          tag[s][h] = true
          ntag[s] = ntag[s] + 1
        end
      else
        local r = E:untag(s, h)
        eq(r, tag[s][h] == true)
        if r then
          tag[s][h] = nil
          ntag[s] = ntag[s] - 1
        end
      end
    elseif op <= 99 or rng.int(1, 10) > 1 then -- change a component
      if comp[pos][h] ~= nil then
        local v = rng.int(-5, 5)
        eq(pos:set(h, "x", v), true)
        comp[pos][h] = v
      end
    else -- clear everything (rarely)
      local n = 0
      for _, m in ipairs(list) do
        if live[m] or marked[m] then
          n = n + 1
          kill_components(m)
        end
      end
      E:clear(true)
      want.ent = want.ent + n
      live, marked = {}, {}
      for _, s in ipairs(sets) do
        tag[s], ntag[s], pending[s] = {}, 0, 0
      end
    end
    if step % 97 == 0 or step == steps then
      check(step)
    end
  end
end)

case("query_removal_during_loop", function()
  local units = ark.pool()
  local body = ark.table(XY, { keys = units })
  local ai = ark.pool({ keys = units })
  local hot = ark.idset()
  units:attach(hot)
  local hs = {}
  local N = 1000
  for i = 1, N do
    hs[i] = units:insert(i)
    body:insert_at(hs[i], i, 0)
    ai:insert_at(hs[i], i)
    units:tag(hot, hs[i])
  end
  local q = ark.query(units, { with = { body, ai, hot } })
  -- of each four (1, 2, 3, 4) the first is visited, and removes the
  -- second, the third's component and the fourth's tag: none of them is
  -- visited then; every other visited one removes itself; new entities
  -- may or may not be visited, never twice
  local seen, order, n = {}, {}, 0
  for e, row, v, t in q:each() do
    ok(not seen[e], "visited once")
    seen[e] = true
    order[#order + 1] = e
    n = n + 1
    eq(row.x, v)
    eq(units:get(e), v)
    eq(t, true)
    ok(v < 0 or v % 4 == 1, "only the first of four")
    if v % 8 == 1 then
      units:remove(e)
    end
    if v + 1 <= N and v % 4 == 1 then
      units:remove(hs[v + 1]) -- ahead
    end
    if v + 2 <= N and v % 4 == 1 then
      body:remove(hs[v + 2]) -- a component ahead
    end
    if v + 3 <= N and v % 4 == 1 then
      units:untag(hot, hs[v + 3]) -- a tag ahead
    end
    if v % 100 == 1 then
      local x = units:insert(-v)
      body:insert_at(x, -v, 0)
      ai:insert_at(x, -v)
      units:tag(hot, x)
    end
  end
  local visited_old = 0
  for _, e in ipairs(order) do
    local v = units:get(e)
    if v == nil or v > 0 then
      visited_old = visited_old + 1
    end
  end
  eq(visited_old, N / 4)
  -- remove_later during the loop, and break
  local k = 0
  for e in q:each() do
    units:remove_later(e)
    k = k + 1
    if k == 10 then break end
  end
  eq(units:flush(), 10)
  -- the loop after a break starts afresh
  local left = 0
  for _ in q:each() do left = left + 1 end
  eq(left, q:count())
end)

case("query_terms", function()
  local units = ark.pool()
  local body = ark.table(XY, { keys = units })
  local ai = ark.pool({ keys = units })
  local hot = ark.idset()
  units:attach(hot)
  local e = units:insert("e")
  body:insert_at(e, 1, 2)
  ai:insert_at(e, "v")
  units:tag(hot, e)
  -- one value per `with` term, in order: row, value, true
  local q = ark.query(units, { with = { hot, ai, body } })
  local n = 0
  for h, t, v, row in q:each() do
    eq(h, e)
    eq(t, true)
    eq(v, "v")
    eq(row.y, 2)
    row.y = 5
    n = n + 1
  end
  eq(n, 1)
  eq(body:get(e, "y"), 5, "the row view writes")
  -- no terms: every live entity
  eq(ark.query(units):count(), 1)
  eq(ark.query(units, {}):count(), 1)
  ok(tostring(q):find("3 with", 1, true))
  if not H.jit then
    local m = 0
    for h in pairs(q) do
      eq(h, e)
      m = m + 1
    end
    eq(m, 1, "pairs(q)")
  end
  -- what a term may be
  local other = ark.pool()
  raises("not keyed by", function() ark.query(units, { with = { ark.table(XY) } }) end)
  raises("not keyed by", function()
    ark.query(units, { with = { ark.table(XY, { keys = other }) } })
  end)
  raises("not keyed by", function() ark.query(units, { without = { ark.idset() } }) end)
  raises("not keyed by", function() ark.query(units, { with = { units } }) end)
  raises("a with term", function() ark.query(units, { with = { 1 } }) end)
  raises("a without term", function() ark.query(units, { without = { "x" } }) end)
  raises("unknown option", function() ark.query(units, { tags = { hot } }) end)
  raises("entities", function() ark.query(ai) end)
  raises("entities", function() ark.query(body) end)
  raises("entities", function() ark.query(nil) end)
  local many = {}
  for i = 1, 9 do
    many[i] = ark.pool({ keys = units })
  end
  raises("at most 8", function() ark.query(units, { with = many }) end)
  local eight = { unpack and unpack(many, 1, 8) or table.unpack(many, 1, 8) }
  eq(ark.query(units, { with = eight }):count(), 0)
  -- a closed container or a detached set stops the query
  local q2 = ark.query(units, { with = { hot } })
  local it = q2:each()
  eq(it(), e)
  units:detach(hot)
  raises("closed", it)
  raises("closed", function() q2:count() end)
  local q3 = ark.query(units, { without = { ai } })
  eq(q3:count(), 0)
  ai:close()
  raises("closed", function() q3:count() end)
  raises("closed", function() q3:each() end)
  local q4 = ark.query(units)
  units:close()
  raises("closed", function() q4:count() end)
end)

case("query_allocates_nothing", function()
  local units = ark.pool()
  local body = ark.table(XY, { keys = units })
  local ai = ark.pool({ keys = units })
  local hot = ark.idset()
  units:attach(hot)
  for i = 1, 20000 do
    local e = units:insert(i)
    body:insert_at(e, i, 0)
    ai:insert_at(e, i)
    if i % 3 == 0 then units:tag(hot, e) end
  end
  local q = ark.query(units, { with = { body, ai }, without = { hot } })
  local function walk()
    local sum = 0
    for _, row, v in q:each() do
      sum = sum + v
    end
    return sum
  end
  walk()
  collectgarbage("collect")
  collectgarbage("stop")
  local before = collectgarbage("count")
  local sum = walk()
  local grew = (collectgarbage("count") - before) * 1024
  collectgarbage("restart")
  ok(sum > 0)
  -- one loop's iterator and row view, not one object per entity
  ok(grew < 2048, ("a walk over 13334 entities allocated %d bytes"):format(grew))
end)

case("lifetime", function()
  local weak = setmetatable({}, { __mode = "v" })
  local units = ark.pool()
  do
    -- a keyed container and an attached set live as long as their
    -- entity pool: a collection inside a cascade cannot take them
    local log = {}
    local body = ark.table(XY, { keys = units, on_remove = function(h) log[#log + 1] = h end })
    local tags = ark.idset()
    units:attach(tags)
    weak.body, weak.tags = body, tags
    local e = units:insert(1)
    body:insert_at(e, 1, 1)
    units:tag(tags, e)
    weak.log = log
    body, tags = nil, nil
    H.gc()
    ok(weak.body and weak.tags, "kept by the entity pool")
    units:remove(e)
    eq(#weak.log, 1, "its hook still runs")
    eq(#weak.tags, 0)
  end
  -- closing one lets it go
  weak.body:close()
  units:detach(weak.tags)
  H.gc()
  eq(weak.body, nil)
  eq(weak.tags, nil)
  -- the entity pool goes with its members
  do
    local u = ark.pool()
    local t = ark.table(XY, { keys = u })
    local p = ark.pool({ keys = u })
    local s = ark.idset()
    u:attach(s)
    local e = u:insert({})
    t:insert_at(e, 1, 1)
    p:insert_at(e, {})
    u:tag(s, e)
    weak.u, weak.t, weak.p, weak.s = u, t, p, s
    weak.q = ark.query(u, { with = { t, p, s } })
  end
  H.gc()
  for _, k in ipairs({ "u", "t", "p", "s", "q" }) do
    eq(weak[k], nil, k .. " collected")
  end
  -- a query and its loop keep the world alive
  local it
  do
    local u = ark.pool()
    local t = ark.table(XY, { keys = u })
    for i = 1, 3 do t:insert_at(u:insert(i), i, i) end
    weak.u2 = u
    it = ark.query(u, { with = { t } }):each()
  end
  H.gc()
  ok(weak.u2, "the loop holds it")
  local n = 0
  while it() do n = n + 1 end
  eq(n, 3)
  it = nil
  H.gc()
  eq(weak.u2, nil)
end)

case("close_rules", function()
  local units = ark.pool()
  local body = ark.table(XY, { keys = units })
  local ai = ark.pool({ keys = units })
  local tags = ark.idset()
  units:attach(tags)
  local e = units:insert(1)
  body:insert_at(e, 1, 1)
  ai:insert_at(e, "v")
  units:tag(tags, e)
  -- a keyed container closed: the entity's removal skips it
  ai:close()
  ai:close()
  eq(units:remove(e), true)
  eq(body:get(e, "x"), nil)
  local f = units:insert(2)
  body:insert_at(f, 2, 2)
  units:tag(tags, f)
  -- the entity pool closed: its containers keep their rows, take no new
  -- ones, and the sets are plain sets again
  units:close()
  eq(body:get(f, "x"), 2)
  eq(#body, 1)
  raises("entity pool that keys it is closed", function() body:insert_at(f, 1, 1) end)
  eq(body:remove(f), true)
  eq(#tags, 1)
  ok(tags:insert(77), "detached by the close")
  tags:close()
  body:close()
  H.gc()
end)

case54("close_variable", function()
  local chunk = assert(load([[
    local ark, XY = ...
    local log = {}
    do
      local units <close> = ark.pool()
      local body <close> = ark.table(XY, { keys = units,
        on_remove = function() log[#log + 1] = 1 end })
      local tags <close> = ark.idset()
      units:attach(tags)
      local e = units:insert(1)
      body:insert_at(e, 1, 1)
      units:tag(tags, e)
    end -- closed in reverse: tags, body, then units
    return #log
  ]]))
  eq(chunk(ark, XY), 0, "closing runs no hook")
  H.gc()
end)

-- A keyed table's snapshot loads against an entity pool holding its
-- entities: the one it was saved with, or one rebuilt at the same handles
-- (the Lua value pool has no save; its values are the program's).
case("snapshot", function()
  local units = ark.pool()
  local body = ark.table(XY, { keys = units })
  local tags = ark.idset()
  units:attach(tags)
  local hs = {}
  for i = 1, 50 do
    hs[i] = units:insert(i)
    if i % 2 == 0 then body:insert_at(hs[i], i, -i) end
    if i % 5 == 0 then units:tag(tags, hs[i]) end
  end
  units:remove(hs[10])
  local s_body, s_tags = body:save(), tags:save()
  -- into a rebuilt entity pool
  local rebuilt = ark.pool()
  for i = 1, 50 do
    if units:get(hs[i]) then
      eq(rebuilt:insert_at(hs[i], units:get(hs[i])), true)
    end
  end
  local b2 = assert(ark.table_load(s_body, XY, { keys = rebuilt }))
  ok(tostring(b2):find("keyed", 1, true))
  eq(#b2, #body)
  for i = 1, 50 do
    eq(b2:get(hs[i], "y"), body:get(hs[i], "y"), "row " .. i)
    eq(b2:row(hs[i]), body:row(hs[i]), "position " .. i)
  end
  local t2 = assert(ark.idset_load(s_tags))
  eq(rebuilt:attach(t2), true)
  for i = 1, 50 do
    eq(rebuilt:has_tag(t2, hs[i]), units:has_tag(tags, hs[i]))
  end
  -- it is keyed: it cascades and queries
  eq(ark.query(rebuilt, { with = { b2, t2 } }):count(), 4)
  rebuilt:remove(hs[20])
  eq(b2:get(hs[20], "x"), nil)
  -- into the same pool again, next to the original
  local b3 = assert(ark.table_load(s_body, nil, { keys = units }))
  eq(b3:get(hs[2], "x"), 2)
  -- refused: a pool missing an entity that has a row, another layout,
  -- the keyed string without keys, damage
  local partial = ark.pool()
  partial:insert_at(hs[2], 2)
  local r, msg = ark.table_load(s_body, nil, { keys = partial })
  eq(r, nil)
  ok(msg:find("entities that the pool does not have", 1, true), msg)
  r, msg = ark.table_load(s_body, nil, { keys = ark.pool({ index_bits = 20, gen_bits = 12 }) })
  eq(r, nil)
  ok(msg:find("layout", 1, true), msg)
  eq(ark.table_load(s_body), nil)
  for n = 0, #s_body - 1, 7 do
    eq(ark.table_load(s_body:sub(1, n), nil, { keys = units }), nil, "truncated at " .. n)
  end
  local bad = s_body:sub(1, 60) .. string.char((s_body:byte(61) + 1) % 256) .. s_body:sub(62)
  eq(ark.table_load(bad, nil, { keys = units }), nil, "a changed byte")
  raises("option keys", function() ark.table_load(s_body, nil, { keys = tags }) end)
  -- a loaded set of ids that are no live entities is refused
  units:remove(hs[5])
  r, msg = units:attach(assert(ark.idset_load(s_tags)))
  eq(r, nil)
  ok(msg:find("no live entity", 1, true), msg)
end)
