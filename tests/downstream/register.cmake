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
# tree with -DBUILD_SHARED_LIBS=ON (its library and static archive;
# deb_packages builds the rest of that tree), installed into a scratch
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
  # The libdir a /usr prefix has on this system (Debian's multiarch
  # directory), which tests/CMakeLists.txt puts on the loader path too.
  if(CMAKE_LIBRARY_ARCHITECTURE)
    set(REDLOCK_SHARED_TEST_LIBDIR "lib/${CMAKE_LIBRARY_ARCHITECTURE}")
  else()
    set(REDLOCK_SHARED_TEST_LIBDIR "lib")
  endif()
  # CMAKE_PREFIX_PATH is a list; add_test would split it into arguments.
  string(REPLACE ";" "|" _redlock_prefix_path "${CMAKE_PREFIX_PATH}")
  # The build type's own flags too (scripts/test's -O2 -g1, not CMake's
  # default -O2 -g, which costs the second build a third more time).
  set(_redlock_config_flags "")
  if(CMAKE_BUILD_TYPE)
    string(TOUPPER "${CMAKE_BUILD_TYPE}" _redlock_config)
    set(_redlock_config_flags "${CMAKE_CXX_FLAGS_${_redlock_config}}")
  endif()
  add_test(NAME shared_library_quickstart
    COMMAND "${CMAKE_COMMAND}"
      "-DREDLOCK_SOURCE_DIR=${PROJECT_SOURCE_DIR}"
      "-DDOWNSTREAM_SOURCE_DIR=${CMAKE_CURRENT_LIST_DIR}"
      "-DWORK_DIR=${CMAKE_CURRENT_BINARY_DIR}/shared_library"
      "-DCONFIG=$<CONFIG>"
      "-DPROJECT_VERSION=$<TARGET_PROPERTY:redlock,VERSION>"
      "-DSOVERSION=$<TARGET_PROPERTY:redlock,SOVERSION>"
      "-DLIBDIR=${REDLOCK_SHARED_TEST_LIBDIR}"
      "-DCXX_COMPILER=${CMAKE_CXX_COMPILER}"
      "-DCXX_FLAGS=${CMAKE_CXX_FLAGS}"
      "-DCONFIG_CXX_FLAGS=${_redlock_config_flags}"
      "-DEXE_LINKER_FLAGS=${CMAKE_EXE_LINKER_FLAGS}"
      "-DSHARED_LINKER_FLAGS=${CMAKE_SHARED_LINKER_FLAGS}"
      "-DDEPENDENCY_PREFIX_PATH=${_redlock_prefix_path}"
      "-DGENERATOR=${CMAKE_GENERATOR}"
      "-DMAKE_PROGRAM=${CMAKE_MAKE_PROGRAM}"
      "-DSANITIZE=${REDLOCK_SANITIZE}"
      "-DWERROR=${REDLOCK_WERROR}"
      "-DUNITY=${CMAKE_UNITY_BUILD}"
      -DJOBS=2
      -P "${CMAKE_CURRENT_LIST_DIR}/shared_check.cmake")
  # A configure, the library's ~40 sources compiled with two jobs (on a
  # loaded machine, a few minutes) and a small consumer build: bounded.
  # COST: the longest chain of the suite (this build, then deb_packages on
  # it) starts first, so that it runs beside the other tests instead of
  # after them; ctest has no cost data yet in a fresh clone.
  set_tests_properties(shared_library_quickstart PROPERTIES
    LABELS "package"
    TIMEOUT 900
    COST 100000
    FIXTURES_SETUP shared_quickstart_built)
  unset(_redlock_prefix_path)
  unset(_redlock_config_flags)

  # deb_packages (label `package`): the shared build above, with its tools
  # and Python binding built, packed with `cpack -G DEB` into libredlock<SO>,
  # libredlock-dev, redlock-tools and python3-redlock-quorum; each checked
  # with dpkg-deb and lintian, then all installed with dpkg -i, the README
  # quickstart built against /usr (find_package and pkg-config) and run
  # against three nodes by redlock_deb_quickstart_test (tests/CMakeLists.txt),
  # the Python module imported by /usr/bin/python3, and everything removed
  # with dpkg -r, also when a step failed. See deb_check.cmake. Skipped
  # without dpkg or root.
  add_test(NAME deb_packages
    COMMAND "${CMAKE_COMMAND}"
      "-DSHARED_BUILD_DIR=${CMAKE_CURRENT_BINARY_DIR}/shared_library/build"
      "-DDOWNSTREAM_SOURCE_DIR=${CMAKE_CURRENT_LIST_DIR}"
      "-DWORK_DIR=${CMAKE_CURRENT_BINARY_DIR}/deb_packages"
      "-DCONFIG=$<CONFIG>"
      "-DCPACK_COMMAND=${CMAKE_CPACK_COMMAND}"
      "-DPROJECT_VERSION=$<TARGET_PROPERTY:redlock,VERSION>"
      "-DSOVERSION=$<TARGET_PROPERTY:redlock,SOVERSION>"
      "-DQUICKSTART_TEST=$<TARGET_FILE:redlock_deb_quickstart_test>"
      "-DCXX_COMPILER=${CMAKE_CXX_COMPILER}"
      "-DCXX_FLAGS=${CMAKE_CXX_FLAGS}"
      "-DEXE_LINKER_FLAGS=${CMAKE_EXE_LINKER_FLAGS}"
      "-DGENERATOR=${CMAKE_GENERATOR}"
      "-DMAKE_PROGRAM=${CMAKE_MAKE_PROGRAM}"
      -DJOBS=2
      -P "${CMAKE_CURRENT_LIST_DIR}/deb_check.cmake")
  # The tools, the chaos harness and the Python module compiled in the shared
  # tree (the library is already built), lintian and a consumer build.
  set_tests_properties(deb_packages PROPERTIES
    LABELS "package"
    TIMEOUT 1200
    COST 90000
    FIXTURES_REQUIRED shared_quickstart_built
    SKIP_REGULAR_EXPRESSION "deb_packages: SKIPPED:")
else()
  message(STATUS "redlock: shared_library_quickstart not registered (not Linux, or sanitized)")
endif()
