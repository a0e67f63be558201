# The chaos report in a real browser: a short real run of two demo
# scenarios (s07, the pause before a write, and s14, the restart without
# persistence; both variants, seed 1) against redis-server nodes the
# harness starts, then headless Chromium (Debian's chromium) opens the index
# and every report, and report_browser_check.mjs asserts on the DOM (the
# expected verdicts, descriptions, narrative, counter chart, node rows with
# content, the stale write marked, no overlapping labels, no script error)
# and keeps a full-page screenshot of each page in ${OUT}/screenshots.
# Prints "SKIPPED:" (the test's skip expression) when chromium or node is
# missing.
#
#   cmake -DCHAOS=<redlock-chaos> -DCATALOG=<scenarios dir> -DSCRIPT=<.mjs>
#         -DOUT=<dir> -P render_check.cmake
find_program(CHROMIUM NAMES chromium chromium-browser)
find_program(NODE NAMES node nodejs)
if(NOT CHROMIUM OR NOT NODE)
  message("SKIPPED: chromium or node is not installed (apt-get install chromium nodejs)")
  return()
endif()

file(REMOVE_RECURSE "${OUT}")
file(MAKE_DIRECTORY "${OUT}")
# The run's own verdicts are the chaos.* tests' business: here a failed
# expectation still renders, and the pages are what is checked.
execute_process(COMMAND "${CHAOS}" run "${CATALOG}/s07-pause-before-write.toml"
    "${CATALOG}/s14-restart-without-persistence.toml" --seed 1 --out "${OUT}/run"
  OUTPUT_VARIABLE summary ERROR_VARIABLE progress RESULT_VARIABLE rc TIMEOUT 120)
message("${summary}")
if(NOT EXISTS "${OUT}/run/index.html")
  message(FATAL_ERROR "the run wrote no index (${rc}): ${progress}")
endif()

execute_process(COMMAND "${NODE}" "${SCRIPT}" "${CHROMIUM}" "${OUT}/run/index.html"
    "${OUT}/screenshots"
  RESULT_VARIABLE rc TIMEOUT 170)
if(NOT rc EQUAL 0)
  message(FATAL_ERROR "the pages failed the browser check (${rc})")
endif()
