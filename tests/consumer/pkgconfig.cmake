# SPDX-License-Identifier: MIT
# Build tests/consumer/main.c the way a Makefile user would:
#   cc main.c $(pkg-config --cflags --libs ark)
# against an installed ark (PREFIX), then run it (through RUN, an emulator
# such as wine, when given).
# cmake -DPREFIX=... -DCC=... -DPKG_CONFIG=... [-DRUN=...] -DSRC=... -DOUT=...
#       -P pkgconfig.cmake
file(GLOB pcdirs ${PREFIX}/lib*/pkgconfig ${PREFIX}/lib/*/pkgconfig)
string(REPLACE ";" ":" pcpath "${pcdirs}")
set(ENV{PKG_CONFIG_PATH} "${pcpath}")
execute_process(COMMAND ${PKG_CONFIG} --cflags --libs ark
                OUTPUT_VARIABLE flags OUTPUT_STRIP_TRAILING_WHITESPACE
                RESULT_VARIABLE rc)
if(NOT rc EQUAL 0)
  message(FATAL_ERROR "pkg-config --cflags --libs ark failed (PKG_CONFIG_PATH=${pcpath})")
endif()
message(STATUS "pkg-config ark: ${flags}")
separate_arguments(flags UNIX_COMMAND "${flags}")
execute_process(COMMAND ${CC} -std=c11 ${SRC} -o ${OUT} ${flags}
                RESULT_VARIABLE rc)
if(NOT rc EQUAL 0)
  message(FATAL_ERROR "compiling with pkg-config's flags failed")
endif()
execute_process(COMMAND ${RUN} ${OUT} RESULT_VARIABLE rc)
if(NOT rc EQUAL 0)
  message(FATAL_ERROR "${OUT} failed")
endif()
