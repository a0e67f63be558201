# `cpack -G DEB` for redlock (included at the end of RedlockInstall.cmake):
# the Debian split, one package per install component.
#
#   component            package                 what
#   redlock_runtime      libredlock<SOVERSION>   libredlock.so.<SOVERSION> (shared build only)
#   redlock_development  libredlock-dev          headers, CMake package, redlock.pc,
#                                                libredlock.so, libredlock.a
#   redlock_tools        redlock-tools           redlock, redlock-chaos, the scenario
#                                                catalog, their manual pages
#   redlock_python       python3-redlock-quorum  the redlock_quorum module
#
# The packages a Debian user expects come from a shared build
# (-DBUILD_SHARED_LIBS=ON, with -DCMAKE_INSTALL_PREFIX=/usr so that the
# library goes to the multiarch directory). A static build packs the same
# packages but libredlock<SOVERSION>: libredlock-dev then holds only the
# archive, and the Python module has the library linked in.
#
# Dependencies between the packages, and why:
#   - libredlock-dev depends on libredlock<SOVERSION> (= this version): its
#     libredlock.so link and its CMake package point at that library;
#   - python3-redlock-quorum depends on libredlock<SOVERSION> (= this
#     version) in a shared build, where the module links libredlock.so;
#   - redlock-tools depends on no library package: the tools use
#     redlock::detail, which the shared library does not export, so they
#     link redlock::internal, the static archive of the same objects, in
#     either build (CMakeLists.txt).
# The shared libraries each package's binaries need (libuv1, libhiredis,
# libtomlplusplus, libstdc++6, ...) come from dpkg-shlibdeps (package
# dpkg-dev), and libssl3, which the library loads when a TLS node is
# configured, is named explicitly; libredlock-dev adds the -dev packages that
# redlockConfig.cmake, redlock.pc and the static archive need (not
# libssl-dev: see below).
#
# Each package ships /usr/share/doc/<package>/copyright and
# changelog.Debian.gz, and, where lintian has a tag that cannot be fixed,
# /usr/share/lintian/overrides/<package> with the reason next to each tag
# (cmake/debian/*.lintian-overrides; docs/packaging.md lists them). The
# library package has a shlibs file and activates the ldconfig trigger.
#
# Build:  cmake -S . -B build-deb -DBUILD_SHARED_LIBS=ON -DCMAKE_INSTALL_PREFIX=/usr
#         cmake --build build-deb && (cd build-deb && cpack -G DEB)
# Test:   tests/downstream/deb_check.cmake (ctest deb_packages).
if(NOT CMAKE_SOURCE_DIR STREQUAL PROJECT_SOURCE_DIR)
  # A parent project owns CPack; do not configure it behind its back.
  return()
endif()

include(GNUInstallDirs)
include(RedlockManPages)

# The default is a placeholder under the reserved .invalid domain (RFC 2606):
# whoever distributes the packages sets their own address.
set(REDLOCK_DEB_MAINTAINER "redlock maintainers <maintainers@redlock.invalid>"
  CACHE STRING "The Maintainer field of the Debian packages (name <address>)")
set(REDLOCK_DEB_RELEASE "1" CACHE STRING "The Debian revision of the packages")
mark_as_advanced(REDLOCK_DEB_MAINTAINER REDLOCK_DEB_RELEASE)
set(REDLOCK_DEB_VERSION "${PROJECT_VERSION}-${REDLOCK_DEB_RELEASE}")
set(REDLOCK_SOVERSION "${REDLOCK_ABI}")

set(_redlock_lib_package "libredlock${REDLOCK_SOVERSION}")
get_target_property(_redlock_type redlock TYPE)
set(_redlock_components redlock_development)
if(_redlock_type STREQUAL "SHARED_LIBRARY")
  list(PREPEND _redlock_components redlock_runtime)
endif()
if(TARGET redlock_cli)
  list(APPEND _redlock_components redlock_tools)
endif()
if(TARGET redlock_quorum_native)
  list(APPEND _redlock_components redlock_python)
endif()

set(redlock_runtime_PACKAGE "${_redlock_lib_package}")
set(redlock_development_PACKAGE "libredlock-dev")
set(redlock_tools_PACKAGE "redlock-tools")
set(redlock_python_PACKAGE "python3-redlock-quorum")

# /usr/share/doc/<package>/{copyright,changelog.Debian.gz} and the lintian
# overrides, per package. gzip -9n: no name or time stamp in the header, so
# the file is the same at every build.
set(_redlock_deb_dir "${PROJECT_BINARY_DIR}/debian")
configure_file("${CMAKE_CURRENT_LIST_DIR}/debian/copyright.in" "${_redlock_deb_dir}/copyright" @ONLY)
configure_file("${CMAKE_CURRENT_LIST_DIR}/debian/changelog.in" "${_redlock_deb_dir}/changelog.Debian" @ONLY)
find_program(REDLOCK_GZIP gzip)
mark_as_advanced(REDLOCK_GZIP)
if(REDLOCK_GZIP)
  execute_process(COMMAND "${REDLOCK_GZIP}" -9nc "${_redlock_deb_dir}/changelog.Debian"
    OUTPUT_FILE "${_redlock_deb_dir}/changelog.Debian.gz" RESULT_VARIABLE _redlock_gzip_rc)
  if(NOT _redlock_gzip_rc EQUAL 0)
    message(FATAL_ERROR "redlock: gzip of ${_redlock_deb_dir}/changelog.Debian failed")
  endif()
endif()
foreach(_component IN LISTS _redlock_components)
  set(_package "${${_component}_PACKAGE}")
  install(FILES "${_redlock_deb_dir}/copyright"
    DESTINATION "${CMAKE_INSTALL_DATAROOTDIR}/doc/${_package}" COMPONENT ${_component})
  if(REDLOCK_GZIP)
    install(FILES "${_redlock_deb_dir}/changelog.Debian.gz"
      DESTINATION "${CMAKE_INSTALL_DATAROOTDIR}/doc/${_package}" COMPONENT ${_component})
  endif()
  # The overrides file is named for the package; libredlock<SOVERSION>'s
  # template is libredlock.lintian-overrides.
  set(_overrides_name "${_package}")
  if(_component STREQUAL "redlock_runtime")
    set(_overrides_name libredlock)
  endif()
  set(_overrides "${CMAKE_CURRENT_LIST_DIR}/debian/${_overrides_name}.lintian-overrides")
  if(EXISTS "${_overrides}")
    configure_file("${_overrides}" "${_redlock_deb_dir}/${_package}.lintian-overrides" @ONLY)
    install(FILES "${_redlock_deb_dir}/${_package}.lintian-overrides"
      DESTINATION "${CMAKE_INSTALL_DATAROOTDIR}/lintian/overrides"
      RENAME "${_package}" COMPONENT ${_component})
  endif()
endforeach()

set(CPACK_PACKAGE_NAME "redlock")
set(CPACK_PACKAGE_VENDOR "redlock")
set(CPACK_PACKAGE_VERSION "${PROJECT_VERSION}")
set(CPACK_PACKAGE_VERSION_MAJOR "${PROJECT_VERSION_MAJOR}")
set(CPACK_PACKAGE_VERSION_MINOR "${PROJECT_VERSION_MINOR}")
set(CPACK_PACKAGE_VERSION_PATCH "${PROJECT_VERSION_PATCH}")
set(CPACK_PACKAGE_CONTACT "${REDLOCK_DEB_MAINTAINER}")
# No CPACK_PACKAGE_DESCRIPTION_SUMMARY: CPack would put the same first line
# on every package; each description below starts with its own.
set(CPACK_PACKAGING_INSTALL_PREFIX "/usr")
set(CPACK_GENERATOR "DEB")
set(CPACK_DEB_COMPONENT_INSTALL ON)
set(CPACK_COMPONENTS_ALL ${_redlock_components})
# Release binaries without debug sections (lintian: unstripped-binary-or-object).
set(CPACK_STRIP_FILES ON)

set(CPACK_DEBIAN_PACKAGE_MAINTAINER "${REDLOCK_DEB_MAINTAINER}")
set(CPACK_DEBIAN_PACKAGE_PRIORITY "optional")
set(CPACK_DEBIAN_PACKAGE_RELEASE "${REDLOCK_DEB_RELEASE}")
set(CPACK_DEBIAN_PACKAGE_SOURCE "redlock")
# <package>_<version>-<release>_<arch>.deb, the Debian file names.
set(CPACK_DEBIAN_FILE_NAME "DEB-DEFAULT")
# Debian's own packages install files 0644 and directories 0755 as root.
set(CPACK_DEBIAN_PACKAGE_CONTROL_STRICT_PERMISSION ON)

find_program(REDLOCK_DPKG_SHLIBDEPS dpkg-shlibdeps)
mark_as_advanced(REDLOCK_DPKG_SHLIBDEPS)
if(REDLOCK_DPKG_SHLIBDEPS)
  set(CPACK_DEBIAN_PACKAGE_SHLIBDEPS ON)
  # The Python module needs libredlock.so.<SOVERSION>, which no installed
  # package provides yet: dpkg-shlibdeps finds it in the build tree and
  # leaves it out (the explicit libredlock<SOVERSION> dependency names it).
  set(CPACK_DEBIAN_PACKAGE_SHLIBDEPS_PRIVATE_DIRS "${PROJECT_BINARY_DIR}")
  # libssl is loaded with dlopen when a TLS node is configured
  # (lib/transport/openssl_api.hpp), which dpkg-shlibdeps cannot see.
  set(_redlock_tool_libs "libssl3")
else()
  # What the binaries link dynamically on Debian 12 (bookworm).
  set(CPACK_DEBIAN_PACKAGE_SHLIBDEPS OFF)
  set(_redlock_tool_libs "libc6, libstdc++6, libgcc-s1, libuv1, libhiredis0.14, libtomlplusplus3, libssl3, libnettle8")
endif()

# libredlock<SOVERSION>.
set(CPACK_DEBIAN_REDLOCK_RUNTIME_PACKAGE_NAME "${_redlock_lib_package}")
set(CPACK_DEBIAN_REDLOCK_RUNTIME_PACKAGE_SECTION "libs")
set(CPACK_DEBIAN_REDLOCK_RUNTIME_PACKAGE_DEPENDS "${_redlock_tool_libs}")
# DEBIAN/shlibs: "libredlock <SOVERSION> libredlock<SOVERSION> (>= <version>)",
# what dpkg-shlibdeps puts in the Depends of a program linked against it.
# Written here: CPack's CPACK_DEBIAN_PACKAGE_GENERATE_SHLIBS applies to every
# package, and the tools' and the Python module's shared objects have no
# SONAME to list.
file(WRITE "${_redlock_deb_dir}/shlibs"
  "libredlock ${REDLOCK_SOVERSION} ${_redlock_lib_package} (>= ${PROJECT_VERSION})\n")
# The ldconfig trigger (lintian: lacks-ldconfig-trigger). CPack 3.25 also
# writes a postinst and postrm that call ldconfig for a library under
# /usr/lib, with no setting to turn that off: the lintian override
# maintscript-calls-ldconfig says so.
set(CPACK_DEBIAN_REDLOCK_RUNTIME_PACKAGE_CONTROL_EXTRA
  "${_redlock_deb_dir}/shlibs" "${CMAKE_CURRENT_LIST_DIR}/debian/triggers")
set(CPACK_DEBIAN_REDLOCK_RUNTIME_DESCRIPTION
  "Redlock distributed locks over independent Redis masters (library)
redlock takes locks held by a majority of N independent Redis masters (the
Redlock algorithm) on a libuv event loop with hiredis, with self-renewing
guards, quorum fencing tokens and a node-amnesia defence.
This package holds the shared library, libredlock.so.${REDLOCK_SOVERSION}.")

# libredlock-dev.
set(CPACK_DEBIAN_REDLOCK_DEVELOPMENT_PACKAGE_NAME "libredlock-dev")
set(CPACK_DEBIAN_REDLOCK_DEVELOPMENT_PACKAGE_SECTION "libdevel")
# No libssl-dev: OpenSSL's headers are used only inside the library, and
# OpenSSL is loaded with dlopen, so neither the headers nor a link against
# it is asked of a user; libssl3 is named for the static archive, which
# loads it the same way.
set(_redlock_dev_depends "libuv1-dev, libhiredis-dev, libtomlplusplus-dev, nettle-dev, libssl3")
if(_redlock_type STREQUAL "SHARED_LIBRARY")
  string(PREPEND _redlock_dev_depends "${_redlock_lib_package} (= ${REDLOCK_DEB_VERSION}), ")
endif()
set(CPACK_DEBIAN_REDLOCK_DEVELOPMENT_PACKAGE_DEPENDS "${_redlock_dev_depends}")
set(CPACK_DEBIAN_REDLOCK_DEVELOPMENT_DESCRIPTION
  "Redlock distributed locks over independent Redis masters (development)
redlock takes locks held by a majority of N independent Redis masters (the
Redlock algorithm) on a libuv event loop with hiredis, with self-renewing
guards, quorum fencing tokens and a node-amnesia defence.
This package holds the C++20 headers, the CMake package
(find_package(redlock CONFIG)), the pkg-config module redlock.pc and the
static library.")

# redlock-tools.
set(CPACK_DEBIAN_REDLOCK_TOOLS_PACKAGE_NAME "redlock-tools")
set(CPACK_DEBIAN_REDLOCK_TOOLS_PACKAGE_SECTION "utils")
set(CPACK_DEBIAN_REDLOCK_TOOLS_PACKAGE_DEPENDS "${_redlock_tool_libs}")
# redlock-chaos starts redis-server processes; `redlock` talks to any Redis.
set(CPACK_DEBIAN_REDLOCK_TOOLS_PACKAGE_RECOMMENDS "redis-server")
# redlock-chaos --clock faketime runs the nodes under libfaketime.
set(CPACK_DEBIAN_REDLOCK_TOOLS_PACKAGE_SUGGESTS "libfaketime")
set(CPACK_DEBIAN_REDLOCK_TOOLS_DESCRIPTION
  "Redlock distributed locks over independent Redis masters (tools)
redlock takes locks held by a majority of N independent Redis masters (the
Redlock algorithm), with self-renewing locks and quorum fencing tokens.
This package holds the redlock command (take, renew, release and inspect
locks; run a command under a lock), and redlock-chaos, which runs fault
scenarios against local redis-server nodes and checks the lock histories,
with its scenario catalog.")

# python3-redlock-quorum.
if(TARGET redlock_quorum_native)
  set(CPACK_DEBIAN_REDLOCK_PYTHON_PACKAGE_NAME "python3-redlock-quorum")
  set(CPACK_DEBIAN_REDLOCK_PYTHON_PACKAGE_SECTION "python")
  # The extension module is built for this one interpreter version.
  set(_redlock_python_depends
    "python3 (>= ${Python3_VERSION_MAJOR}.${Python3_VERSION_MINOR}~)")
  math(EXPR _redlock_python_next "${Python3_VERSION_MINOR} + 1")
  string(APPEND _redlock_python_depends
    ", python3 (<< ${Python3_VERSION_MAJOR}.${_redlock_python_next})")
  if(_redlock_type STREQUAL "SHARED_LIBRARY")
    string(APPEND _redlock_python_depends ", ${_redlock_lib_package} (= ${REDLOCK_DEB_VERSION})")
  endif()
  if(_redlock_tool_libs)
    string(APPEND _redlock_python_depends ", ${_redlock_tool_libs}")
  endif()
  set(CPACK_DEBIAN_REDLOCK_PYTHON_PACKAGE_DEPENDS "${_redlock_python_depends}")
  # Byte-compiled on install and the __pycache__ files removed before
  # removal, as dh_python3 does for Debian's python3-* packages: otherwise
  # an import by root leaves __pycache__ behind after dpkg -r.
  set(CPACK_DEBIAN_REDLOCK_PYTHON_PACKAGE_CONTROL_EXTRA
    "${CMAKE_CURRENT_LIST_DIR}/debian/python3-redlock-quorum/postinst"
    "${CMAKE_CURRENT_LIST_DIR}/debian/python3-redlock-quorum/prerm")
  set(CPACK_DEBIAN_REDLOCK_PYTHON_DESCRIPTION
    "Redlock distributed locks over independent Redis masters (Python 3)
redlock takes locks held by a majority of N independent Redis masters (the
Redlock algorithm), with self-renewing locks and quorum fencing tokens.
This package holds the Python 3 module redlock_quorum, a binding of the C++
library with blocking and asyncio interfaces.")
endif()

# `cpack --config CPackSourceConfig.cmake` would otherwise pack build trees.
set(CPACK_SOURCE_IGNORE_FILES "/\\\\.git/" "/build[^/]*/")

include(CPack)

unset(_redlock_type)
unset(_redlock_components)
unset(_redlock_lib_package)
unset(_redlock_deb_dir)
unset(_redlock_tool_libs)
unset(_redlock_dev_depends)
unset(_redlock_python_depends)
unset(_redlock_python_next)
