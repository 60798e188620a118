-- SPDX-License-Identifier: MIT
-- From a checkout of ark, at its root:
--   luarocks make bindings/lua/ark-0.1.0-1.rockspec
-- builds the Lua module "ark" (ark linked statically) with the project's
-- CMake for the Lua LuaRocks is set up for, and installs it with
-- "ark.ffi" (LuaJIT) and the shared ark it loads. Needs CMake >= 3.16
-- and a C11 compiler; fetches nothing. For LuaJIT:
--   luarocks --lua-version 5.1 make bindings/lua/ark-0.1.0-1.rockspec \
--       LUA_INCDIR=/usr/include/luajit-2.1
rockspec_format = "3.0"
package = "ark"
version = "0.1.0-1"
-- luarocks make builds the checkout it runs in and fetches nothing; set
-- the project's real repository here before publishing the rock.
source = {
   url = "git+https://example.invalid/ark.git",
   tag = "v0.1.0",
}
description = {
   summary = "Generational-handle pools, typed tables outside the Lua heap, and id sets",
   detailed = [[
Value pools addressed by generational handles that a client can never use
to crash the server or name the wrong object, typed structure-of-arrays
tables kept out of the Lua heap (and its collector), and sorted id sets
with positions and set algebra, from the C library ark. Lua 5.4 and
LuaJIT 2.1; docs/lua.md is the manual.
]],
   license = "MIT",
}
dependencies = {
   "lua >= 5.1, < 5.5",
}
build = {
   type = "cmake",
   variables = {
      CMAKE_BUILD_TYPE = "Release",
      ARK_LUA_ROCK = "ON",
      ARK_LUA = "OFF",
      ARK_TESTS = "OFF",
      ARK_EXAMPLES = "OFF",
      ARK_BENCH = "OFF",
      ARK_INSTALL = "OFF",
      LUA_INCDIR = "$(LUA_INCDIR)",
      LUA_LIBDIR = "$(LIBDIR)",
      LUA_LUADIR = "$(LUADIR)",
      LUA_EXE = "$(LUA)",
   },
}
