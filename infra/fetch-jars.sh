#!/usr/bin/env bash
# fetch-jars.sh <name> <what>: puts the jars of infra/<name>/pom.xml (a Java test server: mongodb,
# kafka) in a cache directory and prints that directory. Runs Maven once; later calls find the finished
# cache and return at once. <what> names the server in error messages.
#   cache: ${XDG_CACHE_HOME:-$HOME/.cache}/eggmesh/<name>-jars (refetched when pom.xml changes)
set -euo pipefail

name="$1"
what="$2"
infra="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
here="$infra/$name"
dir="${XDG_CACHE_HOME:-$HOME/.cache}/eggmesh/$name-jars"
stamp="$(sha256sum "$here/pom.xml" | cut -c1-16)"

if [ -f "$dir/.complete" ] && [ "$(cat "$dir/.complete")" = "$stamp" ]; then
  echo "$dir"
  exit 0
fi

# One run at a time (CI starts one in the background, a test setup may ask meanwhile): a second caller
# waits for the first and then finds its result.
mkdir -p "$(dirname "$dir")"
exec 9>"$dir.lock"
flock 9
if [ -f "$dir/.complete" ] && [ "$(cat "$dir/.complete")" = "$stamp" ]; then
  echo "$dir"
  exit 0
fi

"$BASH" "$infra/ensure-tools.sh" java
if ! command -v java >/dev/null 2>&1; then
  echo "eggmesh: $what needs Java 17 or newer on PATH (Debian: apt-get install openjdk-17-jre-headless)" >&2
  exit 3
fi
major="$(java -XshowSettings:properties -version 2>&1 | sed -n 's/^ *java.specification.version = //p')"
if [ -z "$major" ] || [ "${major%%.*}" -lt 17 ]; then
  echo "eggmesh: $what needs Java 17 or newer, found '${major:-unknown}' (Debian: apt-get install openjdk-17-jre-headless)" >&2
  exit 3
fi
if ! command -v mvn >/dev/null 2>&1; then
  echo "eggmesh: fetching the jars of $what needs Maven on PATH (Debian: apt-get install maven)" >&2
  exit 3
fi

# Fetch into a private directory, then move it into place: a run killed halfway leaves no half cache.
tmp="$(mktemp -d "$dir.tmp.XXXXXX")"
trap 'rm -rf "$tmp"' EXIT
mvn -q -B -f "$here/pom.xml" dependency:copy-dependencies -DoutputDirectory="$tmp" >&2
echo "$stamp" > "$tmp/.complete"
rm -rf "$dir"
mv -T "$tmp" "$dir"
echo "$dir"
