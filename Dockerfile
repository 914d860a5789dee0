# The server image: `docker build -t ostrakon .`, then
#   docker run -p 7070:7070 -v ostrakon-data:/data -v ./ostrakon.toml:/etc/ostrakon/ostrakon.toml:ro ostrakon
# Listening beyond the container's loopback needs tokens: the mounted config must have
# [[tokens]] (see deploy/ostrakon.toml). compose.yaml runs a three-node cluster.

FROM rust:1.90-slim-bookworm AS build
WORKDIR /src
COPY . .
RUN cargo build --release --locked --bin ostrakon

FROM debian:bookworm-slim
RUN apt-get update \
    && apt-get install -y --no-install-recommends ca-certificates curl \
    && rm -rf /var/lib/apt/lists/* \
    && useradd --system --uid 10001 --user-group --home-dir /data ostrakon \
    && mkdir -p /data /etc/ostrakon \
    && chown ostrakon:ostrakon /data
COPY --from=build /src/target/release/ostrakon /usr/local/bin/ostrakon
USER ostrakon
VOLUME ["/data"]
EXPOSE 7070
HEALTHCHECK --interval=10s --timeout=3s --start-period=60s --retries=3 \
    CMD curl -fsS http://127.0.0.1:7070/livez || exit 1
ENTRYPOINT ["ostrakon"]
CMD ["serve", "--data", "/data", "--listen", "0.0.0.0:7070", "--config", "/etc/ostrakon/ostrakon.toml"]
