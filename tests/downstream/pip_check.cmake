# python_pip_install (label package; register.cmake): the Python binding as
# a user installs it from a checkout, without a package index.
#
#   1. An export of the checkout: the files git tracks, as the working tree
#      has them, and nothing built (SKIPPED when SOURCE_DIR is not a git
#      checkout, e.g. an unpacked release tarball).
#   2. A fresh virtual environment that sees the system's packages
#      (python3 -m venv --system-site-packages): setuptools, wheel, pybind11
#      and pytest come from Debian.
#   3. pip install --no-build-isolation --no-index <export>: setup.py builds
#      the extension with CMake in <export>/build-python.
#   4. python3 -m build --no-isolation --wheel on the same export, where
#      the build module is installed: a wheel with the extension, the stubs
#      and py.typed (its CMake tree is the one step 3 built).
#   5. python/tests/test_installed.py with the environment's interpreter:
#      the package imported from the environment, its stubs and marker
#      there, and a fenced lock taken and released on three real nodes.
#
# Variables: SOURCE_DIR, WORK_DIR, PYTHON (the interpreter to make the
# environment with), JOBS.
cmake_minimum_required(VERSION 3.22)

# Runs a step; its standard output is left in step_output.
function(run_step what)
  execute_process(COMMAND ${ARGN} RESULT_VARIABLE rc OUTPUT_VARIABLE out ERROR_VARIABLE err
    ${step_options})
  if(NOT rc EQUAL 0)
    message(FATAL_ERROR "python_pip_install: ${what} failed (${rc}):\n${out}\n${err}")
  endif()
  message(STATUS "python_pip_install: ${what}: ok")
  set(step_output "${out}" PARENT_SCOPE)
endfunction()

find_program(GIT git)
if(NOT GIT OR NOT EXISTS "${SOURCE_DIR}/.git")
  message(STATUS "python_pip_install: SKIPPED: ${SOURCE_DIR} is not a git checkout")
  return()
endif()

set(export "${WORK_DIR}/src")
set(venv "${WORK_DIR}/venv")
file(REMOVE_RECURSE "${WORK_DIR}")
file(MAKE_DIRECTORY "${export}")

# 1. The tracked files (deleted ones left out), packed and unpacked.
execute_process(COMMAND "${GIT}" -C "${SOURCE_DIR}" ls-files --cached
  OUTPUT_VARIABLE listed RESULT_VARIABLE rc)
if(NOT rc EQUAL 0)
  message(FATAL_ERROR "python_pip_install: git ls-files failed (${rc})")
endif()
set(names "")
string(REPLACE "\n" ";" listed "${listed}")
foreach(name IN LISTS listed)
  if(name AND EXISTS "${SOURCE_DIR}/${name}" AND NOT IS_DIRECTORY "${SOURCE_DIR}/${name}")
    string(APPEND names "${name}\n")
  endif()
endforeach()
file(WRITE "${WORK_DIR}/files.txt" "${names}")
set(step_options WORKING_DIRECTORY "${SOURCE_DIR}")
run_step("export the checkout" "${CMAKE_COMMAND}" -E tar cf "${WORK_DIR}/src.tar"
  "--files-from=${WORK_DIR}/files.txt")
set(step_options WORKING_DIRECTORY "${export}")
run_step("unpack the export" "${CMAKE_COMMAND}" -E tar xf "${WORK_DIR}/src.tar")
file(GLOB built LIST_DIRECTORIES true "${export}/build*")
if(built)
  message(FATAL_ERROR "python_pip_install: the export holds build outputs: ${built}")
endif()

# 2. The environment.
set(step_options "")
run_step("make the virtual environment" "${PYTHON}" -m venv --system-site-packages "${venv}")
set(vpython "${venv}/bin/python")

# 3. pip, with no index and no isolation: only what the system has.
set(ENV{CMAKE_BUILD_PARALLEL_LEVEL} "${JOBS}")
set(ENV{PIP_DISABLE_PIP_VERSION_CHECK} "1")
set(ENV{PYTHONDONTWRITEBYTECODE} "1")
run_step("pip install --no-build-isolation --no-index" "${vpython}" -m pip install
  --no-build-isolation --no-index "${export}")

# 4. The wheel, where python3 -m build is installed.
execute_process(COMMAND "${PYTHON}" -c "import build" RESULT_VARIABLE has_build
  OUTPUT_QUIET ERROR_QUIET)
if(has_build EQUAL 0)
  run_step("python3 -m build --no-isolation --wheel" "${PYTHON}" -m build --no-isolation
    --wheel --outdir "${WORK_DIR}/dist" "${export}")
  file(GLOB wheels "${WORK_DIR}/dist/redlock_quorum-*.whl")
  list(LENGTH wheels count)
  if(NOT count EQUAL 1)
    message(FATAL_ERROR "python_pip_install: expected one wheel in ${WORK_DIR}/dist, found '${wheels}'")
  endif()
  execute_process(COMMAND "${PYTHON}" -c
    "import sys, zipfile; names = zipfile.ZipFile(sys.argv[1]).namelist(); print('\\n'.join(names))"
    "${wheels}" OUTPUT_VARIABLE members RESULT_VARIABLE rc)
  foreach(pattern "redlock_quorum/_native[^\n]*\\.so" "redlock_quorum/__init__\\.pyi"
      "redlock_quorum/py\\.typed" "redlock_quorum/__init__\\.py")
    if(NOT members MATCHES "${pattern}")
      message(FATAL_ERROR "python_pip_install: the wheel has no ${pattern}:\n${members}")
    endif()
  endforeach()
  message(STATUS "python_pip_install: the wheel holds the extension, the stubs and py.typed")
else()
  message(STATUS "python_pip_install: no wheel checked (python3 -m build is not installed)")
endif()

# 5. The installed package, from outside the export's python/ folder.
set(ENV{REDLOCK_INSTALLED_PACKAGE} "${venv}")
set(step_options WORKING_DIRECTORY "${WORK_DIR}")
run_step("the installed package's tests" "${vpython}" -m pytest -q -p no:cacheprovider -rs
  "${export}/python/tests/test_installed.py")
# Both ran: none skipped (as they are without REDLOCK_INSTALLED_PACKAGE).
if(NOT step_output MATCHES "2 passed" OR step_output MATCHES "skipped")
  message(FATAL_ERROR "python_pip_install: expected 2 tests passed, none skipped:\n${step_output}")
endif()
message(STATUS "python_pip_install: ${step_output}")
