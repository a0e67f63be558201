# What the package tests share (included by run.cmake and deb_check.cmake):
# running a step, building tests/downstream against an installed redlock, and
# checking that the built program starts and refuses to run without a
# quorum file. CONSUMER_LABEL names the test in messages. Needs the -D
# variables both scripts take: DOWNSTREAM_SOURCE_DIR, WORK_DIR, CXX_COMPILER,
# GENERATOR, and optionally CXX_FLAGS, EXE_LINKER_FLAGS, SANITIZE, CONFIG,
# MAKE_PROGRAM.

# Runs a command, echoing it; its output goes to the test log.
function(run_step what)
  execute_process(COMMAND ${ARGN} COMMAND_ECHO STDOUT RESULT_VARIABLE rc)
  if(NOT rc EQUAL 0)
    message(FATAL_ERROR "${CONSUMER_LABEL}: ${what} failed (${rc})")
  endif()
endfunction()

# The consumer's flags: the build's own, plus -fsanitize when the library is
# sanitized (a sanitized static archive needs a sanitized link).
set(_consumer_sanitizer_flags "")
if(SANITIZE)
  set(_consumer_sanitizer_flags "-fsanitize=${SANITIZE} -fno-omit-frame-pointer")
endif()
string(STRIP "${CXX_FLAGS} ${_consumer_sanitizer_flags}" downstream_cxx_flags)
string(STRIP "${EXE_LINKER_FLAGS} ${_consumer_sanitizer_flags}" downstream_linker_flags)

# Configures and builds tests/downstream in BUILD against the redlock
# installed under PREFIX (find_package(redlock CONFIG), package registry
# off), checks that it was that copy that was found, and returns the
# program's path in OUT_APP.
function(build_consumer prefix build out_app)
  set(configure_args
    -S "${DOWNSTREAM_SOURCE_DIR}" -B "${build}" -G "${GENERATOR}"
    "-DCMAKE_CXX_COMPILER=${CXX_COMPILER}"
    "-DCMAKE_CXX_FLAGS=${downstream_cxx_flags}"
    "-DCMAKE_EXE_LINKER_FLAGS=${downstream_linker_flags}"
    "-DCMAKE_PREFIX_PATH=${prefix}"
    -DCMAKE_FIND_USE_PACKAGE_REGISTRY=OFF)
  if(MAKE_PROGRAM)
    list(APPEND configure_args "-DCMAKE_MAKE_PROGRAM=${MAKE_PROGRAM}")
  endif()
  set(build_args "")
  if(CONFIG)
    list(APPEND configure_args "-DCMAKE_BUILD_TYPE=${CONFIG}")
    set(build_args --config "${CONFIG}")
  endif()
  run_step("configure" "${CMAKE_COMMAND}" ${configure_args})
  file(STRINGS "${build}/CMakeCache.txt" redlock_dir_line REGEX "^redlock_DIR:")
  string(REGEX REPLACE "^redlock_DIR:[A-Z]+=" "" redlock_dir "${redlock_dir_line}")
  string(FIND "${redlock_dir}" "${prefix}/" at)
  if(NOT at EQUAL 0)
    message(FATAL_ERROR "${CONSUMER_LABEL}: found redlock in '${redlock_dir}', not under ${prefix}")
  endif()
  run_step("build" "${CMAKE_COMMAND}" --build "${build}" ${build_args})
  set(app "${build}/app")
  if(CONFIG AND EXISTS "${build}/${CONFIG}/app")
    set(app "${build}/${CONFIG}/app")
  endif()
  set(${out_app} "${app}" PARENT_SCOPE)
endfunction()

# Runs the built program without a configuration and checks that it refused:
# proof that it linked and started, without needing a Redis server.
function(expect_config_error program)
  set(empty_dir "${WORK_DIR}/no-config")
  file(MAKE_DIRECTORY "${empty_dir}")
  unset(ENV{REDLOCK_CONFIG})
  execute_process(COMMAND "${program}"
    WORKING_DIRECTORY "${empty_dir}"
    RESULT_VARIABLE rc OUTPUT_VARIABLE out ERROR_VARIABLE err)
  message(STATUS "${program} exited with ${rc}\n  stdout: ${out}\n  stderr: ${err}")
  if(NOT rc MATCHES "^[0-9]+$" OR rc EQUAL 0)
    message(FATAL_ERROR
      "${CONSUMER_LABEL}: ${program} should exit non-zero without a config, got '${rc}'")
  endif()
  if(NOT err MATCHES "redlock: " OR err MATCHES "Sanitizer")
    message(FATAL_ERROR
      "${CONSUMER_LABEL}: ${program} should print one config error, printed '${err}'")
  endif()
endfunction()
