-- SPDX-License-Identifier: MIT
-- docs/lua.md opens with an example: its first ```lua block runs here, as
-- it is, under both interpreters (its asserts are the checks).
local H = require "harness"
local case = H.case

case("manual_example", function()
  local path = assert(os.getenv("ARK_DOCS"), "ARK_DOCS is set by ctest") .. "/lua.md"
  local f = assert(io.open(path))
  local text = f:read("*a")
  f:close()
  local code = assert(text:match("```lua\n(.-)\n```"), "no lua block in " .. path)
  local n = select(2, code:gsub("\n", "")) + 1
  H.ok(n <= 30, "the example has " .. n .. " lines; the manual promises 30")
  assert((loadstring or load)(code, "=docs/lua.md"))()
end)

-- The example of its section "Entities, components and tags", likewise.
case("entities_example", function()
  local path = assert(os.getenv("ARK_DOCS"), "ARK_DOCS is set by ctest") .. "/lua.md"
  local f = assert(io.open(path))
  local text = f:read("*a")
  f:close()
  local section = assert(text:match("\n### Entities, components and tags\n(.*)"),
                         "no section 'Entities, components and tags' in " .. path)
  local code = assert(section:match("```lua\n(.-)\n```"), "no lua block in the section")
  assert((loadstring or load)(code, "=docs/lua.md (entities)"))()
end)
