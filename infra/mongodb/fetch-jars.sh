#!/usr/bin/env bash
# Puts the jars of the MongoDB test server (see pom.xml) in a cache directory and prints that directory
# (infra/fetch-jars.sh does the work for every Java test server).
exec "$BASH" "$(dirname "${BASH_SOURCE[0]}")/../fetch-jars.sh" mongodb "the MongoDB test server"
