# SPDX-License-Identifier: Apache-2.0
# Dockerfile -- tabletheoryd as a container sidecar: built from source on
# Debian 12, run as an unprivileged user in debian:12-slim.
#
#   docker build -t tabletheoryd .
#   docker run --rm -v "$PWD/models:/etc/tabletheoryd/models:ro" tabletheoryd
#
# The daemon listens on 127.0.0.1:8737 inside the container, which is what a
# sidecar sharing the application's network namespace (a Kubernetes pod,
# Compose `network_mode: service:app`) wants. To publish the port instead,
# pass `--listen 0.0.0.0:8737` with `--auth-token-file` (or, when the host
# only publishes it on loopback, `--allow-unauthenticated-network`); see
# docs/operations.md. Not built by CI.

FROM debian:12 AS build
RUN apt-get update \
 && apt-get install -y --no-install-recommends \
      build-essential autoconf automake libtool pkg-config \
      libuv1-dev libmicrohttpd-dev libcurl4-openssl-dev libssl-dev \
      libjansson-dev libyaml-dev \
 && rm -rf /var/lib/apt/lists/*
WORKDIR /src
COPY . .
RUN autoreconf -fi \
 && ./configure --prefix=/usr/local --sysconfdir=/etc \
 && make -j"$(nproc)" \
 && make install-strip DESTDIR=/out \
 && rm -rf /out/usr/local/lib/systemd

FROM debian:12-slim
# Runtime libraries of the -dev packages above, and CA certificates for
# DynamoDB's TLS endpoints.
RUN apt-get update \
 && apt-get install -y --no-install-recommends \
      libuv1 libmicrohttpd12 libcurl4 libssl3 libjansson4 libyaml-0-2 ca-certificates \
 && rm -rf /var/lib/apt/lists/*
COPY --from=build /out/usr/local/ /usr/local/
# A probe that needs no curl (bash's /dev/tcp), for HEALTHCHECK and for
# Kubernetes exec probes: `tabletheoryd-probe /readyz` exits 0 on a 200.
RUN printf '%s\n' \
      '#!/bin/bash' \
      '# tabletheoryd-probe [PATH]: exits 0 when GET PATH on the local daemon answers 200.' \
      'addr=${TABLETHEORYD_PROBE_ADDR:-127.0.0.1:8737}' \
      'exec 3<>"/dev/tcp/${addr%:*}/${addr##*:}" || exit 1' \
      'printf "GET %s HTTP/1.0\r\nHost: %s\r\n\r\n" "${1:-/healthz}" "$addr" >&3' \
      'IFS= read -r -t 3 status <&3 || exit 1' \
      'case $status in "HTTP/1."?" 200 "*) exit 0 ;; esac' \
      'exit 1' \
      > /usr/local/bin/tabletheoryd-probe \
 && chmod 0755 /usr/local/bin/tabletheoryd-probe \
 && useradd --system --uid 10001 --user-group --no-create-home --home-dir /nonexistent \
      --shell /usr/sbin/nologin tabletheoryd \
 && mkdir -p /etc/tabletheoryd/models
USER 10001:10001
EXPOSE 8737
# SIGTERM drains (docs/operations.md); give `docker stop -t` more than the
# drain timeout (10 s by default).
STOPSIGNAL SIGTERM
HEALTHCHECK --interval=10s --timeout=3s --start-period=5s \
  CMD ["/usr/local/bin/tabletheoryd-probe", "/readyz"]
ENTRYPOINT ["/usr/local/bin/tabletheoryd"]
CMD ["--models", "/etc/tabletheoryd/models"]
