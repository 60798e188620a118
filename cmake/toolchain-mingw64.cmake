# SPDX-License-Identifier: MIT
# Cross-compile ark for 64-bit Windows with mingw-w64 (Debian package
# mingw-w64; x86_64-w64-mingw32-gcc) and run the tests under wine:
#
#   cmake -S . -B build/mingw -DCMAKE_TOOLCHAIN_FILE=cmake/toolchain-mingw64.cmake
#   cmake --build build/mingw && (cd build/mingw && ctest)
#
# Programs are linked statically (libgcc, the C runtime's static parts and
# winpthreads), so wine needs no DLL from the toolchain next to them.
set(CMAKE_SYSTEM_NAME Windows)
set(CMAKE_SYSTEM_PROCESSOR x86_64)

set(ARK_MINGW_PREFIX x86_64-w64-mingw32 CACHE STRING "mingw-w64 target triple")
set(CMAKE_C_COMPILER ${ARK_MINGW_PREFIX}-gcc)
set(CMAKE_CXX_COMPILER ${ARK_MINGW_PREFIX}-g++)
set(CMAKE_RC_COMPILER ${ARK_MINGW_PREFIX}-windres)

set(CMAKE_FIND_ROOT_PATH /usr/${ARK_MINGW_PREFIX})
set(CMAKE_FIND_ROOT_PATH_MODE_PROGRAM NEVER)
set(CMAKE_FIND_ROOT_PATH_MODE_LIBRARY ONLY)
set(CMAKE_FIND_ROOT_PATH_MODE_INCLUDE ONLY)
set(CMAKE_FIND_ROOT_PATH_MODE_PACKAGE ONLY)

set(CMAKE_EXE_LINKER_FLAGS_INIT "-static")

# ctest runs every test program through wine when it is installed (Debian's
# wine64 puts its loader in /usr/lib/wine; the wine package adds a wrapper).
if(NOT CMAKE_CROSSCOMPILING_EMULATOR)
  find_program(ARK_WINE NAMES wine64 wine PATHS /usr/lib/wine NO_CMAKE_FIND_ROOT_PATH)
  if(ARK_WINE)
    set(CMAKE_CROSSCOMPILING_EMULATOR ${ARK_WINE})
  endif()
endif()
