-- SPDX-License-Identifier: MIT
-- A pure-Lua generational map (Lua 5.4), the baseline ark.pool is measured
-- against in bench/lua/bench.lua: two arrays, values and generations; a
-- handle is index | generation << 32; a removal bumps the generation and
-- pushes the index on a free list (reused last in, first out). Integer
-- handles only: unlike ark.pool it is not hardened against hostile ones.
local M = {}
M.__index = M

function M.new()
  return setmetatable({ values = {}, gens = {}, free = {}, nfree = 0, n = 0 }, M)
end

function M:insert(v)
  local i, nf = nil, self.nfree
  if nf > 0 then
    i = self.free[nf]
    self.nfree = nf - 1
  else
    i = self.n + 1
    self.n = i
    self.gens[i] = 0
  end
  self.values[i] = v
  return i | self.gens[i] << 32
end

function M:get(h)
  local i = h & 0xffffffff
  if self.gens[i] == h >> 32 then
    return self.values[i]
  end
end

function M:remove(h)
  local i = h & 0xffffffff
  local gens = self.gens
  if gens[i] ~= h >> 32 or self.values[i] == nil then
    return false
  end
  self.values[i] = nil
  gens[i] = gens[i] + 1
  local nf = self.nfree + 1
  self.free[nf] = i
  self.nfree = nf
  return true
end

return M
