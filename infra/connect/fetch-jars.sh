#!/usr/bin/env bash
# Puts the jars of the Kafka Connect worker with Debezium's PostgreSQL connector (see pom.xml) in a
# cache directory and prints that directory (infra/fetch-jars.sh does the work for every Java server).
exec "$BASH" "$(dirname "${BASH_SOURCE[0]}")/../fetch-jars.sh" connect "the Kafka Connect worker (Debezium)"
