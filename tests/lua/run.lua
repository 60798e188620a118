-- SPDX-License-Identifier: MIT
-- tests/lua/run.lua MODULE_DIR TEST_FILE CASE: run one case of a test
-- file with the module built in MODULE_DIR (its ark.so, and ark/*.lua
-- for LuaJIT's FFI). Prints "ok" or the failure and the seed; exits 1 on
-- failure.
local moddir, file, name = ...
assert(moddir and file and name, "usage: run.lua MODULE_DIR TEST_FILE CASE")
local here = (arg and arg[0] or ""):match("^(.*)/[^/]*$") or "."
package.cpath = moddir .. "/?.so"
package.path = moddir .. "/?.lua;" .. here .. "/?.lua"

local H = require "harness"
dofile(file)
local fn = H.cases[name]
if not fn then
  io.stderr:write("no case ", name, " in ", file, "\n")
  os.exit(1)
end
local ok, err = xpcall(fn, debug.traceback)
H.gc()
if not ok then
  io.stderr:write("FAIL ", name, ": ", tostring(err), "\n",
                  "seed ", H.seed, " (set ARK_SEED to replay)\n")
  os.exit(1)
end
print("ok " .. name .. " (seed " .. H.seed .. ")")
