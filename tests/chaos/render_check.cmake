# Renders a report in headless Chromium (Debian's chromium package) and
# checks that the browser built the page: the DOM it dumps holds the SVG
# timeline with its finding marker, and the screenshot is a real image.
# Prints "SKIPPED:" (the test's skip expression) when chromium is missing.
#
#   cmake -DUNIT_TESTS=<redlock_chaos_unit_tests> -DOUT=<dir> -P render_check.cmake
find_program(CHROMIUM NAMES chromium chromium-browser)
if(NOT CHROMIUM)
  message("SKIPPED: chromium is not installed (apt-get install chromium)")
  return()
endif()

file(REMOVE_RECURSE "${OUT}")
file(MAKE_DIRECTORY "${OUT}")
set(page "${OUT}/sample.html")
set(ENV{CHAOS_REPORT_SAMPLE} "${page}")
execute_process(COMMAND "${UNIT_TESTS}" --gtest_filter=ReportSample.* RESULT_VARIABLE rc)
if(NOT rc EQUAL 0 OR NOT EXISTS "${page}")
  message(FATAL_ERROR "the sample report was not written (${rc})")
endif()

set(flags --headless --no-sandbox --disable-gpu --no-first-run --user-data-dir=${OUT}/profile)
execute_process(COMMAND "${CHROMIUM}" ${flags} --dump-dom "file://${page}"
  OUTPUT_VARIABLE dom ERROR_VARIABLE ignored RESULT_VARIABLE rc TIMEOUT 60)
if(NOT rc EQUAL 0)
  message(FATAL_ERROR "chromium --dump-dom failed (${rc})")
endif()
foreach(expected "<svg" "class=\"finding\"" "class=\"window" "C3")
  string(FIND "${dom}" "${expected}" at)
  if(at EQUAL -1)
    message(FATAL_ERROR "the rendered DOM lacks ${expected}")
  endif()
endforeach()

set(png "${OUT}/sample.png")
execute_process(COMMAND "${CHROMIUM}" ${flags} --screenshot=${png} --window-size=1280,1400
  "file://${page}" OUTPUT_QUIET ERROR_QUIET RESULT_VARIABLE rc TIMEOUT 60)
file(SIZE "${png}" size)
if(NOT rc EQUAL 0 OR size LESS 20000)
  message(FATAL_ERROR "chromium's screenshot is missing or blank (${rc}, ${size} bytes)")
endif()
message("rendered: ${png} (${size} bytes)")
