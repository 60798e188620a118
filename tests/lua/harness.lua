-- SPDX-License-Identifier: MIT
-- The Lua tests' harness. A test file registers cases:
--   local H = require "harness"
--   local case, case54, casejit = H.case, H.case54, H.casejit
--   case("name", function() ... end)      run under Lua 5.4 and LuaJIT
--   case54(...) / casejit(...)             one interpreter only
-- bindings/lua/CMakeLists.txt makes one ctest entry of each case line
-- (they must start the line). Randomized cases take H.seed (ARK_SEED, or
-- a fixed default) and H.scale (ARK_TEST_SCALE, 0.1 under valgrind); a
-- failure prints the seed.
local H = {}

H.seed = tonumber(os.getenv("ARK_SEED") or "") or 20251128
H.scale = tonumber(os.getenv("ARK_TEST_SCALE") or "") or 1
H.jit = type(rawget(_G, "jit")) == "table"
H.cases = {}

function H.case(name, fn)
  assert(not H.cases[name], "two cases named " .. name)
  H.cases[name] = fn
end
H.case54 = H.case
H.casejit = H.case

-- n scaled down under valgrind (at least 1).
function H.n(n)
  return math.max(1, math.floor(n * H.scale))
end

local function show(v)
  if type(v) == "string" then
    return ("%q"):format(v)
  end
  return tostring(v)
end

function H.eq(got, want, what)
  if got ~= want and not (got ~= got and want ~= want) then
    error(("%s: got %s, want %s"):format(what or "value", show(got), show(want)), 2)
  end
end

function H.ok(cond, what)
  if not cond then
    error(what or "check failed", 2)
  end
  return cond
end

-- Call fn and return its error message; fail if it does not raise one
-- that contains pattern (a plain string).
function H.raises(pattern, fn, ...)
  local ok, err = pcall(fn, ...)
  if ok then
    error("no error raised (expected '" .. pattern .. "')", 2)
  end
  err = tostring(err)
  if not err:find(pattern, 1, true) then
    error("error '" .. err .. "' does not contain '" .. pattern .. "'", 2)
  end
  return err
end

-- A deterministic generator, the same numbers under both interpreters
-- (Park-Miller: every product stays below 2^53).
function H.rng(seed)
  local x = seed % 2147483646 + 1
  local r = {}
  function r.next()
    x = x * 48271 % 2147483647
    return x
  end
  -- An integer in [lo, hi].
  function r.int(lo, hi)
    return lo + r.next() % (hi - lo + 1)
  end
  return r
end

-- The values a client could send as a handle or an id and that name
-- nothing: huge, negative, fractional, NaN, infinite, strings, nil,
-- tables, booleans, functions. extra are appended.
function H.hostile(extra)
  local list = { 2 ^ 53, 2 ^ 63, -2 ^ 63, 2 ^ 64, 2 ^ 80, -1, -2 ^ 31, 1.5,
                 -0.5, 0 / 0, 1 / 0, -1 / 0, "1", "0x1", "", {}, true, false,
                 print, 0 }
  if math.type then -- Lua 5.4 integers
    list[#list + 1] = math.maxinteger
    list[#list + 1] = math.mininteger
    list[#list + 1] = math.tointeger(-2 ^ 40)
  end
  for _, v in ipairs(extra or {}) do
    list[#list + 1] = v
  end
  return list
end

-- Run every pending finalizer and free what is unreachable. LuaJIT's
-- compiled traces hold the objects they were specialised on (an
-- iterator function, say): they are flushed first.
function H.gc()
  if H.jit then
    jit.flush()
  end
  collectgarbage()
  collectgarbage()
end

return H
