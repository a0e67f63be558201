# `cpack -G DEB` for redlock (included at the end of RedlockInstall.cmake).
#
# One package, `redlock`, with everything `cmake --install` puts in the
# prefix: the `redlock` tool, the static library, the public headers, the
# CMake package (lib/cmake/redlock) and redlock.pc, under /usr.
#
# Why one package named `redlock` rather than the Debian split into
# libredlock-dev + redlock: the library is a static archive, so there is no
# runtime shared library to ship on its own; the only thing a non-developer
# needs is the tool. A split would be the next step (the install rules
# already use the components redlock_runtime and redlock_development).
#
# Dependencies:
#   - the tool's shared libraries (libuv1, libhiredis0.14, libtomlplusplus3,
#     libstdc++6, libc6, and libasan/libubsan for a sanitized build) come
#     from dpkg-shlibdeps when it is installed (package dpkg-dev, pulled in
#     by build-essential), otherwise from the explicit list below;
#   - the development files need the -dev packages: redlockConfig.cmake
#     finds libuv, hiredis and toml++, and linking the static archive needs
#     all three.
#
# Build:  cpack -G DEB --config <build>/CPackConfig.cmake
# Test:   tests/downstream/deb_check.cmake (ctest deb_package).
if(NOT CMAKE_SOURCE_DIR STREQUAL PROJECT_SOURCE_DIR)
  # A parent project owns CPack; do not configure it behind its back.
  return()
endif()

set(CPACK_PACKAGE_NAME "redlock")
set(CPACK_PACKAGE_VENDOR "redlock")
set(CPACK_PACKAGE_VERSION "${PROJECT_VERSION}")
set(CPACK_PACKAGE_VERSION_MAJOR "${PROJECT_VERSION_MAJOR}")
set(CPACK_PACKAGE_VERSION_MINOR "${PROJECT_VERSION_MINOR}")
set(CPACK_PACKAGE_VERSION_PATCH "${PROJECT_VERSION_PATCH}")
set(CPACK_PACKAGE_CONTACT "redlock maintainers <redlock@localhost>")
set(CPACK_PACKAGE_DESCRIPTION_SUMMARY
  "Redlock distributed locks over N independent Redis masters (C++20 library and CLI)")
set(CPACK_PACKAGE_DESCRIPTION
  "redlock takes locks held by a majority of N independent Redis masters
(the Redlock algorithm) on a libuv event loop with hiredis, with
self-renewing guards, quorum fencing tokens and a node-amnesia defence.
This package holds the `redlock` command-line tool, the static library,
its C++20 headers, a CMake package (find_package(redlock CONFIG)) and a
pkg-config module (redlock.pc).")
set(CPACK_PACKAGING_INSTALL_PREFIX "/usr")
set(CPACK_GENERATOR "DEB")
# Every install component goes into the one package.
set(CPACK_DEB_COMPONENT_INSTALL OFF)

set(CPACK_DEBIAN_PACKAGE_MAINTAINER "${CPACK_PACKAGE_CONTACT}")
set(CPACK_DEBIAN_PACKAGE_SECTION "libdevel")
set(CPACK_DEBIAN_PACKAGE_PRIORITY "optional")
# redlock_<version>-1_<arch>.deb, the Debian file name.
set(CPACK_DEBIAN_FILE_NAME "DEB-DEFAULT")
set(CPACK_DEBIAN_PACKAGE_RELEASE "1")

set(_redlock_deb_dev_depends "libuv1-dev, libhiredis-dev, libtomlplusplus-dev, libssl-dev")
find_program(REDLOCK_DPKG_SHLIBDEPS dpkg-shlibdeps)
mark_as_advanced(REDLOCK_DPKG_SHLIBDEPS)
if(REDLOCK_DPKG_SHLIBDEPS)
  set(CPACK_DEBIAN_PACKAGE_SHLIBDEPS ON)
  set(CPACK_DEBIAN_PACKAGE_DEPENDS "${_redlock_deb_dev_depends}")
else()
  # What the tool links dynamically on Debian 12 (bookworm).
  set(CPACK_DEBIAN_PACKAGE_SHLIBDEPS OFF)
  set(CPACK_DEBIAN_PACKAGE_DEPENDS
    "libc6, libstdc++6, libgcc-s1, libuv1, libhiredis0.14, libtomlplusplus3, libssl3, ${_redlock_deb_dev_depends}")
endif()
unset(_redlock_deb_dev_depends)
# redlock-chaos starts redis-server processes; the library does not need one.
set(CPACK_DEBIAN_PACKAGE_RECOMMENDS "redis-server")
# redlock-chaos --clock faketime runs the nodes under libfaketime.
set(CPACK_DEBIAN_PACKAGE_SUGGESTS "libfaketime")

# `cpack --config CPackSourceConfig.cmake` would otherwise pack build trees.
set(CPACK_SOURCE_IGNORE_FILES "/\\\\.git/" "/build[^/]*/")

include(CPack)
