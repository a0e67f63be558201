# Registers the ctest test `downstream_find_package` (label `package`):
# install this build tree into a scratch prefix, then build tests/downstream
# against it twice, with find_package(redlock CONFIG) and with pkg-config,
# and run both programs. See run.cmake for the steps.
#
# Included from tests/CMakeLists.txt after the redlock target exists.
if(NOT REDLOCK_INSTALL)
  message(STATUS "redlock: downstream_find_package not registered (REDLOCK_INSTALL is OFF)")
  return()
endif()

# The scratch prefix lives in this build tree, so build/ and build-asan/
# never share one. A sanitized static archive needs the consumer linked with
# the same -fsanitize, hence SANITIZE; the compiler and the user's global
# flags are passed on for the same reason (e.g. clang with -stdlib=libc++).
add_test(NAME downstream_find_package
  COMMAND "${CMAKE_COMMAND}"
    "-DREDLOCK_BUILD_DIR=${PROJECT_BINARY_DIR}"
    "-DDOWNSTREAM_SOURCE_DIR=${CMAKE_CURRENT_LIST_DIR}"
    "-DWORK_DIR=${CMAKE_CURRENT_BINARY_DIR}/downstream"
    "-DCONFIG=$<CONFIG>"
    "-DLIBRARY_TYPE=$<TARGET_PROPERTY:redlock,TYPE>"
    "-DCXX_COMPILER=${CMAKE_CXX_COMPILER}"
    "-DCXX_FLAGS=${CMAKE_CXX_FLAGS}"
    "-DEXE_LINKER_FLAGS=${CMAKE_EXE_LINKER_FLAGS}"
    "-DGENERATOR=${CMAKE_GENERATOR}"
    "-DMAKE_PROGRAM=${CMAKE_MAKE_PROGRAM}"
    "-DSANITIZE=${REDLOCK_SANITIZE}"
    -P "${CMAKE_CURRENT_LIST_DIR}/run.cmake")
# A configure and two small builds: generous, but bounded.
set_tests_properties(downstream_find_package PROPERTIES LABELS "package" TIMEOUT 600)

add_test(NAME readme_quickstart_is_tested
  COMMAND "${CMAKE_COMMAND}"
    "-DREADME=${PROJECT_SOURCE_DIR}/README.md"
    "-DMAIN_CPP=${CMAKE_CURRENT_LIST_DIR}/main.cpp"
    -P "${CMAKE_CURRENT_LIST_DIR}/readme_check.cmake")
set_tests_properties(readme_quickstart_is_tested PROPERTIES LABELS "package")

# deb_package (label `package`): `cpack -G DEB` in this build tree, check the
# package's Depends and contents with dpkg-deb, extract it with dpkg -x and
# build the README quickstart against the extracted /usr. See deb_check.cmake.
# Skipped where dpkg-deb is missing. Same compiler, flags and sanitizers as
# downstream_find_package, for the same reasons.
add_test(NAME deb_package
  COMMAND "${CMAKE_COMMAND}"
    "-DREDLOCK_BUILD_DIR=${PROJECT_BINARY_DIR}"
    "-DDOWNSTREAM_SOURCE_DIR=${CMAKE_CURRENT_LIST_DIR}"
    "-DWORK_DIR=${CMAKE_CURRENT_BINARY_DIR}/deb_package"
    "-DCONFIG=$<CONFIG>"
    "-DCPACK_COMMAND=${CMAKE_CPACK_COMMAND}"
    "-DPROJECT_VERSION=${PROJECT_VERSION}"
    "-DCXX_COMPILER=${CMAKE_CXX_COMPILER}"
    "-DCXX_FLAGS=${CMAKE_CXX_FLAGS}"
    "-DEXE_LINKER_FLAGS=${CMAKE_EXE_LINKER_FLAGS}"
    "-DGENERATOR=${CMAKE_GENERATOR}"
    "-DMAKE_PROGRAM=${CMAKE_MAKE_PROGRAM}"
    "-DSANITIZE=${REDLOCK_SANITIZE}"
    -P "${CMAKE_CURRENT_LIST_DIR}/deb_check.cmake")
# cpack and `cmake --install` both run this tree's install scripts (and
# write its install manifest): never at the same time.
set_tests_properties(deb_package downstream_find_package PROPERTIES
  RESOURCE_LOCK redlock_build_tree_install)
set_tests_properties(deb_package PROPERTIES
  LABELS "package"
  TIMEOUT 600
  SKIP_REGULAR_EXPRESSION "deb_package: SKIPPED:")

# docker_compose_config (label `package`): docker/docker-compose.yml parses,
# checked by `docker-compose config -q` or `docker compose config -q`, neither
# of which needs a Docker engine. Skipped (exit 77) when neither works here;
# installs nothing.
add_test(NAME docker_compose_config
  COMMAND /bin/sh "${PROJECT_SOURCE_DIR}/docker/check-compose.sh"
    "${PROJECT_SOURCE_DIR}/docker/docker-compose.yml")
set_tests_properties(docker_compose_config PROPERTIES
  LABELS "package"
  TIMEOUT 120
  SKIP_RETURN_CODE 77)
