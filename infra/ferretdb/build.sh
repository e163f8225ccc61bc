#!/usr/bin/env bash
# Builds FerretDB (a production MongoDB-wire server on SQLite, written by others) from its Go module
# source once and prints the binary's path; later calls find the finished binary and return at once.
# `go install github.com/FerretDB/FerretDB/cmd/ferretdb` builds a binary that panics at start for want
# of build/version/version.txt, so this copies the module source, writes that file, and builds there.
#   cache: ${XDG_CACHE_HOME:-$HOME/.cache}/eggmesh/ferretdb-<version>/ferretdb
set -euo pipefail

version="v1.24.2"
module="github.com/FerretDB/FerretDB"
dir="${XDG_CACHE_HOME:-$HOME/.cache}/eggmesh/ferretdb-$version"
binary="$dir/ferretdb"

if [ -x "$binary" ] && [ -f "$dir/.complete" ]; then
  echo "$binary"
  exit 0
fi

# One run at a time (CI starts one in the background, a test setup may ask meanwhile): a second caller
# waits for the first and then finds its result.
mkdir -p "$(dirname "$dir")"
exec 9>"$dir.lock"
flock 9
if [ -x "$binary" ] && [ -f "$dir/.complete" ]; then
  echo "$binary"
  exit 0
fi

go="${EGGMESH_GO:-}"
if [ -z "$go" ]; then
  if command -v go >/dev/null 2>&1; then go="$(command -v go)"; elif [ -x /usr/local/go/bin/go ]; then go=/usr/local/go/bin/go; fi
fi
if [ -z "$go" ]; then
  "$BASH" "$(dirname "${BASH_SOURCE[0]}")/../ensure-tools.sh" go
  go="$(command -v go || true)"
fi
# Go 1.21 and later fetch the toolchain FerretDB's go.mod asks for (go 1.24) from the Go proxy.
if [ -z "$go" ] || ! "$go" version | grep -Eq 'go1\.(2[1-9]|[3-9][0-9])'; then
  echo "eggmesh: building FerretDB needs Go 1.21 or newer on PATH (https://go.dev/dl/), found '${go:+$("$go" version)}'" >&2
  exit 3
fi

# Build in a private directory, then move it into place: a build killed halfway leaves no half binary.
tmp="$(mktemp -d "$dir.tmp.XXXXXX")"
trap 'chmod -R u+w "$tmp" 2>/dev/null; rm -rf "$tmp"' EXIT
source_dir="$(cd "$tmp" && GOFLAGS=-mod=mod "$go" mod download -json "$module@$version" | sed -n 's/^[[:space:]]*"Dir": "\(.*\)",$/\1/p')"
if [ -z "$source_dir" ]; then
  echo "eggmesh: go mod download $module@$version gave no source directory" >&2
  exit 3
fi
cp -R "$source_dir" "$tmp/src"
chmod -R u+w "$tmp/src"
printf '%s\n' "$version" > "$tmp/src/build/version/version.txt"
(cd "$tmp/src" && CGO_ENABLED=0 "$go" build -trimpath -o "$tmp/ferretdb" ./cmd/ferretdb) >&2
chmod -R u+w "$tmp/src" && rm -rf "$tmp/src"
echo "$version" > "$tmp/.complete"
rm -rf "$dir"
mv -T "$tmp" "$dir"
echo "$binary"
