# The deb_packages test, run by ctest as `cmake -P` (arguments in
# register.cmake). It packs the shared build of shared_library_quickstart
# (SHARED_BUILD_DIR: -DBUILD_SHARED_LIBS=ON, prefix /usr, tools and Python
# on) and installs the packages on this machine for real. Each step is fatal
# on failure:
#   1. build the rest of SHARED_BUILD_DIR (tools, Python module, manual
#      pages) and `cpack -G DEB` it into WORK_DIR/cpack: libredlock<SO>,
#      libredlock-dev, redlock-tools and, when the Python binding is built,
#      python3-redlock-quorum;
#   2. per package, dpkg-deb: the name, version, Depends between the
#      packages and on the system's libraries, the files (and nothing outside
#      /usr), the copyright and changelog, the library's shlibs and ldconfig
#      trigger; then lintian, which must report no error and no warning (the
#      tags that cannot be fixed are overridden in the packages, each with
#      its reason: cmake/debian/*.lintian-overrides);
#   3. dpkg -i all of them; the tools run, the manual pages are in place and
#      ldconfig knows the library;
#   4. the README quickstart (tests/downstream) is built against /usr twice,
#      with find_package(redlock CONFIG) and with pkg-config, and both
#      programs need libredlock.so.<SO> and load it from /usr;
#   5. QUICKSTART_TEST (tests/integration/quickstart_test.cpp) runs that
#      program against three real redis-server nodes, plain and over TLS;
#   6. /usr/bin/python3 -I imports redlock_quorum from the installed package;
#   7. dpkg -r, then dpkg --purge, of every package, whatever happened
#      before: the steps above run in a child `cmake -P` (PHASE=body), so
#      this one removes the packages even when they failed. Packages left
#      installed by an earlier run that was killed (a ctest timeout) are
#      removed first.
# Skipped (the marker register.cmake's SKIP_REGULAR_EXPRESSION matches)
# without dpkg or without root: dpkg -i needs it.
cmake_minimum_required(VERSION 3.20)

set(forwarded_vars SHARED_BUILD_DIR DOWNSTREAM_SOURCE_DIR WORK_DIR CXX_COMPILER GENERATOR
  CPACK_COMMAND PROJECT_VERSION SOVERSION QUICKSTART_TEST CONFIG CXX_FLAGS EXE_LINKER_FLAGS
  MAKE_PROGRAM JOBS)
foreach(var SHARED_BUILD_DIR DOWNSTREAM_SOURCE_DIR WORK_DIR CXX_COMPILER GENERATOR
    CPACK_COMMAND PROJECT_VERSION SOVERSION QUICKSTART_TEST)
  if(NOT DEFINED ${var} OR "${${var}}" STREQUAL "")
    message(FATAL_ERROR "deb_check.cmake: -D${var}=... is required")
  endif()
endforeach()
if(NOT JOBS)
  set(JOBS 2)
endif()

set(CONSUMER_LABEL deb_packages)
include("${CMAKE_CURRENT_LIST_DIR}/consumer.cmake")

set(lib_package "libredlock${SOVERSION}")
set(all_packages "${lib_package}" libredlock-dev redlock-tools python3-redlock-quorum)

# Runs a command and returns its standard output in out_var.
function(capture out_var what)
  execute_process(COMMAND ${ARGN} RESULT_VARIABLE rc OUTPUT_VARIABLE out ERROR_VARIABLE err
    OUTPUT_STRIP_TRAILING_WHITESPACE)
  if(NOT rc EQUAL 0)
    message(FATAL_ERROR "deb_packages: ${what} failed (${rc}): ${out}${err}")
  endif()
  set(${out_var} "${out}" PARENT_SCOPE)
endfunction()

# dpkg with its arguments. Another dpkg or apt on the machine holds dpkg's
# lock for a while: wait for it (up to 2 minutes), never fail on it.
function(run_dpkg what)
  foreach(attempt RANGE 60)
    execute_process(COMMAND dpkg ${ARGN} RESULT_VARIABLE rc OUTPUT_VARIABLE out ERROR_VARIABLE err)
    if(rc EQUAL 0 OR NOT err MATCHES "lock")
      break()
    endif()
    execute_process(COMMAND "${CMAKE_COMMAND}" -E sleep 2)
  endforeach()
  message(STATUS "dpkg ${ARGN}:\n${out}${err}")
  if(NOT rc EQUAL 0)
    message(FATAL_ERROR "deb_packages: ${what} failed (${rc})")
  endif()
endfunction()

# Which of ours dpkg knows in any state (installed, half-installed,
# config-files), in out_var.
function(known_packages out_var)
  set(known "")
  foreach(package IN LISTS all_packages)
    execute_process(COMMAND dpkg-query -W -f=\${db:Status-Abbrev} "${package}"
      RESULT_VARIABLE rc OUTPUT_VARIABLE status ERROR_QUIET)
    if(rc EQUAL 0 AND NOT status MATCHES "^un")
      list(APPEND known "${package}")
    endif()
  endforeach()
  set(${out_var} "${known}" PARENT_SCOPE)
endfunction()

function(remove_packages why)
  known_packages(known)
  if(known)
    message(STATUS "deb_packages: removing ${known} (${why})")
    run_dpkg("dpkg -r" -r ${known})
    # dpkg -r keeps a package with maintainer scripts in config-files state.
    run_dpkg("dpkg --purge" --purge ${known})
  endif()
  known_packages(left)
  if(left)
    message(FATAL_ERROR "deb_packages: still known to dpkg after removal: ${left}")
  endif()
endfunction()

if(NOT PHASE STREQUAL "body")
  find_program(DPKG dpkg)
  find_program(DPKG_DEB dpkg-deb)
  if(NOT DPKG OR NOT DPKG_DEB)
    message(STATUS "deb_packages: SKIPPED: dpkg or dpkg-deb is not installed")
    return()
  endif()
  execute_process(COMMAND id -u OUTPUT_VARIABLE uid OUTPUT_STRIP_TRAILING_WHITESPACE)
  if(NOT uid STREQUAL "0")
    message(STATUS "deb_packages: SKIPPED: dpkg -i needs root (run as root, as CI does)")
    return()
  endif()
  # One run at a time on this machine, whichever build tree it comes from:
  # the packages are installed system-wide under the same names.
  file(LOCK "/tmp/redlock-deb-packages.lock" GUARD PROCESS TIMEOUT 900
    RESULT_VARIABLE lock_result)
  if(NOT lock_result EQUAL 0)
    message(FATAL_ERROR "deb_packages: another run holds /tmp/redlock-deb-packages.lock: ${lock_result}")
  endif()
  remove_packages("left installed by an earlier run")

  set(body_args "")
  foreach(var IN LISTS forwarded_vars)
    list(APPEND body_args "-D${var}=${${var}}")
  endforeach()
  execute_process(COMMAND "${CMAKE_COMMAND}" -DPHASE=body ${body_args}
    -P "${CMAKE_CURRENT_LIST_FILE}" RESULT_VARIABLE body_rc)

  remove_packages("the test is over")
  foreach(path /usr/bin/redlock /usr/bin/redlock-chaos /usr/include/redlock
      /usr/share/redlock /usr/lib/python3/dist-packages/redlock_quorum)
    if(EXISTS "${path}")
      message(FATAL_ERROR "deb_packages: ${path} is still there after dpkg -r")
    endif()
  endforeach()
  if(NOT body_rc EQUAL 0)
    message(FATAL_ERROR "deb_packages: failed (see above); the packages were removed")
  endif()
  message(STATUS "deb_packages: built, checked, installed, used and removed")
  return()
endif()

# ---- PHASE=body -------------------------------------------------------------

set(cpack_dir "${WORK_DIR}/cpack")
file(REMOVE_RECURSE "${WORK_DIR}")
file(MAKE_DIRECTORY "${WORK_DIR}")
set(build_args --parallel "${JOBS}")
set(cpack_config_args "")
if(CONFIG)
  list(APPEND build_args --config "${CONFIG}")
  set(cpack_config_args -C "${CONFIG}")
endif()

# 1. Build and pack.
run_step("build ${SHARED_BUILD_DIR}" "${CMAKE_COMMAND}" --build "${SHARED_BUILD_DIR}" ${build_args})
run_step("cpack" "${CPACK_COMMAND}" -G DEB --config "${SHARED_BUILD_DIR}/CPackConfig.cmake"
  -B "${cpack_dir}" ${cpack_config_args})
file(STRINGS "${SHARED_BUILD_DIR}/CPackConfig.cmake" components_line
  REGEX "^set\\(CPACK_COMPONENTS_ALL ")
set(expected_packages "${lib_package}" libredlock-dev redlock-tools)
if(components_line MATCHES "redlock_python")
  list(APPEND expected_packages python3-redlock-quorum)
else()
  message(STATUS "deb_packages: no Python binding in this build (python3-dev, python3-pybind11)")
endif()
file(GLOB debs "${cpack_dir}/*.deb")
list(LENGTH debs deb_count)
list(LENGTH expected_packages expected_count)
if(NOT deb_count EQUAL expected_count)
  message(FATAL_ERROR "deb_packages: expected ${expected_packages}, cpack made '${debs}'")
endif()

# 2. Each package: fields, files, lintian.
set(deb_version "${PROJECT_VERSION}-1")
string(REPLACE "." "\\." version_re "${PROJECT_VERSION}")
string(REPLACE "." "\\." deb_version_re "${deb_version}")
set(libdir_re "\\./usr/lib/[a-z0-9_]+-linux-[a-z0-9_]+/")
set(depends_re_libredlock-dev
  "(^|, )${lib_package} \\(= ${deb_version_re}\\)(,|$)" "libuv1-dev" "libhiredis-dev"
  "libtomlplusplus-dev" "nettle-dev" "(^|, )libssl3( |,|$)")
set(depends_re_${lib_package} "libuv1 " "libhiredis[0-9.]+ " "libtomlplusplus[0-9]+ "
  "(^|, )libssl3( |,|$)" "libnettle[0-9]+" "libstdc\\+\\+6 ")
# (libssl3 unversioned: the library loads it with dlopen, which
# dpkg-shlibdeps cannot see, so the packaging names it.)
set(depends_re_redlock-tools "libuv1 " "libhiredis[0-9.]+ " "(^|, )libssl3( |,|$)"
  "libnettle[0-9]+")
set(depends_re_python3-redlock-quorum
  "(^|, )${lib_package} \\(= ${deb_version_re}\\)(,|$)" "python3 \\(>= 3\\.[0-9]+~\\)"
  "python3 \\(<< 3\\.[0-9]+\\)")
set(files_re_${lib_package}
  " ${libdir_re}libredlock\\.so\\.${version_re}\n"
  " ${libdir_re}libredlock\\.so\\.${SOVERSION} -> libredlock\\.so\\.${version_re}\n")
set(files_re_libredlock-dev
  " \\./usr/include/redlock/redlock\\.hpp\n" " \\./usr/include/redlock/export\\.hpp\n"
  " ${libdir_re}libredlock\\.so -> libredlock\\.so\\.${SOVERSION}\n"
  " ${libdir_re}libredlock\\.a\n"
  " ${libdir_re}cmake/redlock/redlockConfig\\.cmake\n"
  " ${libdir_re}cmake/redlock/redlockTargets\\.cmake\n"
  " ${libdir_re}pkgconfig/redlock\\.pc\n")
set(files_re_redlock-tools
  " \\./usr/bin/redlock\n" " \\./usr/bin/redlock-chaos\n"
  " \\./usr/share/man/man1/redlock\\.1\\.gz\n" " \\./usr/share/man/man1/redlock-chaos\\.1\\.gz\n"
  " \\./usr/share/redlock/chaos-scenarios/s01-baseline\\.toml\n"
  " \\./usr/lib/redlock/libredlock-chaos-libc-malloc\\.so\n")
set(files_re_python3-redlock-quorum
  " \\./usr/lib/python3/dist-packages/redlock_quorum/__init__\\.py\n"
  " \\./usr/lib/python3/dist-packages/redlock_quorum/_native\\.[a-z0-9_-]+\\.so\n")
# What must not be in a package: the library in the tools, and so on.
set(not_files_re_redlock-tools "libredlock\\.so" "/include/")
set(not_files_re_${lib_package} "/include/" "libredlock\\.a" "libredlock\\.so\n" "/bin/")
set(not_files_re_libredlock-dev " ${libdir_re}libredlock\\.so\\.[0-9]" "/bin/")
set(not_files_re_python3-redlock-quorum "libredlock\\.so" "/bin/")

find_program(LINTIAN lintian)
if(NOT LINTIAN)
  message(FATAL_ERROR "deb_packages: lintian is not installed (scripts/setup installs it)")
endif()
set(install_list "")
foreach(package IN LISTS expected_packages)
  set(deb "${cpack_dir}/${package}_${deb_version}_")
  file(GLOB deb "${deb}*.deb")
  if(NOT deb)
    message(FATAL_ERROR "deb_packages: no ${package}_${deb_version}_<arch>.deb in '${debs}'")
  endif()
  list(APPEND install_list "${deb}")
  capture(info "dpkg-deb -I" dpkg-deb -I "${deb}")
  message(STATUS "${package}: dpkg-deb -I:\n${info}")
  capture(depends "dpkg-deb -f Depends" dpkg-deb -f "${deb}" Depends)
  string(REPLACE "\n" " " depends "${depends}")
  foreach(re IN LISTS depends_re_${package})
    if(NOT depends MATCHES "${re}")
      message(FATAL_ERROR "deb_packages: ${package} Depends '${depends}' has nothing matching ${re}")
    endif()
  endforeach()
  if(package STREQUAL "libredlock-dev" AND depends MATCHES "libssl-dev")
    message(FATAL_ERROR "deb_packages: libredlock-dev asks for libssl-dev, which no user of the library needs (OpenSSL is loaded with dlopen): '${depends}'")
  endif()
  if(package STREQUAL "redlock-tools" AND depends MATCHES "libredlock")
    message(FATAL_ERROR "deb_packages: redlock-tools links the library statically, yet Depends '${depends}'")
  endif()

  capture(listing "dpkg-deb -c" dpkg-deb -c "${deb}")
  string(APPEND listing "\n")
  foreach(re IN LISTS files_re_${package} ITEMS
      " \\./usr/share/doc/${package}/copyright\n"
      " \\./usr/share/doc/${package}/changelog\\.Debian\\.gz\n")
    if(NOT listing MATCHES "${re}")
      message(FATAL_ERROR "deb_packages: ${package} has nothing matching '${re}':\n${listing}")
    endif()
  endforeach()
  foreach(re IN LISTS not_files_re_${package})
    if(listing MATCHES "${re}")
      message(FATAL_ERROR "deb_packages: ${package} should have nothing matching '${re}':\n${listing}")
    endif()
  endforeach()
  string(REGEX MATCHALL " \\./[^ \n]*" paths "${listing}")
  foreach(path IN LISTS paths)
    if(NOT path MATCHES "^ \\./(usr/?.*)?$" OR path MATCHES "^ \\./usr/local")
      message(FATAL_ERROR "deb_packages: ${package} installs ${path}, outside /usr")
    endif()
  endforeach()

  if(package STREQUAL lib_package)
    set(control "${WORK_DIR}/control-${package}")
    run_step("dpkg-deb -e" dpkg-deb -e "${deb}" "${control}")
    file(READ "${control}/shlibs" shlibs)
    if(NOT shlibs MATCHES "^libredlock ${SOVERSION} ${lib_package} \\(>= ${version_re}\\)\n$")
      message(FATAL_ERROR "deb_packages: ${package} shlibs is '${shlibs}'")
    endif()
    file(READ "${control}/triggers" triggers)
    if(NOT triggers MATCHES "activate-noawait ldconfig")
      message(FATAL_ERROR "deb_packages: ${package} does not activate the ldconfig trigger")
    endif()
  endif()

  # --fail-on error,warning: the overrides shipped in the package apply.
  execute_process(COMMAND "${LINTIAN}" --fail-on error,warning --display-info "${deb}"
    RESULT_VARIABLE rc OUTPUT_VARIABLE out ERROR_VARIABLE err)
  message(STATUS "lintian ${package} (exit ${rc}):\n${out}${err}")
  if(NOT rc EQUAL 0)
    message(FATAL_ERROR "deb_packages: lintian reports errors or warnings for ${package}")
  endif()
endforeach()

# 3. Install for real.
run_dpkg("dpkg -i" -i ${install_list})
foreach(package IN LISTS expected_packages)
  capture(status "dpkg-query" dpkg-query -W -f=\${Status} "${package}")
  if(NOT status STREQUAL "install ok installed")
    message(FATAL_ERROR "deb_packages: ${package} is '${status}' after dpkg -i")
  endif()
endforeach()
foreach(tool redlock redlock-chaos)
  capture(out "${tool} --version" "/usr/bin/${tool}" --version)
  if(NOT out STREQUAL "${tool} ${PROJECT_VERSION}")
    message(FATAL_ERROR "deb_packages: /usr/bin/${tool} --version printed '${out}'")
  endif()
  if(NOT EXISTS "/usr/share/man/man1/${tool}.1.gz")
    message(FATAL_ERROR "deb_packages: no /usr/share/man/man1/${tool}.1.gz")
  endif()
endforeach()
capture(cache "ldconfig -p" ldconfig -p)
string(REPLACE "." "\\." soname_re "libredlock.so.${SOVERSION}")
if(NOT cache MATCHES "${soname_re} [^\n]*=> (/[^\n]+)")
  message(FATAL_ERROR "deb_packages: ldconfig does not know libredlock.so.${SOVERSION}")
endif()
# ldconfig may name it by /lib, a link to /usr/lib where the package put it.
file(REAL_PATH "${CMAKE_MATCH_1}" system_library)
if(NOT system_library MATCHES "^/usr/lib/")
  message(FATAL_ERROR "deb_packages: ldconfig has libredlock.so.${SOVERSION} at ${system_library}")
endif()
message(STATUS "deb_packages: installed; ldconfig has ${system_library}")

# Checks that program needs libredlock.so.<SO> and loads it from /usr/lib.
function(expect_system_library program)
  capture(dynamic "readelf -d" readelf -d "${program}")
  if(NOT dynamic MATCHES "\\(NEEDED\\)[^\n]*\\[${soname_re}\\]")
    message(FATAL_ERROR "deb_packages: ${program} does not need libredlock.so.${SOVERSION}")
  endif()
  capture(resolved "ldd" ldd "${program}")
  if(NOT resolved MATCHES "${soname_re} => ([^ \n]+)")
    message(FATAL_ERROR "deb_packages: ldd does not resolve libredlock.so.${SOVERSION}:\n${resolved}")
  endif()
  file(REAL_PATH "${CMAKE_MATCH_1}" loaded)
  file(REAL_PATH "${system_library}" expected)
  if(NOT loaded STREQUAL expected)
    message(FATAL_ERROR "deb_packages: ${program} loads ${loaded}, not ${expected}")
  endif()
endfunction()

# 4. The quickstart against /usr: find_package, then pkg-config.
unset(ENV{LD_LIBRARY_PATH})
unset(ENV{PKG_CONFIG_PATH})
unset(ENV{CMAKE_PREFIX_PATH})
build_consumer("/usr" "${WORK_DIR}/consumer" app)
expect_system_library("${app}")
expect_config_error("${app}")

find_program(PKG_CONFIG_EXECUTABLE NAMES pkg-config pkgconf REQUIRED)
capture(pc_libdir "pkg-config --variable=libdir" "${PKG_CONFIG_EXECUTABLE}" --variable=libdir redlock)
if(NOT pc_libdir MATCHES "^/usr/lib/")
  message(FATAL_ERROR "deb_packages: redlock.pc from /usr has libdir '${pc_libdir}'")
endif()
capture(pc_flags "pkg-config --cflags --libs" "${PKG_CONFIG_EXECUTABLE}" --cflags --libs redlock)
message(STATUS "pkg-config --cflags --libs redlock: ${pc_flags}")
separate_arguments(pc_flag_list UNIX_COMMAND "${pc_flags}")
separate_arguments(cxx_flag_list UNIX_COMMAND "${downstream_cxx_flags} ${downstream_linker_flags}")
run_step("compile with pkg-config flags" "${CXX_COMPILER}" -std=c++20 ${cxx_flag_list}
  "${DOWNSTREAM_SOURCE_DIR}/main.cpp" -o "${WORK_DIR}/app-pkgconfig" ${pc_flag_list})
expect_system_library("${WORK_DIR}/app-pkgconfig")
expect_config_error("${WORK_DIR}/app-pkgconfig")

# 5. Against real nodes (the test binary was built for ${WORK_DIR}/consumer/app).
run_step("the quickstart against three nodes" "${QUICKSTART_TEST}")

# 6. The Python binding from the package, with the system interpreter;
# -I: no PYTHONPATH, no user site, not the current directory.
if("python3-redlock-quorum" IN_LIST expected_packages)
  # Newlines, not semicolons, between the statements: CMake would split the
  # argument at a semicolon.
  capture(where "import redlock_quorum" /usr/bin/python3 -I -c
    "import redlock_quorum, redlock_quorum._native as n\nprint(redlock_quorum.__file__)\nprint(n.__file__)")
  if(NOT where MATCHES "\n")
    message(FATAL_ERROR "deb_packages: python3 printed '${where}', not the two module files")
  endif()
  string(REPLACE "\n" ";" where "${where}")
  foreach(file IN LISTS where)
    if(NOT file MATCHES "^/usr/lib/python3/dist-packages/redlock_quorum/")
      message(FATAL_ERROR "deb_packages: python3 imported ${file}, not the package's copy")
    endif()
  endforeach()
  list(GET where 1 native)
  expect_system_library("${native}")
  message(STATUS "deb_packages: /usr/bin/python3 imports ${where}")
endif()
