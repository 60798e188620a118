-- SPDX-License-Identifier: MIT
-- gen_ffi.lua PREPROCESSED INCLUDE_DIR OUT
--
-- Make OUT, the module "ark.ffi_cdef": the text LuaJIT's ffi.cdef takes
-- for ark's C API, generated from the headers, never written by hand.
-- PREPROCESSED is the C preprocessor's output for <ark/ark.h> with its
-- linemarkers (cc -E). Kept: what comes from INCLUDE_DIR/ark/*.h, not
-- from ark/internal/ nor the system's headers. Removed from it: function
-- bodies (an inline function becomes its declaration; the shared library
-- exports every declared function), `inline`, `static`, `_Atomic`,
-- `__attribute__((...))` (`_Alignas(n)` becomes `aligned(n)`), `extern
-- "C"`, pragmas, the private ark__* functions and variables (not
-- exported) and the private types no kept declaration names. A type that the kept text names but that a
-- system or internal header defines (FILE) is declared opaque, so it can
-- be used through pointers only.
-- Runs under Lua 5.1 to 5.4 and LuaJIT.

local input, incdir, output = ...
assert(input and incdir and output, "usage: gen_ffi.lua PREPROCESSED INCLUDE_DIR OUT")
incdir = incdir:gsub("/+$", "")

local function public(file)
  local prefix = incdir .. "/ark/"
  if file:sub(1, #prefix) ~= prefix then
    return false
  end
  local rest = file:sub(#prefix + 1)
  return rest:match("^[%w_]+%.h$") ~= nil
end

-- 1. Split the preprocessed text by origin.
local kept, other = {}, {}
local keep = false
for line in io.lines(input) do
  local file = line:match('^#%s*%d+%s+"([^"]*)"')
  if file then
    keep = public(file)
  elseif line:match("^%s*#") then
    -- #pragma and the like
  elseif keep then
    kept[#kept + 1] = line
  else
    other[#other + 1] = line
  end
end

-- The index just past the parenthesised group that opens at i.
local function close_paren(s, i)
  local depth = 0
  for j = i, #s do
    local c = s:sub(j, j)
    if c == "(" then
      depth = depth + 1
    elseif c == ")" then
      depth = depth - 1
      if depth == 0 then
        return j + 1
      end
    end
  end
  error("gen_ffi: unbalanced parentheses")
end

-- 2. Drop attributes, qualifiers and storage classes cdef does not take.
local function strip(s)
  local out, i = {}, 1
  while true do
    local a, b = s:find("__attribute__%s*%(", i)
    if not a then
      out[#out + 1] = s:sub(i)
      break
    end
    out[#out + 1] = s:sub(i, a - 1)
    i = close_paren(s, b)
  end
  s = table.concat(out)
  s = s:gsub('extern%s*"C"%s*{', "")
  s = s:gsub("_Alignas%s*(%b())", "__attribute__((aligned%1))")
  for _, word in ipairs({ "inline", "__inline__", "__inline", "static",
                          "_Atomic", "__extension__", "__restrict__",
                          "__restrict" }) do
    s = s:gsub("%f[%w_]" .. word .. "%f[^%w_]", "")
  end
  return s
end

-- 3. Replace each function body with ";" (a "{" at file level that
-- follows a ")"), skipping string and character literals inside it.
local function drop_bodies(s)
  local out, depth, i, n = {}, 0, 1, #s
  local last = "" -- the last non-space character outside bodies
  while i <= n do
    local c = s:sub(i, i)
    if c == "{" and depth == 0 and last == ")" then
      local d, j = 0, i
      while j <= n do
        local cj = s:sub(j, j)
        if cj == '"' or cj == "'" then
          local k = j + 1
          while k <= n and s:sub(k, k) ~= cj do
            if s:sub(k, k) == "\\" then
              k = k + 1
            end
            k = k + 1
          end
          j = k
        elseif cj == "{" then
          d = d + 1
        elseif cj == "}" then
          d = d - 1
          if d == 0 then
            break
          end
        end
        j = j + 1
      end
      out[#out + 1] = ";"
      last = ";"
      i = j + 1
    else
      if c == "{" then
        depth = depth + 1
      elseif c == "}" then
        depth = depth - 1
      end
      if not c:match("%s") then
        last = c
      end
      out[#out + 1] = c
      i = i + 1
    end
  end
  return table.concat(out)
end

-- 4. The file-level statements (split at ";" outside braces).
local function statements(s)
  local list, depth, start = {}, 0, 1
  for i = 1, #s do
    local c = s:sub(i, i)
    if c == "{" then
      depth = depth + 1
    elseif c == "}" then
      depth = depth - 1
    elseif c == ";" and depth == 0 then
      local st = s:sub(start, i - 1):gsub("%s+", " "):gsub("^ ", ""):gsub(" $", "")
      if st ~= "" then
        list[#list + 1] = st
      end
      start = i + 1
    end
  end
  return list
end

-- The name a typedef statement declares.
local function typedef_name(st)
  local fn = st:match("%(%s*%*%s*([%a_][%w_]*)%s*%)")
  if fn then
    return fn
  end
  st = st:gsub("%b[]", ""):gsub("%b{}", "")
  return st:match("([%a_][%w_]*)%s*$")
end

-- The name of the function a statement declares, or nil.
local function function_name(st)
  if st:match("^typedef%f[^%w_]") or st:find("{", 1, true) then
    return nil
  end
  return st:match("([%a_][%w_]*)%s*%(")
end

-- The name a statement declares: a typedef's, a function's, a variable's.
local function declared_name(st)
  if st:match("^typedef%f[^%w_]") then
    return typedef_name(st)
  end
  return function_name(st) or st:gsub("%b[]", ""):match("([%a_][%w_]*)%s*$")
end

-- Private (ark__*) functions and variables are not exported: dropped.
-- A private type stays when a kept declaration names it.
local decls = statements(drop_bodies(strip(table.concat(kept, "\n"))))
local private, wanted = {}, {}
local function want(st)
  for id in st:gmatch("[%a_][%w_]*") do
    wanted[id] = true
  end
end
for i, st in ipairs(decls) do
  local name = declared_name(st) or ""
  if name:match("^ark__") then
    private[i] = st:match("^typedef%f[^%w_]") and "type" or "drop"
  else
    want(st)
  end
end
local grew = true
while grew do
  grew = false
  for i, st in ipairs(decls) do
    if private[i] == "type" and wanted[declared_name(st)] then
      private[i] = nil
      want(st)
      grew = true
    end
  end
end
local declared, used, body = {}, {}, {}
for i, st in ipairs(decls) do
  if not private[i] then
    body[#body + 1] = st .. ";"
    if st:match("^typedef%f[^%w_]") then
      declared[typedef_name(st)] = true
    end
    for id in st:gmatch("[%a_][%w_]*") do
      used[id] = true
    end
  end
end

-- 5. Opaque declarations for the outside types the kept text names.
local builtin = {}
for name in ([[int8_t int16_t int32_t int64_t uint8_t uint16_t uint32_t
  uint64_t intptr_t uintptr_t ptrdiff_t size_t wchar_t va_list
  __builtin_va_list __gnuc_va_list]]):gmatch("%S+") do
  builtin[name] = true
end
local opaque = {}
for _, st in ipairs(statements(drop_bodies(strip(table.concat(other, "\n"))))) do
  if st:match("^typedef%f[^%w_]") then
    local name = typedef_name(st)
    if name and used[name] and not declared[name] and not builtin[name] then
      declared[name] = true
      opaque[#opaque + 1] = ("typedef struct %s %s;"):format(name, name)
    end
  end
end
table.sort(opaque)

local text = table.concat(opaque, "\n") .. "\n" .. table.concat(body, "\n") .. "\n"
assert(not text:find("]==]", 1, true))
local f = assert(io.open(output, "w"))
f:write("-- SPDX-License-Identifier: MIT\n",
        "-- Generated by bindings/lua/gen_ffi.lua from include/ark/*.h: do not edit.\n",
        "return [==[\n", text, "]==]\n")
f:close()
