# The mixed-fleet test's node packages: bench/peers' package.json and
# lockfile (node-redlock 4.2.0 with ioredis, pinned there) copied to DEST
# and installed by `npm ci`, unless DEST/node_modules already holds what the
# lockfile names. Without npm it says so and installs nothing: the test then
# skips. Run as: cmake -DPEERS=<bench/peers> -DDEST=<dir> -P npm_ci.cmake
find_program(NPM npm)
if(NOT NPM)
  message(STATUS "npm not found: the mixed-fleet test will be skipped")
  return()
endif()
file(MAKE_DIRECTORY "${DEST}")
file(COPY "${PEERS}/package.json" "${PEERS}/package-lock.json" "${PEERS}/.npmrc"
  DESTINATION "${DEST}")
# npm records what it installed in node_modules/.package-lock.json; a
# lockfile newer than that record means node_modules is stale.
set(record "${DEST}/node_modules/.package-lock.json")
if(EXISTS "${record}" AND NOT "${DEST}/package-lock.json" IS_NEWER_THAN "${record}")
  return()
endif()
execute_process(
  COMMAND "${NPM}" ci --no-audit --no-fund --prefer-offline
  WORKING_DIRECTORY "${DEST}"
  RESULT_VARIABLE status
  OUTPUT_VARIABLE output
  ERROR_VARIABLE output
  TIMEOUT 240)
if(NOT status EQUAL 0)
  message(FATAL_ERROR "npm ci in ${DEST} failed (${status}):\n${output}")
endif()
