#!/bin/sh
# ctest docker_compose_config: validates a compose file without a Docker
# engine (`config` only parses, interpolates and checks the file).
# Usage: check-compose.sh docker-compose.yml
# Exits 77 (ctest SKIP_RETURN_CODE) when neither Debian's docker-compose nor
# the `docker compose` plugin can run here. Installs nothing.
set -u
file=${1:?usage: check-compose.sh FILE}

if command -v docker-compose >/dev/null 2>&1 && docker-compose version >/dev/null 2>&1; then
  echo "docker_compose_config: docker-compose -f $file config -q"
  exec docker-compose -f "$file" config -q
fi
if command -v docker >/dev/null 2>&1 && docker compose version >/dev/null 2>&1; then
  echo "docker_compose_config: docker compose -f $file config -q"
  exec docker compose -f "$file" config -q
fi
echo "docker_compose_config: skipped: neither docker-compose nor 'docker compose' is available"
exit 77
