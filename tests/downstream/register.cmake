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
    "-DLIBRARY_TYPE=$<TARGET_PROPERTY:redlock,TYPE>"
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

# shared_library_quickstart (label `package`): a second build of this source
# tree with -DBUILD_SHARED_LIBS=ON (library only), installed into a scratch
# prefix; checks the SONAME, the symlinks and the export list, then builds
# the README quickstart against it and checks that the program needs and
# loads libredlock.so.<soversion>. See shared_check.cmake for the steps; the
# fixture shared_quickstart_built lets shared_library.Quickstart run that
# program against real nodes (tests/CMakeLists.txt). Same compiler and flags
# as downstream_find_package, for the same reasons.
#
# Registered only on Linux, where SONAME, readelf and ldd have the meaning
# the checks rely on, and only in builds without sanitizers: what it checks
# (the file names, the SONAME, which symbols are exported, that a consumer
# links and loads the shared object) does not change with instrumentation,
# the library code it runs is the same objects the sanitized unit and
# integration suites already run, and a sanitized second build of the library
# would only add minutes to those stages.
if(CMAKE_SYSTEM_NAME STREQUAL "Linux" AND NOT REDLOCK_SANITIZE)
  # CMAKE_PREFIX_PATH is a list; add_test would split it into arguments.
  string(REPLACE ";" "|" _redlock_prefix_path "${CMAKE_PREFIX_PATH}")
  add_test(NAME shared_library_quickstart
    COMMAND "${CMAKE_COMMAND}"
      "-DREDLOCK_SOURCE_DIR=${PROJECT_SOURCE_DIR}"
      "-DDOWNSTREAM_SOURCE_DIR=${CMAKE_CURRENT_LIST_DIR}"
      "-DWORK_DIR=${CMAKE_CURRENT_BINARY_DIR}/shared_library"
      "-DCONFIG=$<CONFIG>"
      "-DPROJECT_VERSION=$<TARGET_PROPERTY:redlock,VERSION>"
      "-DSOVERSION=$<TARGET_PROPERTY:redlock,SOVERSION>"
      "-DCXX_COMPILER=${CMAKE_CXX_COMPILER}"
      "-DCXX_FLAGS=${CMAKE_CXX_FLAGS}"
      "-DEXE_LINKER_FLAGS=${CMAKE_EXE_LINKER_FLAGS}"
      "-DSHARED_LINKER_FLAGS=${CMAKE_SHARED_LINKER_FLAGS}"
      "-DDEPENDENCY_PREFIX_PATH=${_redlock_prefix_path}"
      "-DGENERATOR=${CMAKE_GENERATOR}"
      "-DMAKE_PROGRAM=${CMAKE_MAKE_PROGRAM}"
      "-DSANITIZE=${REDLOCK_SANITIZE}"
      "-DWERROR=${REDLOCK_WERROR}"
      -DJOBS=2
      -P "${CMAKE_CURRENT_LIST_DIR}/shared_check.cmake")
  # A configure, the library's ~40 sources compiled with two jobs (on a
  # loaded machine, a few minutes) and a small consumer build: bounded.
  set_tests_properties(shared_library_quickstart PROPERTIES
    LABELS "package"
    TIMEOUT 900
    FIXTURES_SETUP shared_quickstart_built)
  unset(_redlock_prefix_path)
else()
  message(STATUS "redlock: shared_library_quickstart not registered (not Linux, or sanitized)")
endif()
