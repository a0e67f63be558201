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
