#!/usr/bin/env bash
# scripts/image.sh [TAG]: a minimal container image of the release binary,
# built without network access. Prints the image's name,
# localhost/neardup:TAG, as its last line (TAG: the commit, by default).
#
# The image is FROM scratch and holds only (docs/decisions.md says why):
#   /neardup                              the release binary (debug info stripped)
#   the libraries it links (ldd: libc, libm, libgcc_s, the loader)
#   /etc/ssl/certs/ca-certificates.crt    this machine's CA bundle (Debian's
#                                         ca-certificates), for an https:// upstream
#   /etc/passwd, /etc/group               the user neardup (uid and gid 10001)
#   /var/lib/neardup                      the state directory, a volume, owned by neardup
#   /tmp                                  (1777)
# Settings are NEARDUP_* variables (neardup serve --help). The image sets
#   NEARDUP_LISTEN=0.0.0.0:9201  NEARDUP_STATE_DIR=/var/lib/neardup
# and nothing else: listening beyond loopback needs TLS (NEARDUP_TLS_CERT and
# NEARDUP_TLS_KEY) or NEARDUP_ALLOW_PLAIN_HTTP=true, said by whoever runs it;
# without either the sidecar refuses to start and says so. Its health check
# is `neardup health` (the binary asks itself; no shell, no curl).
#
# Tools: buildah, else podman, else docker, whichever is present first
# (NEARDUP_IMAGE_TOOL picks one). buildah runs without a daemon: it uses
# --storage-driver "${STORAGE_DRIVER:-vfs}" and needs no registry (FROM
# scratch). The image is written in the docker format, which keeps the
# HEALTHCHECK (the OCI format has none).
#
# NEARDUP_BIN: the binary to ship [default: cargo build --release, then
# target/release/neardup under $CARGO_TARGET_DIR or target/].
set -euo pipefail

root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
die() { echo "image.sh: $*" >&2; exit 1; }

tag="${1:-$(git -C "$root" rev-parse --short=12 HEAD 2>/dev/null || echo dev)}"
name="localhost/neardup:$tag"

tool="${NEARDUP_IMAGE_TOOL:-}"
if [ -z "$tool" ]; then
    for candidate in buildah podman docker; do
        if command -v "$candidate" >/dev/null; then tool="$candidate"; break; fi
    done
fi
[ -n "$tool" ] || die "needs buildah, podman or docker (Debian: apt-get install buildah)"

bin="${NEARDUP_BIN:-}"
if [ -z "$bin" ]; then
    (cd "$root" && cargo build --release --locked --bin neardup >&2)
    bin="${CARGO_TARGET_DIR:-$root/target}/release/neardup"
fi
[ -x "$bin" ] || die "no binary at $bin"

bundle=/etc/ssl/certs/ca-certificates.crt
[ -s "$bundle" ] || die "no CA bundle at $bundle (Debian: apt-get install ca-certificates)"

context="$(mktemp -d)"
trap 'rm -rf "$context"' EXIT
rootfs="$context/rootfs"
mkdir -p "$rootfs/etc/ssl/certs" "$rootfs/tmp" "$context/state"
chmod 1777 "$rootfs/tmp"

# The binary without its debug info (symbols stay: backtraces name functions).
if command -v objcopy >/dev/null; then
    objcopy --strip-debug "$bin" "$rootfs/neardup"
else
    echo "image.sh: no objcopy (binutils): the binary keeps its debug info" >&2
    cp "$bin" "$rootfs/neardup"
fi
chmod 0755 "$rootfs/neardup"

# What it links, each at the path the loader looks for it.
ldd "$bin" | while read -r first second third _; do
    case "$second" in
        "=>") library="$third" ;;
        *) library="$first" ;;
    esac
    case "$library" in
        /*) mkdir -p "$rootfs$(dirname "$library")"
            cp -L "$library" "$rootfs$library" ;;
    esac
done
[ -n "$(find "$rootfs" -name 'ld-linux*' -print -quit)" ] || die "ldd named no loader for $bin"

cp -L "$bundle" "$rootfs/etc/ssl/certs/ca-certificates.crt"
echo "neardup:x:10001:10001:neardup:/var/lib/neardup:/nonexistent" >"$rootfs/etc/passwd"
echo "neardup:x:10001:" >"$rootfs/etc/group"

version="$("$bin" --version)"
cat >"$context/Containerfile" <<EOF
FROM scratch
COPY rootfs/ /
COPY --chown=10001:10001 state/ /var/lib/neardup/
USER 10001:10001
ENV NEARDUP_LISTEN=0.0.0.0:9201 NEARDUP_STATE_DIR=/var/lib/neardup
VOLUME /var/lib/neardup
EXPOSE 9201
STOPSIGNAL SIGTERM
HEALTHCHECK --interval=30s --timeout=10s --start-period=60s --retries=3 CMD ["/neardup", "health"]
LABEL org.opencontainers.image.title="neardup" org.opencontainers.image.version="$version"
ENTRYPOINT ["/neardup"]
CMD ["serve"]
EOF

case "$tool" in
    buildah)
        buildah --storage-driver "${STORAGE_DRIVER:-vfs}" build --isolation chroot \
            --format docker -t "$name" "$context" >&2
        size="$(buildah --storage-driver "${STORAGE_DRIVER:-vfs}" images --format '{{.Size}}' "$name")"
        ;;
    podman)
        podman build --format docker -t "$name" "$context" >&2
        size="$(podman images --format '{{.Size}}' "$name")"
        ;;
    docker)
        docker build -t "$name" "$context" >&2
        size="$(docker images --format '{{.Size}}' "$name")"
        ;;
    *) die "unknown tool $tool (buildah, podman or docker)" ;;
esac
echo "image.sh: $name: $size ($version; $(du -sh "$rootfs/neardup" | cut -f1) binary, $(du -sh "$rootfs" | cut -f1) in all)" >&2
echo "$name"
