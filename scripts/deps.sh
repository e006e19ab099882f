#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# deps.sh -- installs what building and testing tabletheoryd needs on Debian 12.
set -euo pipefail
SUDO=""
[ "$(id -u)" -ne 0 ] && SUDO=sudo
DEBS=(build-essential autoconf automake libtool pkg-config
      libuv1-dev libmicrohttpd-dev libcurl4-openssl-dev libssl-dev libjansson-dev libyaml-dev
      check python3 python3-pytest python3-yaml clang libclang-rt-14-dev systemd curl wrk)
missing=()
for p in "${DEBS[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
done
# The DynamoDB test peers: dynalite (npm) and moto (PyPI, in a venv). Use the
# machine's node/npm when it has them, else Debian's.
command -v npm >/dev/null 2>&1 || missing+=(nodejs npm)
/usr/bin/python3 -m venv --help >/dev/null 2>&1 || missing+=(python3-venv)
# The Java client: JDK 17 and Maven are Debian 12's own. The Go client needs
# Go >= 1.23, newer than Debian 12's golang-go: it uses the machine's Go when
# there is one, else scripts/test-clients.sh reports it skipped.
command -v javac >/dev/null 2>&1 || missing+=(default-jdk-headless)
command -v mvn >/dev/null 2>&1 || missing+=(maven)
if [ "${#missing[@]}" -gt 0 ]; then
  $SUDO apt-get update -qq
  DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y -qq --no-install-recommends "${missing[@]}"
fi
# The python3 first on PATH runs the integration tests; it may not be
# Debian's (pyenv), so make sure it has pytest.
# Debian (PEP 668) may refuse a plain pip install: fall back to overriding it.
# opentelemetry-proto: the trace tests decode the daemon's OTLP exports with it.
# boto3 drives the DynamoDB listener's tests (tests/integration/test_ddb_listener.py).
for mod in pytest:pytest==8.* yaml:PyYAML==6.* opentelemetry.proto:opentelemetry-proto==1.27.0 \
    boto3:boto3==1.43.11; do
  if ! python3 -c "import ${mod%%:*}" 2>/dev/null; then
    python3 -m pip install -q "${mod#*:}" ||
      python3 -m pip install -q --break-system-packages "${mod#*:}"
  fi
done
