# SPDX-License-Identifier: MIT
# bench_pool_cpp.cpp: the pool workloads through ark.hpp and through the
# C API in one process (section pool_cpp). Built whenever a C++ compiler
# is found, so `make bench` always measures the wrapper; the library and
# `make test` need no C++ compiler.
include(CheckLanguage)
check_language(CXX)
if(NOT CMAKE_CXX_COMPILER)
  message(STATUS "bench pool_cpp: no C++ compiler, ark.hpp bench skipped")
  return()
endif()
enable_language(CXX)
add_executable(bench_pool_cpp ${CMAKE_CURRENT_SOURCE_DIR}/bench_pool_cpp.cpp)
target_include_directories(bench_pool_cpp PRIVATE ${CMAKE_CURRENT_SOURCE_DIR})
target_link_libraries(bench_pool_cpp PRIVATE ark)
target_compile_features(bench_pool_cpp PRIVATE cxx_std_17)
target_compile_options(bench_pool_cpp PRIVATE -Wall -Wextra)
if(ARK_TESTS)
  add_test(NAME bench.bench_pool_cpp.smoke
           COMMAND ${ARK_TEST_LAUNCHER} $<TARGET_FILE:bench_pool_cpp> --mode smoke)
  set_tests_properties(bench.bench_pool_cpp.smoke PROPERTIES LABELS cpp)
endif()
