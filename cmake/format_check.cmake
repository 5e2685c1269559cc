# Fails when any C++ source under the project's folders is not clang-formatted.
# Run as: cmake -DCLANG_FORMAT=... -DROOT=... -P format_check.cmake
file(GLOB_RECURSE sources
     ${ROOT}/model/*.h ${ROOT}/model/*.cc ${ROOT}/impl/*.h ${ROOT}/impl/*.cc
     ${ROOT}/sim/*.h ${ROOT}/sim/*.cc ${ROOT}/reports/*.h ${ROOT}/reports/*.cc
     ${ROOT}/cli/*.h ${ROOT}/cli/*.cc ${ROOT}/property-tests/*.h ${ROOT}/property-tests/*.cc
     ${ROOT}/bench/*.h ${ROOT}/bench/*.cc ${ROOT}/testing/*.h ${ROOT}/testing/*.cc
     ${ROOT}/fuzz/*.h ${ROOT}/fuzz/*.cc ${ROOT}/judge/*.h ${ROOT}/judge/*.cc ${ROOT}/live/*.h
     ${ROOT}/live/*.cc ${ROOT}/api/*.h ${ROOT}/api/*.cc ${ROOT}/examples/*.h ${ROOT}/examples/*.cc)
execute_process(COMMAND ${CLANG_FORMAT} --style=file --dry-run --Werror ${sources}
                RESULT_VARIABLE rc ERROR_VARIABLE err)
if(NOT rc EQUAL 0)
  message(FATAL_ERROR "Files need clang-format (run scripts/format):\n${err}")
endif()
list(LENGTH sources n)
message(STATUS "format check: ${n} files clean")
