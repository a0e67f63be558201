# Warnings every target of the project is built with; errors only when
# REDLOCK_WERROR is on (CI), so a newer compiler never breaks a user's build.
function(redlock_set_warnings target)
  target_compile_options(${target} PRIVATE
    -Wall -Wextra -Wpedantic -Wconversion -Wsign-conversion -Wshadow
    -Wold-style-cast -Wnon-virtual-dtor -Woverloaded-virtual)
  if(REDLOCK_WERROR)
    target_compile_options(${target} PRIVATE -Werror)
  endif()
endfunction()
