# Installs redlock for consumers: the library, its public headers, a CMake
# package (find_package(redlock CONFIG) -> redlock::redlock) and a pkg-config
# module (redlock.pc). Included by the top-level CMakeLists.txt when
# REDLOCK_INSTALL is on; tests/downstream builds a program against the result.
#
# Everything installed is relocatable: `cmake --install build --prefix DIR`
# works for any DIR, whatever CMAKE_INSTALL_PREFIX was at configure time.
include(GNUInstallDirs)
include(CMakePackageConfigHelpers)

set(REDLOCK_INSTALL_CMAKEDIR "${CMAKE_INSTALL_LIBDIR}/cmake/redlock"
  CACHE STRING "Where redlockConfig.cmake is installed, relative to the prefix")
mark_as_advanced(REDLOCK_INSTALL_CMAKEDIR)

# A static archive carries no record of what it links, so its consumers must
# link hiredis and toml++ themselves; a shared library already names them.
get_target_property(_redlock_type redlock TYPE)
if(_redlock_type STREQUAL "STATIC_LIBRARY")
  set(REDLOCK_STATIC_LIBRARY ON)
else()
  set(REDLOCK_STATIC_LIBRARY OFF)
endif()

# INCLUDES DESTINATION puts <prefix>/include on the exported target even when
# the target's own INSTALL_INTERFACE include path was set before
# GNUInstallDirs was loaded (and so is empty).
install(TARGETS redlock
  EXPORT redlockTargets
  ARCHIVE DESTINATION "${CMAKE_INSTALL_LIBDIR}" COMPONENT redlock_development
  LIBRARY DESTINATION "${CMAKE_INSTALL_LIBDIR}" COMPONENT redlock_runtime
    NAMELINK_COMPONENT redlock_development
  RUNTIME DESTINATION "${CMAKE_INSTALL_BINDIR}" COMPONENT redlock_runtime
  INCLUDES DESTINATION "${CMAKE_INSTALL_INCLUDEDIR}")

# A shared build installs the static archive as well (libredlock.a, the
# objects of libredlock.so, including what the version script hides), as a
# Debian -dev package ships both: the CMake package's redlock::redlock stays
# the shared library, and `pkg-config --static` or -l:libredlock.a link the
# archive. -DREDLOCK_INSTALL_STATIC_ARCHIVE=OFF leaves it out.
include(CMakeDependentOption)
cmake_dependent_option(REDLOCK_INSTALL_STATIC_ARCHIVE
  "A shared build also installs the static archive libredlock.a" ON
  "NOT REDLOCK_STATIC_LIBRARY" OFF)
if(REDLOCK_INSTALL_STATIC_ARCHIVE)
  install(FILES "$<TARGET_FILE:redlock_internal>"
    DESTINATION "${CMAKE_INSTALL_LIBDIR}"
    RENAME "libredlock.a"
    COMPONENT redlock_development)
  # install(FILES) does not strip; `cmake --install --strip` (cpack with
  # CPACK_STRIP_FILES) drops the archive's debug sections as for the .so.
  if(CMAKE_STRIP)
    install(CODE "
      if(CMAKE_INSTALL_DO_STRIP)
        execute_process(COMMAND \"${CMAKE_STRIP}\" --strip-debug
          \"\$ENV{DESTDIR}\${CMAKE_INSTALL_PREFIX}/${CMAKE_INSTALL_LIBDIR}/libredlock.a\")
      endif()"
      COMPONENT redlock_development)
  endif()
endif()

# Only include/redlock is public; lib/ holds redlock::detail and is never
# installed.
install(DIRECTORY "${PROJECT_SOURCE_DIR}/include/redlock/"
  DESTINATION "${CMAKE_INSTALL_INCLUDEDIR}/redlock"
  COMPONENT redlock_development
  FILES_MATCHING PATTERN "*.hpp")
install(FILES "${PROJECT_BINARY_DIR}/include/redlock/export.hpp"
  DESTINATION "${CMAKE_INSTALL_INCLUDEDIR}/redlock"
  COMPONENT redlock_development)

install(EXPORT redlockTargets
  NAMESPACE redlock::
  FILE redlockTargets.cmake
  DESTINATION "${REDLOCK_INSTALL_CMAKEDIR}"
  COMPONENT redlock_development)

configure_package_config_file(
  "${CMAKE_CURRENT_LIST_DIR}/redlockConfig.cmake.in"
  "${PROJECT_BINARY_DIR}/redlockConfig.cmake"
  INSTALL_DESTINATION "${REDLOCK_INSTALL_CMAKEDIR}")
write_basic_package_version_file(
  "${PROJECT_BINARY_DIR}/redlockConfigVersion.cmake"
  VERSION "${PROJECT_VERSION}"
  COMPATIBILITY SameMajorVersion)
# Debian ships no usable CMake package for libuv or hiredis, so the config
# file finds them with the same find modules the build used.
install(FILES
    "${PROJECT_BINARY_DIR}/redlockConfig.cmake"
    "${PROJECT_BINARY_DIR}/redlockConfigVersion.cmake"
    "${PROJECT_SOURCE_DIR}/cmake/Findlibuv.cmake"
    "${PROJECT_SOURCE_DIR}/cmake/Findhiredis.cmake"
    "${PROJECT_SOURCE_DIR}/cmake/Findnettle.cmake"
  DESTINATION "${REDLOCK_INSTALL_CMAKEDIR}"
  COMPONENT redlock_development)

# pkg-config. prefix is computed from the .pc file's own location
# (${pcfiledir}) so the module stays right after `cmake --install --prefix`;
# an absolute libdir or includedir cannot be relocated and is written as is.
set(_redlock_pc_dir "${CMAKE_INSTALL_LIBDIR}/pkgconfig")
if(IS_ABSOLUTE "${CMAKE_INSTALL_LIBDIR}" OR IS_ABSOLUTE "${CMAKE_INSTALL_INCLUDEDIR}")
  set(REDLOCK_PC_PREFIX "${CMAKE_INSTALL_PREFIX}")
  set(REDLOCK_PC_LIBDIR "${CMAKE_INSTALL_FULL_LIBDIR}")
  set(REDLOCK_PC_INCLUDEDIR "${CMAKE_INSTALL_FULL_INCLUDEDIR}")
else()
  file(RELATIVE_PATH _redlock_pc_up "/prefix/${_redlock_pc_dir}" "/prefix")
  string(REGEX REPLACE "/$" "" _redlock_pc_up "${_redlock_pc_up}")
  set(REDLOCK_PC_PREFIX "\${pcfiledir}/${_redlock_pc_up}")
  set(REDLOCK_PC_LIBDIR "\${prefix}/${CMAKE_INSTALL_LIBDIR}")
  set(REDLOCK_PC_INCLUDEDIR "\${prefix}/${CMAKE_INSTALL_INCLUDEDIR}")
endif()
# libuv is public (the async client runs on the caller's uv_loop_t). hiredis
# and toml++ are private: needed only to link the static archive, which is
# what `pkg-config --static` is for. Threads is linked by the library itself
# when shared, so its flag is private too.
set(REDLOCK_PC_REQUIRES "libuv")
set(REDLOCK_PC_REQUIRES_PRIVATE "")
set(REDLOCK_PC_LIBS_PRIVATE "")
if(REDLOCK_STATIC_LIBRARY OR REDLOCK_INSTALL_STATIC_ARCHIVE)
  # (No libssl: the library loads it when a TLS node is configured.)
  set(REDLOCK_PC_REQUIRES_PRIVATE "hiredis tomlplusplus nettle")
  if(CMAKE_USE_PTHREADS_INIT)
    set(REDLOCK_PC_LIBS_PRIVATE "-pthread")
  elseif(CMAKE_THREAD_LIBS_INIT)
    set(REDLOCK_PC_LIBS_PRIVATE "${CMAKE_THREAD_LIBS_INIT}")
  endif()
  if(CMAKE_DL_LIBS)
    string(APPEND REDLOCK_PC_LIBS_PRIVATE " -l${CMAKE_DL_LIBS}")
  endif()
endif()
configure_file("${CMAKE_CURRENT_LIST_DIR}/redlock.pc.in" "${PROJECT_BINARY_DIR}/redlock.pc" @ONLY)
install(FILES "${PROJECT_BINARY_DIR}/redlock.pc"
  DESTINATION "${_redlock_pc_dir}"
  COMPONENT redlock_development)

unset(_redlock_type)
unset(_redlock_pc_dir)
unset(_redlock_pc_up)

include(RedlockPackaging)
