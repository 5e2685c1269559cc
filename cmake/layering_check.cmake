# Fails when a source file includes a project header from a layer it may not depend on. The
# layers and their arrows (a layer may include itself and what its arrows reach, transitively):
#
#   model                                   (std only)
#   impl/core      -> model
#   impl/store     -> impl/core             (the in-process stores and the Redis ones)
#   impl/limiters  -> impl/store
#   impl/drivers   -> impl/limiters         (the stores the live runtimes open: Redis, PostgreSQL)
#   impl/rules     -> impl/limiters
#   impl/service   -> impl/rules, impl/drivers
#   judge          -> impl/core             (the checks, and judging real concurrency)
#   sim            -> impl/service, judge
#   live           -> sim                   (stress and probe: real threads, sockets, servers)
#   reports        -> live
#   cli            -> reports
#   api            -> reports               (the C++ API's library: ratelab/check.h)
#
# The simulator and the judges talk to no real server: sim/ and judge/ may not include the
# headers of the Redis and PostgreSQL clients and servers, the stores' drivers, the rules' store
# on PostgreSQL, or `serve` (the build checks the same of their links: ratelab_forbid_links).
#
# Tests (*_test.cc, and their *_test_util.h) may also include testing/. property-tests/ and bench/ may include any
# library layer, and so may fuzz/; bench/ may include testing/'s header-only helpers too (it is
# built without the tests, so never links testing/); testing/ may include impl/ (to impl/rules).
# Run as: cmake -DROOT=... -P layering_check.cmake
set(below_model "model")
set(below_impl/core "model;impl/core")
set(below_impl/store "${below_impl/core};impl/store")
set(below_impl/limiters "${below_impl/store};impl/limiters")
set(below_impl/drivers "${below_impl/limiters};impl/drivers")
set(below_impl/rules "${below_impl/limiters};impl/rules")
set(below_impl/service "${below_impl/rules};impl/drivers;impl/service")
set(below_judge "${below_impl/core};judge")
set(below_sim "${below_impl/service};judge;sim")
set(below_live "${below_sim};live")
set(below_reports "${below_live};reports")
set(below_cli "${below_reports};cli")
set(below_api "${below_reports};api")
set(below_testing "${below_impl/rules};testing")
set(below_property-tests "${below_reports};property-tests;testing")
set(below_bench "${below_reports};bench;testing")
set(below_fuzz "${below_reports};fuzz")

set(problems "")
set(count 0)
foreach(layer model impl/core impl/store impl/limiters impl/drivers impl/rules impl/service judge sim live reports cli api testing
              property-tests bench fuzz)
  file(GLOB_RECURSE sources ${ROOT}/${layer}/*.h ${ROOT}/${layer}/*.cc ${ROOT}/${layer}/*.c)
  foreach(source ${sources})
    math(EXPR count "${count} + 1")
    set(allowed ${below_${layer}})
    if(source MATCHES "(_test\\.cc|_test_util\\.h)$")
      list(APPEND allowed testing)
    endif()
    file(STRINGS ${source} includes REGEX "^#include \"")
    foreach(line ${includes})
      string(REGEX REPLACE "^#include \"([^\"]+)\".*" "\\1" header "${line}")
      if(NOT header MATCHES "/")
        continue()  # generated headers (ratelab_version.h)
      endif()
      # The header's layer: impl/X for impl, else its top folder; absl/ and the like are not ours.
      if(header MATCHES "^impl/([^/]+)/")
        set(target_layer "impl/${CMAKE_MATCH_1}")
      else()
        string(REGEX REPLACE "/.*" "" target_layer "${header}")
      endif()
      if(NOT target_layer MATCHES "^(model|impl/.*|judge|sim|live|reports|cli|api|testing|property-tests|bench|fuzz)$")
        continue()
      endif()
      list(FIND allowed "${target_layer}" at)
      if(layer MATCHES "^(sim|judge)$" AND header MATCHES
         "^impl/(store/(redis_(kv|cluster|pipeline|server)|postgres_)|drivers/|rules/postgres_|service/(serve|live_rules)[.])")
        set(at -1)
      endif()
      if(at EQUAL -1)
        file(RELATIVE_PATH rel ${ROOT} ${source})
        string(APPEND problems "  ${rel} (${layer}) includes ${header} (${target_layer})\n")
      endif()
    endforeach()
  endforeach()
endforeach()
if(NOT problems STREQUAL "")
  message(FATAL_ERROR "Includes against the layering (see cmake/layering_check.cmake):\n${problems}")
endif()
message(STATUS "layering check: ${count} files keep to their layers")
