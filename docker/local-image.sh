#!/bin/sh
# Builds the product image on a machine that reaches Debian's package archive and the npm registry
# but no registry of container images (docs/deploy.md, "Building without an image registry"):
#
#   1. base image: a Debian bookworm root filesystem made with debootstrap, plus this machine's
#      Node.js 20 binary and npm 10 (from the npm registry: npm 11 refuses the lockfile), and the
#      user `node` (uid/gid 1000) the official node images have; imported with `podman import`.
#   2. product image: docker/Dockerfile built by podman with --build-arg NODE_IMAGE=<that base>.
#
#   sh docker/local-image.sh                  # both steps (the base only when it is missing)
#   OSC_REBUILD_BASE=1 sh docker/local-image.sh
#
# Needs root (debootstrap, chroot), podman and debootstrap (`apt-get install podman debootstrap`).
# Variables: OSC_BASE_IMAGE (localhost/osc-node20:bookworm), OSC_IMAGE (localhost/osc:dev),
# OSC_BASE_WORK (/var/tmp/osc-base: the root filesystem and npm's tarball), DEBIAN_MIRROR.
set -eu
root=$(cd "$(dirname "$0")/.." && pwd)
work=${OSC_BASE_WORK:-/var/tmp/osc-base}
base=${OSC_BASE_IMAGE:-localhost/osc-node20:bookworm}
image=${OSC_IMAGE:-localhost/osc:dev}
mirror=${DEBIAN_MIRROR:-http://deb.debian.org/debian}
node_bin=$(command -v node)

# This machine's container limits (docs/deploy.md): crun refuses the hybrid cgroup v1/v2 layout,
# and the OCI runtime may not raise RLIMIT_NOFILE/RLIMIT_NPROC to podman's defaults (the
# process lacks CAP_SYS_RESOURCE). runc with limits at or below the current ones works. Set
# OSC_CONTAINERS_CONF= (empty) to use podman's own configuration.
if [ "${OSC_CONTAINERS_CONF-unset}" = unset ]; then
  mkdir -p "$work"
  cat >"$work/containers.conf" <<CONF
[containers]
default_ulimits = ["nofile=$(ulimit -n):$(ulimit -n)", "nproc=8192:8192"]
[engine]
runtime = "runc"
CONF
  export CONTAINERS_CONF="$work/containers.conf"
elif [ -n "${OSC_CONTAINERS_CONF}" ]; then
  export CONTAINERS_CONF="$OSC_CONTAINERS_CONF"
fi

log() { printf '%s local-image: %s\n' "$(date -u +%H:%M:%S)" "$*" >&2; }

case "$("$node_bin" --version)" in
  v20.*) ;;
  *) echo "local-image: the image runs Node.js 20; this machine's node is $("$node_bin" --version)" >&2; exit 1 ;;
esac

if [ "${OSC_REBUILD_BASE:-}" = 1 ] || ! podman image exists "$base"; then
  rootfs="$work/rootfs"
  if [ ! -x "$rootfs/bin/sh" ]; then
    log "debootstrap bookworm (minbase) into $rootfs"
    mkdir -p "$work"
    debootstrap --variant=minbase bookworm "$rootfs" "$mirror" >"$work/debootstrap.log" 2>&1 ||
      { tail -20 "$work/debootstrap.log" >&2; exit 1; }
  fi
  log "adding $node_bin ($("$node_bin" --version)) and npm 10"
  install -m 0755 "$node_bin" "$rootfs/usr/local/bin/node"
  rm -rf "$rootfs/usr/local/lib/node_modules/npm" "$work/npm-pack"
  mkdir -p "$rootfs/usr/local/lib/node_modules/npm" "$work/npm-pack"
  (cd "$work/npm-pack" && npm pack --silent npm@10 >/dev/null)
  tar -xzf "$work"/npm-pack/npm-10.*.tgz -C "$rootfs/usr/local/lib/node_modules/npm" --strip-components=1
  ln -sf ../lib/node_modules/npm/bin/npm-cli.js "$rootfs/usr/local/bin/npm"
  ln -sf ../lib/node_modules/npm/bin/npx-cli.js "$rootfs/usr/local/bin/npx"
  # This machine's trusted certificates (a TLS-inspecting proxy's CA among them, where there is
  # one) so npm in the build stages reaches the registry as the host does.
  ca=${NODE_EXTRA_CA_CERTS:-/etc/ssl/certs/ca-certificates.crt}
  mkdir -p "$rootfs/usr/local/share/osc"
  if [ -f "$ca" ]; then cp "$ca" "$rootfs/usr/local/share/osc/extra-ca.crt"; else : >"$rootfs/usr/local/share/osc/extra-ca.crt"; fi
  if ! chroot "$rootfs" getent passwd node >/dev/null; then
    chroot "$rootfs" groupadd --gid 1000 node
    chroot "$rootfs" useradd --uid 1000 --gid node --create-home --shell /bin/sh node
  fi
  chroot "$rootfs" /usr/local/bin/node --version >/dev/null
  rm -rf "$rootfs"/var/cache/apt/archives/*.deb "$rootfs"/var/lib/apt/lists/*
  log "importing the root filesystem as $base"
  tar -C "$rootfs" --numeric-owner -cf - . |
    podman import \
      --change 'ENV PATH=/usr/local/bin:/usr/local/sbin:/usr/sbin:/usr/bin:/sbin:/bin' \
      --change 'ENV NODE_EXTRA_CA_CERTS=/usr/local/share/osc/extra-ca.crt' \
      --change 'CMD ["node"]' - "$base" >/dev/null
fi

log "building $image from docker/Dockerfile on $base"
# --network host: npm ci in the build stages reaches the npm registry as this machine does.
podman build --network host --build-arg NODE_IMAGE="$base" -f "$root/docker/Dockerfile" -t "$image" "$root"
log "built $image ($(podman image inspect --format '{{.Size}}' "$image") bytes)"
