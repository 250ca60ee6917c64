# The TunnelBench image for users with a registry (make docker-build): the operator and the
# pgbench runner, on the same Debian bookworm packages hack/images.sh uses for the local cluster.
FROM golang:1.26-bookworm AS build
WORKDIR /src
COPY go.mod go.sum ./
RUN go mod download
COPY api/ api/
COPY cmd/ cmd/
COPY controllers/ controllers/
COPY internal/ internal/
RUN CGO_ENABLED=0 go build -trimpath -ldflags '-s -w' -o /out/tunnelbench-manager ./cmd/manager \
 && CGO_ENABLED=0 go build -trimpath -ldflags '-s -w' -o /out/tunnelbench-runner ./cmd/runner

FROM debian:bookworm-slim
COPY hack/images/runner-packages /tmp/runner-packages
# The packages are listed once, in hack/images/runner-packages (hack/images.sh reads it too). No
# default cluster, no host keys, no docs, no locales, and no LLVM (only
# PostgreSQL's JIT uses it).
RUN mkdir -p /etc/postgresql-common \
 && echo "create_main_cluster = false" > /etc/postgresql-common/createcluster.conf \
 && groupdel tape && groupadd -g 26 postgres && useradd -u 26 -g postgres -d /var/lib/postgresql -s /bin/sh postgres \
 && groupadd -g 65532 tunnelbench && useradd -u 65532 -g tunnelbench -d /tmp -s /bin/sh tunnelbench \
 && apt-get update \
 && DEBIAN_FRONTEND=noninteractive apt-get install -y --no-install-recommends $(sed -e 's/#.*//' /tmp/runner-packages) \
 && apt-get clean \
 && rm -rf /tmp/runner-packages /var/lib/apt/lists/* /var/cache/apt/* /var/log/* /usr/share/doc/* /usr/share/man/* /usr/share/locale/* \
      /usr/share/i18n/* /usr/lib/x86_64-linux-gnu/libLLVM-14.so* /usr/lib/x86_64-linux-gnu/libz3.so* \
      /usr/lib/postgresql/15/lib/llvmjit*.so /usr/lib/postgresql/15/lib/bitcode /etc/ssh/ssh_host_*
COPY --from=build /out/ /usr/local/bin/
ENV PATH=/usr/lib/postgresql/15/bin:/usr/local/bin:/usr/bin:/bin HOME=/tmp
USER 65532:65532
ENTRYPOINT ["/usr/local/bin/tunnelbench-manager"]
