-- SPDX-License-Identifier: MIT
-- require "ark.ffi" (LuaJIT): ark's C API through the FFI, for loops that
-- call the C functions directly. Returns the library namespace:
--
--   local C = require "ark.ffi"
--   local out = ffi.new("ark_pool *[1]")
--   assert(C.ark_pool_create(out, ffi.new("ark_pool_config", {elem_size = 8})) == C.ARK_OK)
--
-- The declarations (module ark.ffi_cdef) are generated from the headers
-- at build time (bindings/lua/gen_ffi.lua). The library is a shared ark:
-- $ARK_FFI_LIB if set, else ark/libark.so on package.cpath (where the
-- rock and the build put it), else the system's libark.
local ffi = require "ffi"

ffi.cdef(require "ark.ffi_cdef")

local path = os.getenv("ARK_FFI_LIB")
if path == nil or path == "" then
  path = package.searchpath("ark.libark", package.cpath) or "ark"
end
return ffi.load(path)
