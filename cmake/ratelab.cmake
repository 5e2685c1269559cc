# The one helper every folder uses to declare its library, tests and binaries.
#
#   ratelab_library(NAME <name> SOURCES ... [DEPS ...])
#       A static library `ratelab_<name>` with the alias `ratelab::<name>`.
#   ratelab_test(NAME <name> SOURCES ... [DEPS ...] [ENV VAR=VALUE ...] [KIND unit|property])
#       A GoogleTest binary; each of its tests becomes one CTest entry, labelled KIND (unit by
#       default) and server or slow as cmake/test_labels.cmake lists it.
#   ratelab_binary(NAME <name> SOURCES ... [DEPS ...])
#       An executable.
include_guard(GLOBAL)
include(GoogleTest)

function(_ratelab_common target)
  target_compile_features(${target} PUBLIC cxx_std_20)
  target_compile_options(${target} PRIVATE -Wall -Wextra -Wpedantic)
  if(RATELAB_WERROR)
    target_compile_options(${target} PRIVATE -Werror)
  endif()
  if(CMAKE_UNITY_BUILD AND CMAKE_CXX_COMPILER_ID STREQUAL "GNU")
    # In a unity build GCC takes a coroutine frame holding an awaiter from one file's anonymous
    # namespace as used outside it (a false positive: the files are one translation unit).
    target_compile_options(${target} PRIVATE -Wno-subobject-linkage)
  endif()
  if(RATELAB_SANITIZE)
    target_compile_options(${target} PRIVATE -fsanitize=${RATELAB_SANITIZE}
      -fno-omit-frame-pointer -fno-sanitize-recover=all)
    target_link_options(${target} PRIVATE -fsanitize=${RATELAB_SANITIZE})
    if(CMAKE_CXX_COMPILER_ID STREQUAL "GNU")
      # GCC's flow analysis under the sanitizers warns of uninitialised std::function members
      # inside std::regex (a false positive), so that one warning is not an error there.
      target_compile_options(${target} PRIVATE -Wno-maybe-uninitialized)
    endif()
  endif()
  if(RATELAB_BUILD_FUZZERS AND NOT ARGV1 STREQUAL "test")
    # Coverage for libFuzzer in all of ratelab's code (not the tests'); the fuzzers link the
    # fuzzer's main.
    # Clang 14 cannot emit coverage beside -fsanitize=function's prologue in a coroutine
    # ("Cannot represent a difference across sections"), so that one check is left out here.
    target_compile_options(${target} PRIVATE -fsanitize=fuzzer-no-link -fno-sanitize=function)
  endif()
endfunction()

# A libFuzzer target fuzz_<NAME> from fuzz/<NAME>.cc, and its short run as the CTest test
# fuzz_<NAME>: RUNS inputs from seed 1, starting from fuzz/corpus/<NAME>/, with the flags in
# fuzz/defaults.options, then fuzz/<NAME>.options and fuzz/<NAME>.dict when there are (scripts/fuzz
# uses the same). New inputs go
# to the build tree, never into the repository's corpus.
function(ratelab_fuzzer)
  cmake_parse_arguments(ARG "" "NAME;RUNS" "DEPS" ${ARGN})
  set(target fuzz_${ARG_NAME})
  add_executable(${target} ${ARG_NAME}.cc)
  target_link_libraries(${target} PRIVATE ${ARG_DEPS})
  _ratelab_common(${target})
  target_compile_options(${target} PRIVATE -fsanitize=fuzzer)
  target_link_options(${target} PRIVATE -fsanitize=fuzzer)
  set(dict "")
  if(EXISTS ${CMAKE_CURRENT_SOURCE_DIR}/${ARG_NAME}.dict)
    set(dict -dict=${CMAKE_CURRENT_SOURCE_DIR}/${ARG_NAME}.dict)
  endif()
  file(STRINGS ${CMAKE_CURRENT_SOURCE_DIR}/defaults.options options REGEX "^-")
  if(EXISTS ${CMAKE_CURRENT_SOURCE_DIR}/${ARG_NAME}.options)
    file(STRINGS ${CMAKE_CURRENT_SOURCE_DIR}/${ARG_NAME}.options own REGEX "^-")
    list(APPEND options ${own})
  endif()
  separate_arguments(options UNIX_COMMAND "${options}")
  set(found ${CMAKE_CURRENT_BINARY_DIR}/short/${ARG_NAME})
  add_test(NAME ${target} COMMAND sh -c
    "rm -rf \"$1\" && mkdir -p \"$1\" && shift && exec \"$@\""
    sh ${found} $<TARGET_FILE:${target}> -seed=1 -runs=${ARG_RUNS} ${options} ${dict}
    -artifact_prefix=${found}-
    ${found} ${CMAKE_CURRENT_SOURCE_DIR}/corpus/${ARG_NAME})
  set_tests_properties(${target} PROPERTIES LABELS "unit;slow")
endfunction()

function(ratelab_library)
  cmake_parse_arguments(ARG "" "NAME" "SOURCES;DEPS" ${ARGN})
  set(target ratelab_${ARG_NAME})
  add_library(${target} STATIC ${ARG_SOURCES})
  add_library(ratelab::${ARG_NAME} ALIAS ${target})
  target_include_directories(${target} PUBLIC ${PROJECT_SOURCE_DIR})
  target_link_libraries(${target} PUBLIC ${ARG_DEPS})
  _ratelab_common(${target})
endfunction()

function(ratelab_test)
  cmake_parse_arguments(ARG "" "NAME;KIND" "SOURCES;DEPS;ENV" ${ARGN})
  if(NOT ARG_KIND)
    set(ARG_KIND unit)
  endif()
  add_executable(${ARG_NAME} ${ARG_SOURCES})
  target_link_libraries(${ARG_NAME} PRIVATE ${ARG_DEPS} GTest::gtest GTest::gmock GTest::gtest_main)
  _ratelab_common(${ARG_NAME} test)
  # A test's own code is built to build quickly: optimising it is most of its compile time (a
  # quarter of it is saved at -O1 against -O2, and under the sanitizers nearly two thirds at -O0
  # against -O1), while its run is spent in the libraries it tests, which keep the build's level.
  if(RATELAB_SANITIZE)
    target_compile_options(${ARG_NAME} PRIVATE -O0)
  elseif(CMAKE_BUILD_TYPE MATCHES "^(Release|RelWithDebInfo)$")
    target_compile_options(${ARG_NAME} PRIVATE -O1)
  endif()
  gtest_discover_tests(${ARG_NAME} DISCOVERY_TIMEOUT 60 TEST_LIST ${ARG_NAME}_TESTS
                       PROPERTIES ENVIRONMENT "${ARG_ENV}")
  # Once CTest has the binary's tests, each gets its labels (cmake/test_labels.cmake).
  set(labels ${CMAKE_CURRENT_BINARY_DIR}/${ARG_NAME}_labels.cmake)
  file(WRITE ${labels}
    "set(RATELAB_LABELS_TESTS \"\${${ARG_NAME}_TESTS}\")\n"
    "set(RATELAB_LABELS_KIND ${ARG_KIND})\n"
    "include(${PROJECT_SOURCE_DIR}/cmake/test_labels.cmake)\n")
  set_property(DIRECTORY APPEND PROPERTY TEST_INCLUDE_FILES ${labels})
endfunction()

function(ratelab_binary)
  cmake_parse_arguments(ARG "" "NAME" "SOURCES;DEPS" ${ARGN})
  add_executable(${ARG_NAME} ${ARG_SOURCES})
  target_link_libraries(${ARG_NAME} PRIVATE ${ARG_DEPS})
  _ratelab_common(${ARG_NAME})
endfunction()

# Fails the configure when `TARGET` links, directly or through any target it links, one of
# `FORBID` (targets or imported libraries): the build's own arrows, beside the includes'
# (cmake/layering_check.cmake). Call once every target is defined.
function(ratelab_forbid_links)
  cmake_parse_arguments(ARG "" "TARGET" "FORBID" ${ARGN})
  set(seen "")
  set(queue ${ARG_TARGET})
  while(queue)
    list(POP_FRONT queue t)
    if(t IN_LIST seen OR NOT TARGET ${t})
      continue()
    endif()
    list(APPEND seen ${t})
    get_target_property(aliased ${t} ALIASED_TARGET)
    if(aliased)
      list(APPEND queue ${aliased})
      continue()
    endif()
    get_target_property(links ${t} INTERFACE_LINK_LIBRARIES)
    if(links)
      foreach(link IN LISTS links)
        if(link IN_LIST ARG_FORBID)
          message(FATAL_ERROR "${ARG_TARGET} links ${link} (through ${t}), which it must not")
        endif()
        list(APPEND queue ${link})
      endforeach()
    endif()
  endwhile()
endfunction()
