# The deb_package test, run by ctest as `cmake -P` (arguments in
# register.cmake). Each step is fatal on failure:
#   1. cpack -G DEB in REDLOCK_BUILD_DIR, into WORK_DIR/cpack;
#   2. dpkg-deb -f: the package's name, version and Depends (the tool's
#      shared libraries and the -dev packages the CMake package needs);
#   3. dpkg-deb -c: the tool, the headers, the library, the CMake package
#      and the pkg-config module are in the package, under /usr;
#   4. dpkg -x into WORK_DIR/root, then configure and build tests/downstream
#      (the README quickstart) with CMAKE_PREFIX_PATH=WORK_DIR/root/usr,
#      check that it found that copy, and run it (it must refuse to start
#      without a quorum file, as in run.cmake); run the packaged
#      `redlock --version`; check the packaged redlock.pc.
# Without dpkg-deb (not a Debian system) the test prints the skip marker
# that register.cmake's SKIP_REGULAR_EXPRESSION matches.
cmake_minimum_required(VERSION 3.20)

foreach(var REDLOCK_BUILD_DIR DOWNSTREAM_SOURCE_DIR WORK_DIR CXX_COMPILER GENERATOR
    CPACK_COMMAND PROJECT_VERSION)
  if(NOT DEFINED ${var} OR "${${var}}" STREQUAL "")
    message(FATAL_ERROR "deb_check.cmake: -D${var}=... is required")
  endif()
endforeach()

find_program(DPKG_DEB dpkg-deb)
find_program(DPKG dpkg)
if(NOT DPKG_DEB OR NOT DPKG)
  message(STATUS "deb_package: SKIPPED: dpkg-deb or dpkg is not installed")
  return()
endif()

set(CONSUMER_LABEL deb_package)
include("${CMAKE_CURRENT_LIST_DIR}/consumer.cmake")

# Runs a command and returns its standard output in out_var.
function(capture out_var what)
  execute_process(COMMAND ${ARGN} RESULT_VARIABLE rc OUTPUT_VARIABLE out ERROR_VARIABLE err
    OUTPUT_STRIP_TRAILING_WHITESPACE)
  if(NOT rc EQUAL 0)
    message(FATAL_ERROR "deb_package: ${what} failed (${rc}): ${err}")
  endif()
  set(${out_var} "${out}" PARENT_SCOPE)
endfunction()

set(cpack_dir "${WORK_DIR}/cpack")
set(root "${WORK_DIR}/root")
set(build "${WORK_DIR}/build")
file(REMOVE_RECURSE "${WORK_DIR}")
file(MAKE_DIRECTORY "${WORK_DIR}")

set(config_args "")
if(CONFIG)
  set(config_args -C "${CONFIG}")
endif()

# 1. cpack.
run_step("cpack" "${CPACK_COMMAND}" -G DEB
  --config "${REDLOCK_BUILD_DIR}/CPackConfig.cmake" -B "${cpack_dir}" ${config_args})
file(GLOB debs "${cpack_dir}/*.deb")
list(LENGTH debs deb_count)
if(NOT deb_count EQUAL 1)
  message(FATAL_ERROR "deb_package: expected one .deb in ${cpack_dir}, found '${debs}'")
endif()
message(STATUS "deb_package: built ${debs}")

# 2. Control fields.
capture(info "dpkg-deb -I" "${DPKG_DEB}" -I "${debs}")
message(STATUS "dpkg-deb -I:\n${info}")
capture(package "dpkg-deb -f Package" "${DPKG_DEB}" -f "${debs}" Package)
capture(version "dpkg-deb -f Version" "${DPKG_DEB}" -f "${debs}" Version)
capture(depends "dpkg-deb -f Depends" "${DPKG_DEB}" -f "${debs}" Depends)
if(NOT package STREQUAL "redlock")
  message(FATAL_ERROR "deb_package: Package is '${package}', expected 'redlock'")
endif()
if(NOT version MATCHES "^${PROJECT_VERSION}(-|$)")
  message(FATAL_ERROR "deb_package: Version is '${version}', expected ${PROJECT_VERSION}")
endif()
# Depends: a comma-separated list of "name [(op version)]" (alternatives with |).
string(REPLACE "\n" " " depends "${depends}")
string(REPLACE "," ";" depend_list "${depends}")
set(depend_names "")
foreach(entry IN LISTS depend_list)
  string(STRIP "${entry}" entry)
  if(NOT entry MATCHES "^[a-z0-9][a-z0-9+.-]+( \\([<>=]+ [^)]+\\))?( \\| [a-z0-9][a-z0-9+.-]+( \\([<>=]+ [^)]+\\))?)*$")
    message(FATAL_ERROR "deb_package: malformed Depends entry '${entry}' in '${depends}'")
  endif()
  string(REGEX MATCH "^[a-z0-9][a-z0-9+.-]+" name "${entry}")
  list(APPEND depend_names "${name}")
endforeach()
# The tool's shared libraries, then what the development files need.
foreach(expected
    "^libc6$" "^libstdc\\+\\+6$" "^libuv1$" "^libhiredis[0-9.]+$" "^libtomlplusplus[0-9]+$"
    "^libssl3$" "^libuv1-dev$" "^libhiredis-dev$" "^libtomlplusplus-dev$" "^libssl-dev$")
  set(found OFF)
  foreach(name IN LISTS depend_names)
    if(name MATCHES "${expected}")
      set(found ON)
    endif()
  endforeach()
  if(NOT found)
    message(FATAL_ERROR "deb_package: Depends '${depends}' has nothing matching ${expected}")
  endif()
endforeach()
list(REMOVE_DUPLICATES depend_names)
list(LENGTH depend_list n_entries)
list(LENGTH depend_names n_names)
if(NOT n_entries EQUAL n_names)
  message(FATAL_ERROR "deb_package: Depends names a package twice: '${depends}'")
endif()

# 3. Contents. Entries look like "-rw-r--r-- root/root 1234 2026-01-01 00:00 ./usr/bin/redlock",
# a symlink's with " -> <target>" after the name. The library is the archive,
# or (-DBUILD_SHARED_LIBS=ON) the versioned shared object and its two links.
capture(listing "dpkg-deb -c" "${DPKG_DEB}" -c "${debs}")
set(libdir_re " \\./usr/lib/([a-z0-9_-]+/)?")
string(REPLACE "." "\\." version_re "${PROJECT_VERSION}")
string(REGEX MATCH "^[0-9]+" soversion "${PROJECT_VERSION}")
if(LIBRARY_TYPE STREQUAL "SHARED_LIBRARY")
  set(library_entries
    "${libdir_re}libredlock\\.so\\.${version_re}\n"
    "${libdir_re}libredlock\\.so\\.${soversion} -> libredlock\\.so\\.${version_re}\n"
    "${libdir_re}libredlock\\.so -> libredlock\\.so\\.${soversion}\n")
else()
  set(library_entries "${libdir_re}libredlock\\.a\n")
endif()
foreach(expected
    " \\./usr/bin/redlock\n"
    " \\./usr/bin/redlock-chaos\n"
    " \\./usr/share/redlock/chaos-scenarios/s01-baseline\\.toml\n"
    " \\./usr/lib/redlock/libredlock-chaos-libc-malloc\\.so\n"
    " \\./usr/include/redlock/redlock\\.hpp\n"
    " \\./usr/include/redlock/export\\.hpp\n"
    ${library_entries}
    " \\./usr/lib/([a-z0-9_-]+/)?cmake/redlock/redlockConfig\\.cmake\n"
    " \\./usr/lib/([a-z0-9_-]+/)?cmake/redlock/redlockTargets\\.cmake\n"
    " \\./usr/lib/([a-z0-9_-]+/)?pkgconfig/redlock\\.pc\n")
  if(NOT "${listing}\n" MATCHES "${expected}")
    message(FATAL_ERROR "deb_package: dpkg-deb -c lists nothing matching '${expected}':\n${listing}")
  endif()
endforeach()
if(listing MATCHES " \\./usr/local/" OR listing MATCHES " \\./(home|root|tmp|work)/")
  message(FATAL_ERROR "deb_package: files outside /usr:\n${listing}")
endif()

# 4. Extract and build the README quickstart against the extracted copy.
run_step("dpkg -x" "${DPKG}" -x "${debs}" "${root}")
set(prefix "${root}/usr")

build_consumer("${prefix}" "${build}" app)
expect_config_error("${app}")

# The packaged tool runs and reports the project's version.
execute_process(COMMAND "${prefix}/bin/redlock" --version
  RESULT_VARIABLE rc OUTPUT_VARIABLE out ERROR_VARIABLE err)
message(STATUS "redlock --version exited with ${rc}: ${out}${err}")
if(NOT rc EQUAL 0 OR NOT "${out}" MATCHES "${PROJECT_VERSION}")
  message(FATAL_ERROR "deb_package: packaged redlock --version gave ${rc}: '${out}' '${err}'")
endif()

# The packaged redlock.pc points into the extracted tree (it is relocatable).
find_program(PKG_CONFIG_EXECUTABLE NAMES pkg-config pkgconf)
if(PKG_CONFIG_EXECUTABLE)
  file(GLOB_RECURSE pc_files "${prefix}/*/redlock.pc")
  get_filename_component(pc_dir "${pc_files}" DIRECTORY)
  set(ENV{PKG_CONFIG_PATH} "${pc_dir}")
  capture(pc_flags "pkg-config" "${PKG_CONFIG_EXECUTABLE}" --static --cflags --libs redlock)
  message(STATUS "pkg-config --static --cflags --libs redlock: ${pc_flags}")
  string(FIND "${pc_flags}" "-I${prefix}/" at)
  if(at EQUAL -1 OR NOT pc_flags MATCHES "-lredlock")
    message(FATAL_ERROR "deb_package: packaged redlock.pc gives '${pc_flags}'")
  endif()
endif()

message(STATUS "deb_package: ${package} ${version} (Depends: ${depends}) built, listed, extracted, and the quickstart built against it")
