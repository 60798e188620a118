# SPDX-License-Identifier: MIT
# C++ peers of ark_idmap (bench_idmap_peers.cpp): std::unordered_map always,
# boost::unordered_flat_map when Debian's libboost1.81-dev is installed and
# absl::flat_hash_map when libabsl-dev is (both listed in idmap.deps).
# Built only with -DARK_BENCH_PEERS=ON (bench/run.sh sets it), so
# `make test` needs no C++ package.
option(ARK_BENCH_PEERS "Build the benchmarks' peer programs" OFF)
if(ARK_BENCH_PEERS)
  include(CheckLanguage)
  check_language(CXX)
  if(NOT CMAKE_CXX_COMPILER)
    message(STATUS "bench idmap: no C++ compiler, C++ peers skipped (install g++)")
    return()
  endif()
  enable_language(CXX)
  add_executable(bench_idmap_peers ${CMAKE_CURRENT_SOURCE_DIR}/bench_idmap_peers.cpp)
  target_include_directories(bench_idmap_peers PRIVATE ${CMAKE_CURRENT_SOURCE_DIR})
  target_compile_features(bench_idmap_peers PRIVATE cxx_std_17)
  target_compile_options(bench_idmap_peers PRIVATE -Wall -Wextra)
  string(STRIP "${CMAKE_CXX_FLAGS} ${CMAKE_CXX_FLAGS_${ARK_BENCH_CONFIG}}" ARK_BENCH_CXX_FLAGS)
  target_compile_definitions(bench_idmap_peers PRIVATE "ARK_BENCH_FLAGS=\"${ARK_BENCH_CXX_FLAGS}\"")
  target_link_libraries(bench_idmap_peers PRIVATE ark) # its --pair mode
  find_package(absl CONFIG QUIET)
  if(absl_FOUND)
    target_compile_definitions(bench_idmap_peers PRIVATE ARK_BENCH_HAVE_ABSL)
    target_link_libraries(bench_idmap_peers PRIVATE absl::flat_hash_map absl::hash)
  else()
    message(STATUS "bench idmap: absl::flat_hash_map skipped (install libabsl-dev)")
  endif()
  include(CheckIncludeFileCXX)
  check_include_file_cxx(boost/unordered/unordered_flat_map.hpp ARK_HAVE_BOOST_FLAT)
  if(ARK_HAVE_BOOST_FLAT)
    target_compile_definitions(bench_idmap_peers PRIVATE ARK_BENCH_HAVE_BOOST)
  else()
    message(STATUS "bench idmap: boost::unordered_flat_map skipped (install libboost1.81-dev)")
  endif()
  if(ARK_TESTS)
    add_test(NAME bench.bench_idmap_peers.smoke COMMAND bench_idmap_peers --mode smoke)
    add_test(NAME bench.bench_idmap_peers.pair
             COMMAND bench_idmap_peers --pair 3 1000 std_unordered)
  endif()
endif()
