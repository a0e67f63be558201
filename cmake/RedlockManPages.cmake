# Manual pages for the tools, made at build time by help2man from their own
# `--help` and `--version` (so a page never disagrees with the program), then
# compressed with gzip -9n (no name or time stamp: the same bytes at every
# build). Installed to man1 in the redlock_tools component (redlock-tools).
#
# Made only when help2man and gzip are installed (scripts/setup installs
# help2man), the tools are built, and the programs can run on this machine:
# not when cross-compiling, and not in sanitizer or fuzz builds, whose
# instrumented programs are not what a package ships.
if(NOT TARGET redlock_cli OR NOT TARGET redlock-chaos)
  return()
endif()
find_program(REDLOCK_HELP2MAN help2man)
find_program(REDLOCK_GZIP gzip)
mark_as_advanced(REDLOCK_HELP2MAN REDLOCK_GZIP)
if(NOT REDLOCK_HELP2MAN OR NOT REDLOCK_GZIP OR CMAKE_CROSSCOMPILING OR REDLOCK_SANITIZE
    OR REDLOCK_FUZZ)
  message(STATUS "redlock: no manual pages (needs help2man and gzip, a native, uninstrumented build)")
  return()
endif()

set(_redlock_man_dir "${PROJECT_BINARY_DIR}/man")
set(_redlock_man_pages "")
# name|target|NAME-section text
foreach(_entry
    "redlock|redlock_cli|take, renew, release and inspect Redlock locks over independent Redis masters"
    "redlock-chaos|redlock-chaos|run fault scenarios against local Redis nodes and check the lock histories")
  string(REPLACE "|" ";" _entry "${_entry}")
  list(GET _entry 0 _name)
  list(GET _entry 1 _target)
  list(GET _entry 2 _whatis)
  set(_page "${_redlock_man_dir}/${_name}.1")
  # help2man runs the program; -N: no pointer to a Texinfo manual.
  add_custom_command(OUTPUT "${_page}.gz"
    COMMAND "${CMAKE_COMMAND}" -E make_directory "${_redlock_man_dir}"
    COMMAND "${REDLOCK_HELP2MAN}" -N --name "${_whatis}" --output "${_page}"
      "$<TARGET_FILE:${_target}>"
    COMMAND "${REDLOCK_GZIP}" -9nf "${_page}"
    DEPENDS ${_target}
    COMMENT "help2man: ${_name}.1.gz"
    VERBATIM)
  list(APPEND _redlock_man_pages "${_page}.gz")
endforeach()
add_custom_target(redlock_man_pages ALL DEPENDS ${_redlock_man_pages})
install(FILES ${_redlock_man_pages}
  DESTINATION "${CMAKE_INSTALL_MANDIR}/man1"
  COMPONENT redlock_tools)

unset(_redlock_man_dir)
unset(_redlock_man_pages)
unset(_entry)
unset(_name)
unset(_target)
unset(_whatis)
unset(_page)
