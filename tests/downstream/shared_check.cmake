# The shared_library_quickstart test, run by ctest as `cmake -P` (arguments
# in register.cmake). It proves that -DBUILD_SHARED_LIBS=ON makes a shared
# library a user can build the README quickstart against. Each step is fatal
# on failure:
#   1. configure REDLOCK_SOURCE_DIR in WORK_DIR/build with
#      -DBUILD_SHARED_LIBS=ON, prefix /usr, tests, benchmarks and examples
#      off (the tools and the Python binding on, for deb_packages, which
#      packs this tree), build only the library and its static archive,
#      install those two components into WORK_DIR/prefix;
#   2. the prefix has libredlock.so.<version>, the symlinks
#      libredlock.so.<soversion> and libredlock.so, libredlock.a, and
#      readelf shows the SONAME libredlock.so.<soversion>;
#   3. the library exports only redlock:: (nm -D): no redlock::detail, no
#      standard library template, and the quickstart's entry points;
#   4. tests/downstream is built against the prefix (find_package), the
#      program has NEEDED libredlock.so.<soversion>, ldd resolves it in the
#      prefix, and it starts (it refuses to run without a quorum file).
# The shared_library.Quickstart test then runs that program against real
# nodes (tests/CMakeLists.txt).
#
# WORK_DIR/build is kept between runs, so a rerun rebuilds only what
# changed; it is started afresh when the configure arguments change, since
# CMake drops -D values given with a new compiler.
cmake_minimum_required(VERSION 3.20)

foreach(var REDLOCK_SOURCE_DIR DOWNSTREAM_SOURCE_DIR WORK_DIR CXX_COMPILER GENERATOR
    PROJECT_VERSION SOVERSION LIBDIR)
  if(NOT DEFINED ${var} OR "${${var}}" STREQUAL "")
    message(FATAL_ERROR "shared_check.cmake: -D${var}=... is required")
  endif()
endforeach()
if(NOT JOBS)
  set(JOBS 2)
endif()

set(CONSUMER_LABEL shared_library_quickstart)
include("${CMAKE_CURRENT_LIST_DIR}/consumer.cmake")

find_program(READELF readelf REQUIRED)
find_program(NM nm REQUIRED)
find_program(LDD ldd REQUIRED)

# Runs a command and returns its standard output in out_var.
function(capture out_var what)
  execute_process(COMMAND ${ARGN} RESULT_VARIABLE rc OUTPUT_VARIABLE out ERROR_VARIABLE err
    OUTPUT_STRIP_TRAILING_WHITESPACE)
  if(NOT rc EQUAL 0)
    message(FATAL_ERROR "${CONSUMER_LABEL}: ${what} failed (${rc}): ${err}")
  endif()
  set(${out_var} "${out}" PARENT_SCOPE)
endfunction()

set(build "${WORK_DIR}/build")
set(prefix "${WORK_DIR}/prefix")
set(consumer "${WORK_DIR}/consumer")
set(libdir "${prefix}/${LIBDIR}")

# 1. Configure, build the library, install.
set(configure_args
  -S "${REDLOCK_SOURCE_DIR}" -B "${build}" -G "${GENERATOR}"
  "-DCMAKE_CXX_COMPILER=${CXX_COMPILER}"
  "-DCMAKE_CXX_FLAGS=${CXX_FLAGS}"
  "-DCMAKE_EXE_LINKER_FLAGS=${EXE_LINKER_FLAGS}"
  "-DCMAKE_SHARED_LINKER_FLAGS=${SHARED_LINKER_FLAGS}"
  # The tree the deb_packages test packs as well (deb_check.cmake): the
  # Debian prefix and libdir, with the tools and the Python binding, which
  # only that test builds. The libdir is given so that the checks below know
  # where the library is.
  -DCMAKE_INSTALL_PREFIX=/usr
  "-DCMAKE_INSTALL_LIBDIR=${LIBDIR}"
  -DBUILD_SHARED_LIBS=ON
  -DREDLOCK_BUILD_TESTS=OFF
  -DREDLOCK_BUILD_TOOLS=ON
  -DREDLOCK_BUILD_BENCH=OFF
  -DREDLOCK_BUILD_EXAMPLES=OFF
  -DREDLOCK_BUILD_PYTHON=ON
  -DREDLOCK_INSTALL=ON
  "-DREDLOCK_SANITIZE=${SANITIZE}"
  "-DREDLOCK_WERROR=${WERROR}"
  "-DCMAKE_UNITY_BUILD=${UNITY}")
if(MAKE_PROGRAM)
  list(APPEND configure_args "-DCMAKE_MAKE_PROGRAM=${MAKE_PROGRAM}")
endif()
# Where the outer build found libuv, hiredis and toml++, if it was told: a
# list, which register.cmake passes with | between its entries.
if(DEPENDENCY_PREFIX_PATH)
  string(REPLACE "|" "\\;" prefix_path "${DEPENDENCY_PREFIX_PATH}")
  list(APPEND configure_args "-DCMAKE_PREFIX_PATH=${prefix_path}")
endif()
set(build_args --parallel "${JOBS}")
set(install_args "")
if(CONFIG)
  list(APPEND configure_args "-DCMAKE_BUILD_TYPE=${CONFIG}")
  # The outer build's flags for its build type (empty: CMake's defaults).
  if(CONFIG_CXX_FLAGS)
    string(TOUPPER "${CONFIG}" config_upper)
    list(APPEND configure_args "-DCMAKE_CXX_FLAGS_${config_upper}=${CONFIG_CXX_FLAGS}")
  endif()
  list(APPEND build_args --config "${CONFIG}")
  set(install_args --config "${CONFIG}")
endif()

set(stamp "${WORK_DIR}/configure-args.txt")
list(JOIN configure_args "\n" configure_text)
if(EXISTS "${stamp}")
  file(READ "${stamp}" previous_text)
  if(NOT previous_text STREQUAL configure_text)
    message(STATUS "${CONSUMER_LABEL}: configure arguments changed, starting ${build} afresh")
    file(REMOVE_RECURSE "${build}")
  endif()
endif()
file(REMOVE_RECURSE "${prefix}" "${consumer}")
file(MAKE_DIRECTORY "${WORK_DIR}")
file(REMOVE "${stamp}")

run_step("configure the shared build" "${CMAKE_COMMAND}" ${configure_args})
file(WRITE "${stamp}" "${configure_text}")
# The library and its static archive (libredlock-dev ships both), and only
# their install components: the tools are not built yet.
run_step("build the library" "${CMAKE_COMMAND}" --build "${build}" --target redlock redlock_internal
  ${build_args})
foreach(component redlock_runtime redlock_development)
  run_step("install ${component}" "${CMAKE_COMMAND}" --install "${build}" --prefix "${prefix}"
    --component ${component} ${install_args})
endforeach()

# 2. The file, its two symlinks, the SONAME.
set(soname "libredlock.so.${SOVERSION}")
set(real_name "libredlock.so.${PROJECT_VERSION}")
if(NOT EXISTS "${libdir}/${real_name}" OR IS_SYMLINK "${libdir}/${real_name}")
  file(GLOB installed "${libdir}/libredlock*")
  message(FATAL_ERROR "${CONSUMER_LABEL}: no regular file ${libdir}/${real_name} (found '${installed}')")
endif()
foreach(pair "${soname}>${real_name}" "libredlock.so>${soname}")
  string(REPLACE ">" ";" pair "${pair}")
  list(GET pair 0 link)
  list(GET pair 1 target)
  if(NOT IS_SYMLINK "${libdir}/${link}")
    message(FATAL_ERROR "${CONSUMER_LABEL}: ${libdir}/${link} is not a symlink")
  endif()
  file(READ_SYMLINK "${libdir}/${link}" points_to)
  if(NOT points_to STREQUAL target)
    message(FATAL_ERROR "${CONSUMER_LABEL}: ${link} points to '${points_to}', expected '${target}'")
  endif()
endforeach()
if(NOT EXISTS "${libdir}/libredlock.a")
  message(FATAL_ERROR "${CONSUMER_LABEL}: a shared build should install the archive ${libdir}/libredlock.a too")
endif()
capture(dynamic "readelf -d ${real_name}" "${READELF}" -d "${libdir}/${real_name}")
if(NOT dynamic MATCHES "\\(SONAME\\)[^\n]*\\[([^]\n]*)\\]")
  message(FATAL_ERROR "${CONSUMER_LABEL}: ${real_name} has no SONAME:\n${dynamic}")
endif()
if(NOT CMAKE_MATCH_1 STREQUAL soname)
  message(FATAL_ERROR "${CONSUMER_LABEL}: SONAME is '${CMAKE_MATCH_1}', expected '${soname}'")
endif()
message(STATUS "${CONSUMER_LABEL}: ${real_name}, SONAME ${soname}, symlinks ${soname} and libredlock.so")

# 3. What the library exports. nm -D --defined-only -C prints
# "<address> <type> <demangled name>"; the version script allows redlock::
# functions and the RTTI and vtables of redlock:: types, nothing else.
capture(symbols "nm -D" "${NM}" -D --defined-only -C "${libdir}/${real_name}")
string(REPLACE ";" "\\;" symbols "${symbols}")
string(REPLACE "\n" ";" symbol_lines "${symbols}")
set(exported 0)
set(strays "")
foreach(line IN LISTS symbol_lines)
  if(NOT line MATCHES "^[0-9a-fA-F]+ [A-Za-z] (.*)$")
    message(FATAL_ERROR "${CONSUMER_LABEL}: unexpected nm line '${line}'")
  endif()
  set(name "${CMAKE_MATCH_1}")
  math(EXPR exported "${exported} + 1")
  string(REGEX REPLACE "^(typeinfo for |typeinfo name for |vtable for |VTT for )" "" owner "${name}")
  if(NOT owner MATCHES "^redlock::" OR owner MATCHES "^redlock::detail::")
    string(APPEND strays "\n  ${name}")
  endif()
endforeach()
if(NOT strays STREQUAL "")
  message(FATAL_ERROR "${CONSUMER_LABEL}: exported symbols outside the public API:${strays}")
endif()
foreach(entry "redlock::load_default_config(" "redlock::BlockingClient::BlockingClient("
    "redlock::BlockingClient::lock(" "redlock::Guard::~Guard()")
  string(FIND "${symbols}" "${entry}" at)
  if(at EQUAL -1)
    message(FATAL_ERROR "${CONSUMER_LABEL}: ${real_name} does not export ${entry}...")
  endif()
endforeach()
message(STATUS "${CONSUMER_LABEL}: ${exported} exported symbols, all redlock:: public API")

# 4. The quickstart against the prefix. The loader path is the prefix's, as
# in the shared_library.Quickstart test that runs this program next.
build_consumer("${prefix}" "${consumer}" app)
string(REPLACE "." "\\." soname_re "${soname}")
capture(app_dynamic "readelf -d app" "${READELF}" -d "${app}")
if(NOT app_dynamic MATCHES "\\(NEEDED\\)[^\n]*\\[${soname_re}\\]")
  message(FATAL_ERROR "${CONSUMER_LABEL}: ${app} does not need ${soname}:\n${app_dynamic}")
endif()
set(ENV{LD_LIBRARY_PATH} "${libdir}")
capture(resolved "ldd app" "${LDD}" "${app}")
if(NOT resolved MATCHES "${soname_re} => ([^ \n]+)")
  message(FATAL_ERROR "${CONSUMER_LABEL}: ldd does not resolve ${soname}:\n${resolved}")
endif()
file(REAL_PATH "${CMAKE_MATCH_1}" loaded)
file(REAL_PATH "${libdir}/${real_name}" expected)
if(NOT loaded STREQUAL expected)
  message(FATAL_ERROR "${CONSUMER_LABEL}: ${app} loads ${loaded}, not ${expected}")
endif()
expect_config_error("${app}")

message(STATUS "${CONSUMER_LABEL}: the quickstart links ${soname} from ${libdir} and starts")
