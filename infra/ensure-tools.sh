#!/usr/bin/env bash
# Installs the system tools the tests need when they are missing and this machine can install them
# (root with apt-get: Debian/Ubuntu, as on CI): Java 17+ and Maven for the MongoDB-wire test server,
# python3 with venv for schemathesis, Chromium for the GraphiQL browser test, jq and curl for the
# README examples, HAProxy for the optional HAProxy front door's tests, Go to build FerretDB (the second
# MongoDB-wire test server), PostgreSQL for the legacy systems of record (infra/postgres). Elsewhere it
# installs nothing; the callers then say what is missing.
#   usage: infra/ensure-tools.sh java|python|go|chromium|jq|curl|haproxy|postgres [...]
set -uo pipefail

missing=()
for tool in "$@"; do
  case "$tool" in
    java)
      command -v java >/dev/null 2>&1 || missing+=(openjdk-17-jre-headless)
      command -v mvn >/dev/null 2>&1 || missing+=(maven)
      ;;
    python)
      command -v python3 >/dev/null 2>&1 || missing+=(python3)
      python3 -c 'import ensurepip, venv' >/dev/null 2>&1 || missing+=(python3-venv)
      ;;
    go)
      command -v go >/dev/null 2>&1 || [ -x /usr/local/go/bin/go ] || missing+=(golang-go)
      ;;
    chromium)
      command -v chromium >/dev/null 2>&1 || missing+=(chromium)
      ;;
    postgres)
      compgen -G '/usr/lib/postgresql/*/bin/initdb' >/dev/null || command -v initdb >/dev/null 2>&1 || missing+=(postgresql)
      ;;
    jq | curl | haproxy)
      command -v "$tool" >/dev/null 2>&1 || missing+=("$tool")
      ;;
  esac
done
[ ${#missing[@]} -eq 0 ] && exit 0
if [ "$(id -u)" != 0 ] || ! command -v apt-get >/dev/null 2>&1; then
  echo "eggmesh: missing ${missing[*]}; install them (Debian: apt-get install ${missing[*]})" >&2
  exit 0
fi
echo "eggmesh: installing ${missing[*]} (apt-get)" >&2
{ apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends "${missing[@]}"; } >&2 ||
  echo "eggmesh: apt-get could not install ${missing[*]}" >&2
exit 0
