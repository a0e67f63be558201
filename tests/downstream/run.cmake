# The downstream_find_package test, run by ctest as `cmake -P` (arguments in
# register.cmake). Each step is fatal on failure:
#   1. cmake --install REDLOCK_BUILD_DIR --prefix WORK_DIR/prefix
#   2. configure and build tests/downstream with CMAKE_PREFIX_PATH=prefix,
#      check that it found this prefix's redlockConfig.cmake, run the program;
#   3. pkg-config --cflags --libs redlock (--static for a static library) with
#      PKG_CONFIG_PATH in the prefix; compile, link and run main.cpp with it.
# Run with no quorum file, the program must print an error and exit non-zero
# (no crash, no sanitizer report): proof that it linked and started, without
# needing a Redis server.
cmake_minimum_required(VERSION 3.20)

foreach(var REDLOCK_BUILD_DIR DOWNSTREAM_SOURCE_DIR WORK_DIR CXX_COMPILER GENERATOR)
  if(NOT DEFINED ${var} OR "${${var}}" STREQUAL "")
    message(FATAL_ERROR "run.cmake: -D${var}=... is required")
  endif()
endforeach()

set(CONSUMER_LABEL downstream)
include("${CMAKE_CURRENT_LIST_DIR}/consumer.cmake")

set(prefix "${WORK_DIR}/prefix")
set(build "${WORK_DIR}/build")
file(REMOVE_RECURSE "${WORK_DIR}")
file(MAKE_DIRECTORY "${WORK_DIR}")

set(config_args "")
if(CONFIG)
  set(config_args --config "${CONFIG}")
endif()

# 1. Install.
run_step("install" "${CMAKE_COMMAND}" --install "${REDLOCK_BUILD_DIR}" --prefix "${prefix}"
  ${config_args})

# 2. find_package(redlock CONFIG). The package registry is off so that only
# the scratch prefix (or a system copy, which the check below rejects) can
# satisfy it.
build_consumer("${prefix}" "${build}" app)
expect_config_error("${app}")

# 3. pkg-config.
find_program(PKG_CONFIG_EXECUTABLE NAMES pkg-config pkgconf REQUIRED)
file(GLOB_RECURSE pc_files "${prefix}/*/redlock.pc")
list(LENGTH pc_files pc_count)
if(NOT pc_count EQUAL 1)
  message(FATAL_ERROR "downstream: expected one redlock.pc under ${prefix}, found '${pc_files}'")
endif()
get_filename_component(pc_dir "${pc_files}" DIRECTORY)
get_filename_component(lib_dir "${pc_dir}" DIRECTORY)
if(DEFINED ENV{PKG_CONFIG_PATH} AND NOT "$ENV{PKG_CONFIG_PATH}" STREQUAL "")
  set(ENV{PKG_CONFIG_PATH} "${pc_dir}:$ENV{PKG_CONFIG_PATH}")
else()
  set(ENV{PKG_CONFIG_PATH} "${pc_dir}")
endif()
set(pkg_config_args --cflags --libs redlock)
set(expected_flags -lredlock)
if(LIBRARY_TYPE STREQUAL "STATIC_LIBRARY")
  # A static archive's users link its private dependencies too.
  list(PREPEND pkg_config_args --static)
  list(APPEND expected_flags -lhiredis -ltomlplusplus)
endif()
execute_process(COMMAND "${PKG_CONFIG_EXECUTABLE}" ${pkg_config_args}
  RESULT_VARIABLE rc OUTPUT_VARIABLE pc_flags ERROR_VARIABLE pc_err
  OUTPUT_STRIP_TRAILING_WHITESPACE)
list(JOIN pkg_config_args " " pkg_config_shown)
message(STATUS "pkg-config ${pkg_config_shown}: ${pc_flags}")
if(NOT rc EQUAL 0)
  message(FATAL_ERROR "downstream: pkg-config failed (${rc}): ${pc_err}")
endif()
separate_arguments(pc_flag_list UNIX_COMMAND "${pc_flags}")
foreach(flag IN LISTS expected_flags)
  if(NOT flag IN_LIST pc_flag_list)
    message(FATAL_ERROR "downstream: pkg-config output lacks ${flag}")
  endif()
endforeach()
string(FIND "${pc_flags}" "-I${prefix}/" at)
if(at EQUAL -1)
  message(FATAL_ERROR "downstream: pkg-config output has no -I into ${prefix}")
endif()
separate_arguments(cxx_flag_list UNIX_COMMAND "${downstream_cxx_flags} ${downstream_linker_flags}")
run_step("compile with pkg-config flags" "${CXX_COMPILER}" -std=c++20 ${cxx_flag_list}
  "${DOWNSTREAM_SOURCE_DIR}/main.cpp" -o "${WORK_DIR}/app-pkgconfig" ${pc_flag_list})
# A shared libredlock in the scratch prefix is not on the loader's path.
set(ENV{LD_LIBRARY_PATH} "${lib_dir}")
expect_config_error("${WORK_DIR}/app-pkgconfig")

# 4. The Python package, when the build has it: installed where Debian's
# python3 looks for packages installed under this prefix (as it looks in
# /usr/local/lib/python3.X/dist-packages, for the default prefix), and
# importable from there.
if(EXISTS "${REDLOCK_BUILD_DIR}/python/redlock_quorum/__init__.py"
   AND EXISTS /usr/lib/python3/dist-packages AND EXISTS /usr/bin/python3)
  execute_process(COMMAND /usr/bin/python3 -c
    "import sys; print('lib/python%d.%d/dist-packages' % sys.version_info[:2])"
    OUTPUT_VARIABLE site_dir OUTPUT_STRIP_TRAILING_WHITESPACE)
  execute_process(COMMAND /usr/bin/python3 -c
    "import sys; print('/usr/local/${site_dir}' in sys.path)"
    OUTPUT_VARIABLE on_path OUTPUT_STRIP_TRAILING_WHITESPACE)
  if(NOT on_path STREQUAL "True")
    message(FATAL_ERROR "downstream: /usr/local/${site_dir} is not on python3's path")
  endif()
  if(NOT EXISTS "${prefix}/${site_dir}/redlock_quorum/__init__.py")
    message(FATAL_ERROR "downstream: the Python package is not in ${prefix}/${site_dir}")
  endif()
  # (No ';' in the code: run_step passes its arguments on as a list.)
  set(ENV{PYTHONPATH} "${prefix}/${site_dir}")
  run_step("import the installed Python package" /usr/bin/python3 -c
    "import redlock_quorum, sys\nassert redlock_quorum.__file__.startswith(sys.argv[1])"
    "${prefix}/${site_dir}")
  unset(ENV{PYTHONPATH})
endif()

message(STATUS "downstream: find_package and pkg-config consumers built and ran")
