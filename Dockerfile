# cdplan: multi-stage build. Stage 1 builds on Debian 12 (bookworm) with
# the -dev packages; stage 2 runs on bookworm-slim with only the runtime
# libraries, as a non-root user, with the database on a volume. The runner
# package (validate/gpu, with its MANIFEST) travels whole, found from the
# working directory, so bundles are complete and cpu_selftest runs locally.
FROM debian:bookworm AS build
RUN apt-get update && DEBIAN_FRONTEND=noninteractive apt-get install -y --no-install-recommends \
      build-essential cmake pkg-config libmicrohttpd-dev libcjson-dev libsqlite3-dev \
      libglpk-dev libcmocka-dev libpq-dev help2man zlib1g-dev \
    && rm -rf /var/lib/apt/lists/*
WORKDIR /src
COPY . .
RUN cmake -S . -B /build -DCMAKE_BUILD_TYPE=Release \
    && cmake --build /build -j"$(nproc)" --target cdplan cdplan_docs \
    && install -D /build/cli/cdplan /out/usr/local/bin/cdplan \
    && install -D -m 644 /build/cli/cdplan.1 /out/usr/local/share/man/man1/cdplan.1 \
    && install -D -m 644 /build/cli/cdplan.bash /out/usr/share/bash-completion/completions/cdplan \
    && mkdir -p /out/usr/share/cdplan/docs \
    && cp -r web /out/usr/share/cdplan/web \
    && cp docs/openapi.yaml /out/usr/share/cdplan/docs/openapi.yaml \
    && mkdir -p /out/usr/share/cdplan/validate \
    && cp -r validate/gpu /out/usr/share/cdplan/validate/gpu

FROM debian:bookworm-slim
RUN apt-get update && DEBIAN_FRONTEND=noninteractive apt-get install -y --no-install-recommends \
      libmicrohttpd12 libcjson1 libsqlite3-0 libglpk40 libpq5 curl ca-certificates python3 \
    && rm -rf /var/lib/apt/lists/* \
    && useradd --system --home-dir /var/lib/cdplan --create-home --shell /usr/sbin/nologin cdplan
COPY --from=build /out/ /
USER cdplan
WORKDIR /usr/share/cdplan
VOLUME ["/var/lib/cdplan"]
EXPOSE 8080
HEALTHCHECK --interval=30s --timeout=3s --start-period=5s --retries=3 \
  CMD curl -fsS http://127.0.0.1:8080/healthz || exit 1
ENTRYPOINT ["/usr/local/bin/cdplan"]
CMD ["serve", "--listen", "0.0.0.0:8080", "--db", "/var/lib/cdplan/cdplan.db", "--web", "/usr/share/cdplan/web"]
