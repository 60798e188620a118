# SPDX-License-Identifier: MIT
# idset: the flat baseline's set algebra is the STL's (idset_std.cpp), linked
# into bench_idset when a C++ compiler is found (else its B11 rows are
# absent). Peers: CRoaring and Judy1 on the same workloads as bench_idset
# (bench/idset_bench.h), built only when both are installed (Debian:
# libroaring-dev, libjudy-dev; see bench/idset.deps).
include(CheckLanguage)
check_language(CXX)
if(CMAKE_CXX_COMPILER AND TARGET bench_idset)
  enable_language(CXX)
  target_sources(bench_idset PRIVATE ${CMAKE_CURRENT_LIST_DIR}/idset_std.cpp)
  target_compile_definitions(bench_idset PRIVATE ARK_BENCH_HAVE_STD)
else()
  message(STATUS "bench idset: no C++ compiler, the std::set_* rows are skipped")
endif()
find_path(ARK_ROARING_INCLUDE roaring/roaring.h)
find_library(ARK_ROARING_LIB roaring)
find_path(ARK_JUDY_INCLUDE Judy.h)
find_library(ARK_JUDY_LIB Judy)
if(ARK_ROARING_INCLUDE AND ARK_ROARING_LIB AND ARK_JUDY_INCLUDE AND ARK_JUDY_LIB)
  add_executable(bench_idset_peers ${CMAKE_CURRENT_LIST_DIR}/idset_peers.c)
  target_include_directories(bench_idset_peers PRIVATE
    ${ARK_ROARING_INCLUDE} ${ARK_JUDY_INCLUDE})
  target_link_libraries(bench_idset_peers PRIVATE
    ${ARK_ROARING_LIB} ${ARK_JUDY_LIB} m)
  target_compile_options(bench_idset_peers PRIVATE -Wall -Wextra)
  if(ARK_TESTS)
    add_test(NAME bench.bench_idset_peers.smoke
             COMMAND bench_idset_peers --mode smoke)
  endif()
else()
  message(STATUS "bench_idset_peers skipped: libroaring-dev and libjudy-dev not both found")
endif()
