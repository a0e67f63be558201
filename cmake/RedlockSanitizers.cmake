# REDLOCK_SANITIZE=address,undefined or thread instruments every target,
# the tests included, so the whole suite runs under the sanitizer.
# The sanitizers' stacks need debug information: -g, unless the flags ask
# for some already (scripts/test gives -g1, line tables only: file:line in
# every stack for about two thirds of the compile time of -g).
string(TOUPPER "${CMAKE_BUILD_TYPE}" _redlock_build_type)
if(" ${CMAKE_CXX_FLAGS} ${CMAKE_CXX_FLAGS_${_redlock_build_type}}" MATCHES " -g")
  set(_redlock_debug_info "")
else()
  set(_redlock_debug_info -g)
endif()

if(REDLOCK_SANITIZE)
  set(_flags -fsanitize=${REDLOCK_SANITIZE} -fno-omit-frame-pointer ${_redlock_debug_info})
  if(REDLOCK_SANITIZE MATCHES "undefined")
    list(APPEND _flags -fno-sanitize-recover=undefined)
  endif()
  add_compile_options(${_flags})
  add_link_options(-fsanitize=${REDLOCK_SANITIZE})
endif()

# REDLOCK_FUZZ=ON (fuzz/CMakeLists.txt): every object is built with
# libFuzzer's coverage instrumentation plus ASan and UBSan
# (-fsanitize=fuzzer-no-link,...), so the targets see coverage inside the
# library, toml++ included; only the fuzz targets themselves link the
# libFuzzer runtime (-fsanitize=fuzzer).
if(REDLOCK_FUZZ)
  if(NOT CMAKE_CXX_COMPILER_ID MATCHES "Clang")
    message(FATAL_ERROR "REDLOCK_FUZZ needs clang (libFuzzer): configure with "
      "-DCMAKE_CXX_COMPILER=clang++ (got ${CMAKE_CXX_COMPILER_ID})")
  endif()
  if(REDLOCK_SANITIZE)
    message(FATAL_ERROR "REDLOCK_FUZZ brings its own sanitizers (address,undefined); "
      "leave REDLOCK_SANITIZE empty")
  endif()
  add_compile_options(-fsanitize=fuzzer-no-link,address,undefined
    -fno-sanitize-recover=undefined -fno-omit-frame-pointer ${_redlock_debug_info})
  add_link_options(-fsanitize=address,undefined)
endif()
