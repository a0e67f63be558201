# Finds hiredis (Debian's HiredisConfig.cmake defines no imported target) and
# provides hiredis::hiredis. Headers are used as <hiredis/read.h>.
include(FindPackageHandleStandardArgs)
find_package(PkgConfig QUIET)
if(PkgConfig_FOUND)
  pkg_check_modules(PC_HIREDIS QUIET hiredis)
endif()
find_path(HIREDIS_INCLUDE_DIR hiredis/hiredis.h)
find_library(HIREDIS_LIBRARY NAMES hiredis HINTS ${PC_HIREDIS_LIBRARY_DIRS})
find_package_handle_standard_args(hiredis REQUIRED_VARS HIREDIS_LIBRARY HIREDIS_INCLUDE_DIR
  VERSION_VAR PC_HIREDIS_VERSION)
if(hiredis_FOUND AND NOT TARGET hiredis::hiredis)
  add_library(hiredis::hiredis UNKNOWN IMPORTED)
  set_target_properties(hiredis::hiredis PROPERTIES
    IMPORTED_LOCATION "${HIREDIS_LIBRARY}"
    INTERFACE_INCLUDE_DIRECTORIES "${HIREDIS_INCLUDE_DIR}")
endif()
mark_as_advanced(HIREDIS_INCLUDE_DIR HIREDIS_LIBRARY)
