# SPDX-License-Identifier: MIT
# Check that every README code block preceded by <!-- example: PATH -->
# is byte-for-byte the file PATH (so the README snippet is the compiled one),
# apart from the file's SPDX licence line.
file(READ ${ROOT}/README.md readme)
string(REGEX MATCHALL "<!-- example: [^ ]+ -->\n```c(pp)?\n" markers "${readme}")
list(LENGTH markers n)
if(n EQUAL 0)
  message(FATAL_ERROR "README has no <!-- example: PATH --> block")
endif()
foreach(m ${markers})
  string(REGEX REPLACE "<!-- example: ([^ ]+) -->.*" "\\1" path "${m}")
  string(FIND "${readme}" "${m}" start)
  string(LENGTH "${m}" mlen)
  math(EXPR start "${start} + ${mlen}")
  string(SUBSTRING "${readme}" ${start} -1 rest)
  string(FIND "${rest}" "```\n" stop)
  string(SUBSTRING "${rest}" 0 ${stop} block)
  file(READ ${ROOT}/${path} want)
  # The file's licence line is not part of the snippet.
  string(REGEX REPLACE "^(/\\*|//) SPDX-License-Identifier: [^\n]*\n" "" want "${want}")
  if(NOT block STREQUAL want)
    message(FATAL_ERROR "README block for ${path} differs from the file")
  endif()
  message(STATUS "README block matches ${path}")
endforeach()
