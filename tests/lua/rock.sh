#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# tests/lua/rock.sh SOURCE_DIR WORK_DIR LUA_VERSION LUA_EXE [LUA_INCDIR]
# `luarocks make` of bindings/lua/ark-*.rockspec into a local tree, from a
# copy of the sources (luarocks builds in the directory it runs in), then
# require "ark" (and "ark.ffi" under LuaJIT) from that tree. Offline.
set -euo pipefail
src=$1 work=$2 ver=$3 lua=$4 inc=${5:-}
rm -rf "$work"
mkdir -p "$work/src"
for f in CMakeLists.txt LICENSE cmake include src bindings; do
  cp -R "$src/$f" "$work/src/"
done
cd "$work/src"
vars=("LUA=$lua")
[ -z "$inc" ] || vars+=("LUA_INCDIR=$inc")
export CMAKE_BUILD_PARALLEL_LEVEL=${CMAKE_BUILD_PARALLEL_LEVEL:-2}
luarocks --lua-version "$ver" --tree "$work/tree" make \
  bindings/lua/ark-*.rockspec "${vars[@]}" >"$work/luarocks.log" 2>&1 ||
  { tail -n 30 "$work/luarocks.log"; exit 1; }
"$lua" - "$work/tree" "$ver" <<'LUA'
local tree, ver = ...
package.cpath = tree .. "/lib/lua/" .. ver .. "/?.so"
package.path = tree .. "/share/lua/" .. ver .. "/?.lua"
local ark = require "ark"
local p = ark.pool()
assert(p:get(p:insert("v")) == "v")
local t = ark.table({ { "x", "float" } })
assert(t:get(t:insert(2), "x") == 2)
local s = ark.idset()
s:insert(3)
assert(s:contains(3))
if jit then
  local C = require "ark.ffi"
  assert(C.ark_strerror(C.ARK_OK) ~= nil)
end
print("ok: " .. ark._VERSION .. " from the rock, under " .. (jit and jit.version or _VERSION))
LUA
