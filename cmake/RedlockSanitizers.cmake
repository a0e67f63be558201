# REDLOCK_SANITIZE=address,undefined or thread instruments every target,
# the tests included, so the whole suite runs under the sanitizer.
if(REDLOCK_SANITIZE)
  set(_flags -fsanitize=${REDLOCK_SANITIZE} -fno-omit-frame-pointer -g)
  if(REDLOCK_SANITIZE MATCHES "undefined")
    list(APPEND _flags -fno-sanitize-recover=undefined)
  endif()
  add_compile_options(${_flags})
  add_link_options(-fsanitize=${REDLOCK_SANITIZE})
endif()
