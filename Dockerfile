# The `strata` image: one binary, and every process is its arguments (`serve`, `project
# readmodels`, `project audit`, `status`, …). docker-compose.yml runs three services from it.
#
# Two stages: the official Swift image compiles; a slim Debian of the same release (12,
# "bookworm") runs. CI checks the package lists below against scripts/bootstrap and against
# the libraries the binary links (Tests/StrataCLITests/DeploymentTests.swift), but it builds no
# image: no Docker engine runs there.

# --- build -------------------------------------------------------------------------------
# The toolchain the project is built and tested with: Swift 6.3.1.
FROM swift:6.3.1-bookworm AS build

# The C libraries' headers and pkg-config: exactly scripts/bootstrap's build_packages.
RUN apt-get update \
    && apt-get install -y --no-install-recommends libsqlite3-dev libzmq3-dev libsodium-dev pkg-config \
    && rm -rf /var/lib/apt/lists/*

WORKDIR /src
COPY . .
# --static-swift-stdlib links the Swift runtime and Foundation into the binary, so the runtime
# stage needs Debian's C libraries only, not a copy of the toolchain's .so files that would
# have to match it. The static backtracer prints a readable stack if the process ever crashes.
RUN swift build -c release --static-swift-stdlib --product strata \
    && install -D -m 0755 .build/release/strata /out/usr/local/bin/strata \
    && install -D -m 0755 /usr/libexec/swift/linux/swift-backtrace-static \
        /out/usr/local/libexec/swift-backtrace-static

# --- run ---------------------------------------------------------------------------------
FROM debian:bookworm-slim

# The shared libraries the binary links besides glibc and the C++ runtime, which the base has:
# SQLite, libzmq (which brings its own dependencies) and libsodium.
RUN apt-get update \
    && apt-get install -y --no-install-recommends libsqlite3-0 libzmq5 libsodium23 \
    && rm -rf /var/lib/apt/lists/*

# An unprivileged user owns the data directory. Give it your own ids (STRATA_UID and
# STRATA_GID in .env, see docs/configuration.md) so it can read the key file you made: Compose
# mounts a secret file as it is on the host, owner and mode 0600 included.
ARG STRATA_UID=10001
ARG STRATA_GID=10001
RUN groupadd --non-unique --gid "$STRATA_GID" strata \
    && useradd --non-unique --uid "$STRATA_UID" --gid strata --no-create-home \
        --home-dir /var/lib/strata --shell /usr/sbin/nologin strata \
    && install -d -o strata -g strata -m 0700 /var/lib/strata

COPY --from=build /out/ /

# A new named volume mounted on /var/lib/strata starts as this directory: owned by strata.
# The checkpoint key (checkpoint.key), made on the first start of `serve`, lives there too.
ENV STRATA_DATA=/var/lib/strata \
    SWIFT_BACKTRACE=enable=yes,sanitize=yes,threads=all,images=all,interactive=no,swift-backtrace=/usr/local/libexec/swift-backtrace-static
VOLUME ["/var/lib/strata"]
WORKDIR /var/lib/strata
USER strata:strata
EXPOSE 7701 7702 7703

ENTRYPOINT ["strata"]
# Alone, the image runs everything in one container; docker-compose.yml runs one process each.
# The endpoints bind the container's loopback unless STRATA_COMMANDS, STRATA_EVENTS and
# STRATA_HISTORY say tcp://0.0.0.0:PORT: only then does a published port reach the service.
CMD ["up"]
