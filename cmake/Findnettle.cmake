# Finds GNU Nettle's low-level hashes (Debian: nettle-dev) and provides
# nettle::nettle. Headers are used as <nettle/sha1.h>.
include(FindPackageHandleStandardArgs)
find_package(PkgConfig QUIET)
if(PkgConfig_FOUND)
  pkg_check_modules(PC_NETTLE QUIET nettle)
endif()
find_path(NETTLE_INCLUDE_DIR nettle/sha1.h HINTS ${PC_NETTLE_INCLUDE_DIRS})
find_library(NETTLE_LIBRARY NAMES nettle HINTS ${PC_NETTLE_LIBRARY_DIRS})
find_package_handle_standard_args(nettle REQUIRED_VARS NETTLE_LIBRARY NETTLE_INCLUDE_DIR
  VERSION_VAR PC_NETTLE_VERSION)
if(nettle_FOUND AND NOT TARGET nettle::nettle)
  add_library(nettle::nettle UNKNOWN IMPORTED)
  set_target_properties(nettle::nettle PROPERTIES
    IMPORTED_LOCATION "${NETTLE_LIBRARY}"
    INTERFACE_INCLUDE_DIRECTORIES "${NETTLE_INCLUDE_DIR}")
endif()
mark_as_advanced(NETTLE_INCLUDE_DIR NETTLE_LIBRARY)
