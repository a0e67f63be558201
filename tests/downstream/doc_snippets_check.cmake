# ctest api_doc_snippets_compile: every C++ snippet of a Markdown page
# (docs/api.md) compiles against the public headers, as printed. The same
# mechanism as readme_check.cmake: a script run by ctest reads the page;
# here each snippet is extracted into one translation unit and compiled.
#
# Every ```cpp block must follow a marker line that says how it is wrapped:
#   <!-- compiled: prelude -->  declarations the other snippets may use
#                               (the user's own functions they call), at
#                               file scope before every other snippet
#   <!-- compiled: file -->     whole declarations and functions: in a
#                               namespace of their own
#   <!-- compiled: body -->     statements: the body of a function
#                               `std::error_code (redlock::BlockingClient&
#                               client)` in a namespace of its own
# `#include` lines are hoisted to the top. A ```cpp block without a marker
# fails the test, so no snippet goes unchecked. Errors point at the page's
# own lines (#line).
#
# -DDOC=page.md -DWORK_DIR=dir -DCXX_COMPILER=c++ -DINCLUDE_DIRS=a|b
# [-DCXX_FLAGS=...]
cmake_minimum_required(VERSION 3.20)  # script mode: today's policies
foreach(var DOC WORK_DIR CXX_COMPILER INCLUDE_DIRS)
  if(NOT DEFINED ${var})
    message(FATAL_ERROR "doc_snippets_check.cmake: -D${var}=... is required")
  endif()
endforeach()

file(READ "${DOC}" page)
get_filename_component(page_name "${DOC}" NAME)

# The line (1-based) at byte offset `offset` of the page.
function(line_at offset out)
  string(SUBSTRING "${page}" 0 ${offset} before)
  string(REGEX MATCHALL "\n" newlines "${before}")
  list(LENGTH newlines count)
  math(EXPR line "${count} + 1")
  set(${out} ${line} PARENT_SCOPE)
endfunction()

set(marker "<!-- compiled: ")
set(includes "")
set(prelude "")
set(snippets "")
set(count 0)
set(position 0)
string(LENGTH "${page}" page_length)
while(TRUE)
  string(SUBSTRING "${page}" ${position} -1 rest)
  string(FIND "${rest}" "${marker}" found)
  if(found LESS 0)
    break()
  endif()
  math(EXPR at "${position} + ${found}")
  string(SUBSTRING "${page}" ${at} -1 rest)
  if(NOT rest MATCHES "^<!-- compiled: (prelude|file|body) -->\n```cpp\n")
    line_at(${at} line)
    message(FATAL_ERROR "${page_name}:${line}: a compiled: marker must say prelude, file or body "
                        "and be followed by a ```cpp line")
  endif()
  set(kind "${CMAKE_MATCH_1}")
  string(LENGTH "${CMAKE_MATCH_0}" head_length)
  math(EXPR code_start "${at} + ${head_length}")
  string(SUBSTRING "${page}" ${code_start} -1 rest)
  string(FIND "${rest}" "\n```" code_length)
  if(code_length LESS 0)
    line_at(${at} line)
    message(FATAL_ERROR "${page_name}:${line}: the snippet never ends")
  endif()
  string(SUBSTRING "${page}" ${code_start} ${code_length} code)
  line_at(${code_start} line)
  string(REGEX MATCHALL "#include [<\"][^>\"\n]+[>\"]" found_includes "${code}")
  list(APPEND includes ${found_includes})
  string(REGEX REPLACE "#include [<\"][^\n]*" "" code "${code}")
  set(located "#line ${line} \"${page_name}\"\n${code}\n")
  math(EXPR count "${count} + 1")
  if(kind STREQUAL "prelude")
    string(APPEND prelude "${located}")
  elseif(kind STREQUAL "file")
    string(APPEND snippets "namespace snippet_${count} {\n${located}}  // namespace snippet_${count}\n\n")
  else()
    string(APPEND snippets
      "namespace snippet_${count} {\n"
      "[[maybe_unused]] std::error_code body([[maybe_unused]] redlock::BlockingClient& client) {\n"
      "${located}"
      "  return {};\n"
      "}\n"
      "}  // namespace snippet_${count}\n\n")
  endif()
  math(EXPR position "${code_start} + ${code_length}")
endwhile()

# Every ```cpp block has its marker.
string(REGEX MATCHALL "\n```cpp\n" blocks "\n${page}")
list(LENGTH blocks block_count)
if(NOT block_count EQUAL count)
  message(FATAL_ERROR "${page_name}: ${block_count} ```cpp blocks but ${count} compiled: markers; "
                      "mark every C++ snippet")
endif()
if(count EQUAL 0)
  message(FATAL_ERROR "${page_name}: no compiled: snippet found")
endif()

list(REMOVE_DUPLICATES includes)
set(unit "// Generated from ${page_name} by doc_snippets_check.cmake: do not edit.\n")
string(APPEND unit "#include <redlock/redlock.hpp>\n")
foreach(include IN LISTS includes)
  string(APPEND unit "${include}\n")
endforeach()
string(APPEND unit "\nusing namespace std::chrono_literals;\n\n${prelude}\n${snippets}")
file(MAKE_DIRECTORY "${WORK_DIR}")
set(source "${WORK_DIR}/${page_name}.snippets.cpp")
file(WRITE "${source}" "${unit}")

string(REPLACE "|" ";" include_dirs "${INCLUDE_DIRS}")
set(include_flags "")
foreach(dir IN LISTS include_dirs)
  if(NOT dir STREQUAL "")
    list(APPEND include_flags "-I${dir}")
  endif()
endforeach()
separate_arguments(extra_flags UNIX_COMMAND "${CXX_FLAGS}")
# Unused names are fine in a fragment; anything else the build would warn
# about is an error here too.
execute_process(
  COMMAND "${CXX_COMPILER}" -std=c++20 -fsyntax-only -Wall -Wextra -Werror
          -Wno-unused-variable -Wno-unused-parameter -Wno-unused-but-set-variable
          ${extra_flags} ${include_flags} "${source}"
  RESULT_VARIABLE compiled
  OUTPUT_VARIABLE output
  ERROR_VARIABLE output)
if(NOT compiled EQUAL 0)
  message(FATAL_ERROR "${page_name}: a snippet does not compile (${source}):\n${output}")
endif()
message(STATUS "${page_name}: ${count} snippets compile")
