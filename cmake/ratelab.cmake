# The one helper every folder uses to declare its library, tests and binaries.
#
#   ratelab_library(NAME <name> SOURCES ... [DEPS ...])
#       A static library `ratelab_<name>` with the alias `ratelab::<name>`.
#   ratelab_test(NAME <name> SOURCES ... [DEPS ...] [ENV VAR=VALUE ...])
#       A GoogleTest binary; each of its tests becomes one CTest entry.
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
  if(RATELAB_SANITIZE)
    # GCC's flow analysis under the sanitizers warns of uninitialised std::function members
    # inside std::regex (a false positive), so that one warning is not an error there.
    target_compile_options(${target} PRIVATE -fsanitize=${RATELAB_SANITIZE}
      -fno-omit-frame-pointer -fno-sanitize-recover=all -Wno-maybe-uninitialized)
    target_link_options(${target} PRIVATE -fsanitize=${RATELAB_SANITIZE})
  endif()
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
  cmake_parse_arguments(ARG "" "NAME" "SOURCES;DEPS;ENV" ${ARGN})
  add_executable(${ARG_NAME} ${ARG_SOURCES})
  target_link_libraries(${ARG_NAME} PRIVATE ${ARG_DEPS} GTest::gtest GTest::gmock GTest::gtest_main)
  _ratelab_common(${ARG_NAME})
  gtest_discover_tests(${ARG_NAME} DISCOVERY_TIMEOUT 60 PROPERTIES ENVIRONMENT "${ARG_ENV}")
endfunction()

function(ratelab_binary)
  cmake_parse_arguments(ARG "" "NAME" "SOURCES;DEPS" ${ARGN})
  add_executable(${ARG_NAME} ${ARG_SOURCES})
  target_link_libraries(${ARG_NAME} PRIVATE ${ARG_DEPS})
  _ratelab_common(${ARG_NAME})
endfunction()
