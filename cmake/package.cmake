# Installing ratelab where Debian's conventions put things, and packaging it as a .deb
# (`cpack -G DEB` in the build tree: ratelab_VERSION_ARCH.deb). The binary needs no file of the
# source or build tree; what it is given (scenarios, scripts, adapters) is installed beside it
# for users to start from:
#   /usr/bin/ratelab
#   /usr/lib/ratelab/libratelab_virtual_time.so      preloaded into a private redis-server
#   /usr/share/man/man1/ratelab.1.gz                 `ratelab man`
#   /usr/share/bash-completion/completions/ratelab   `ratelab completion`
#   /usr/share/doc/ratelab/                          README.md, docs/ and copyright
#   /usr/share/ratelab/{examples,scenarios,adapters}/
#   /usr/share/ratelab/ci/                          ratelab-ci, the CI step; the GitLab template
#   /usr/include/ratelab/{check,gtest,rapidcheck}.h  the C++ API (docs/cpp-api.md)
#   /usr/lib/libratelab_check.so*                    its library
#   /usr/lib/cmake/ratelab/                          find_package(ratelab CONFIG): ratelab::check
include(CMakePackageConfigHelpers)

# The man page and the completion come from the binary's own option tables.
set(generated ${PROJECT_BINARY_DIR}/generated)
add_custom_command(OUTPUT ${generated}/ratelab.1.gz
  COMMAND $<TARGET_FILE:ratelab> man > ${generated}/ratelab.1
  COMMAND gzip -9nf ${generated}/ratelab.1
  DEPENDS ratelab VERBATIM)
add_custom_command(OUTPUT ${generated}/ratelab.bash
  COMMAND $<TARGET_FILE:ratelab> completion > ${generated}/ratelab.bash
  DEPENDS ratelab VERBATIM)
add_custom_target(ratelab_docs ALL DEPENDS ${generated}/ratelab.1.gz ${generated}/ratelab.bash)

install(TARGETS ratelab RUNTIME DESTINATION ${CMAKE_INSTALL_BINDIR})
# The C++ API: its library, its headers, and the CMake package that finds them.
install(TARGETS ratelab_check EXPORT ratelabTargets
        LIBRARY DESTINATION ${CMAKE_INSTALL_LIBDIR}
        INCLUDES DESTINATION ${CMAKE_INSTALL_INCLUDEDIR})
install(FILES api/ratelab/check.h api/ratelab/gtest.h api/ratelab/rapidcheck.h
        DESTINATION ${CMAKE_INSTALL_INCLUDEDIR}/ratelab)
set(cmake_package ${CMAKE_INSTALL_LIBDIR}/cmake/ratelab)
install(EXPORT ratelabTargets NAMESPACE ratelab:: DESTINATION ${cmake_package})
file(WRITE ${generated}/ratelabConfig.cmake
     "include(\"\${CMAKE_CURRENT_LIST_DIR}/ratelabTargets.cmake\")\n")
# 0.x: a minor version may break the API (docs/cpp-api.md).
write_basic_package_version_file(${generated}/ratelabConfigVersion.cmake
                                 COMPATIBILITY SameMinorVersion)
install(FILES ${generated}/ratelabConfig.cmake ${generated}/ratelabConfigVersion.cmake
        DESTINATION ${cmake_package})
# The shim a private redis-server is started with, to run on virtual time, where the binary looks
# for it (../lib/ratelab from /usr/bin).
install(TARGETS ratelab_virtual_time LIBRARY DESTINATION lib/ratelab)
install(FILES ${generated}/ratelab.1.gz DESTINATION ${CMAKE_INSTALL_MANDIR}/man1)
install(FILES ${generated}/ratelab.bash DESTINATION ${CMAKE_INSTALL_DATADIR}/bash-completion/completions
        RENAME ratelab)
install(FILES README.md DESTINATION ${CMAKE_INSTALL_DOCDIR})
# Debian's policy (12.5): the package's copyright and licence, as /usr/share/doc/ratelab/copyright.
install(FILES cmake/package-copyright DESTINATION ${CMAKE_INSTALL_DOCDIR} RENAME copyright)
install(DIRECTORY docs/ DESTINATION ${CMAKE_INSTALL_DOCDIR})
install(DIRECTORY examples scenarios ci DESTINATION ${CMAKE_INSTALL_DATADIR}/ratelab
        USE_SOURCE_PERMISSIONS)
# The adapters' sources and their lock file, not what building them left (bin/, classes/,
# node_modules/).
install(DIRECTORY adapters DESTINATION ${CMAKE_INSTALL_DATADIR}/ratelab USE_SOURCE_PERMISSIONS
        PATTERN bin EXCLUDE PATTERN classes EXCLUDE PATTERN node_modules EXCLUDE)

set(CPACK_GENERATOR DEB)
set(CPACK_PACKAGE_NAME ratelab)
set(CPACK_PACKAGE_VERSION ${PROJECT_VERSION})
set(CPACK_PACKAGE_CONTACT "ratelab maintainers <maintainers@ratelab.invalid>")
set(CPACK_PACKAGE_DESCRIPTION_SUMMARY
    "deterministic simulation and verification harness for rate limiters")
set(CPACK_PACKAGE_DESCRIPTION
    "ratelab runs real rate-limiter implementations (in process, Redis and Lua, PostgreSQL, \
HTTP services, your own script or library) beside reference models on a virtual clock, under \
concurrency, restarts, store faults and clock skew, and checks what they promise: never more \
than N per window, bucket conformance, exact Retry-After, no false denials. Every run prints \
its seed; the same seed gives the same result.")
set(CPACK_DEBIAN_FILE_NAME DEB-DEFAULT)  # ratelab_VERSION_ARCH.deb
set(CPACK_DEBIAN_PACKAGE_SECTION devel)
set(CPACK_DEBIAN_PACKAGE_PRIORITY optional)
# Depends: the shared libraries the binary links, as dpkg-shlibdeps names their packages.
set(CPACK_DEBIAN_PACKAGE_SHLIBDEPS ON)
# The servers the checks of real stores start, and what draws the reports' plots.
set(CPACK_DEBIAN_PACKAGE_RECOMMENDS "redis-server, postgresql, gnuplot-nox | gnuplot")
set(CPACK_STRIP_FILES ON)
# The package holds what `install` puts in place, nothing else.
set(CPACK_SET_DESTDIR OFF)
set(CPACK_PACKAGING_INSTALL_PREFIX /usr)
include(CPack)
