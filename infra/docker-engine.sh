#!/usr/bin/env bash
# Makes a Docker engine usable on a Debian bookworm machine like the one ward is developed on.
#
#   infra/docker-engine.sh up      install docker.io, docker-compose and debootstrap when missing
#                                  (apt), start dockerd when it is not running, then `images`
#   infra/docker-engine.sh images  make sure the base images infra/Dockerfile and
#                                  infra/docker-compose.yml name exist: pull them, or, when no
#                                  registry answers, build stand-ins from Debian packages
#   infra/docker-engine.sh down    stop the dockerd this script started (nothing else)
#   infra/docker-engine.sh status
#
# Stand-in images (only when `docker pull` fails):
#   node:20-bookworm-slim  Debian bookworm (debootstrap, this machine's apt source) with this
#                          machine's Node.js 20 and npm, its CA bundle and a `node` user (uid 1000)
#   redis:7-alpine         the same base with Debian's redis-server and redis-cli, started the way
#                          the official image starts it (protected mode off, listening on all
#                          interfaces of the container)
# The debootstrapped root file system is cached in $WARD_DOCKER_CACHE (~/.cache/ward-docker), so
# a second machine set-up or an image rebuild skips it. Must run as root (apt, dockerd, chroot).
set -euo pipefail

CACHE_DIR="${WARD_DOCKER_CACHE:-${HOME}/.cache/ward-docker}"
PID_FILE="${CACHE_DIR}/dockerd.pid"
DOCKERD_LOG="${CACHE_DIR}/dockerd.log"
NODE_IMAGE="${WARD_NODE_IMAGE:-node:20-bookworm-slim}"
REDIS_IMAGE="${WARD_REDIS_IMAGE:-redis:7-alpine}"
BASE_IMAGE="ward-base/debian:bookworm"
STANDIN_LABEL="dev.ward.stand-in"
PULL_TIMEOUT_S="${WARD_DOCKER_PULL_TIMEOUT_S:-30}"

log() { printf 'docker-engine: %s\n' "$*" >&2; }
die() { log "error: $*"; exit 1; }

need_root() { [ "$(id -u)" = 0 ] || die "run as root (apt-get, dockerd and debootstrap need it)"; }

# --- packages ---------------------------------------------------------------------------------
ensure_packages() {
  local missing=()
  command -v dockerd >/dev/null 2>&1 || missing+=(docker.io)
  command -v docker-compose >/dev/null 2>&1 || missing+=(docker-compose)
  command -v debootstrap >/dev/null 2>&1 || missing+=(debootstrap)
  [ ${#missing[@]} -eq 0 ] && return 0
  need_root
  log "installing ${missing[*]} (apt-get)"
  apt-get update -qq
  DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null
}

# --- daemon -----------------------------------------------------------------------------------
engine_answers() { docker info >/dev/null 2>&1; }

start_dockerd() {
  if engine_answers; then return 0; fi
  need_root
  mkdir -p "$CACHE_DIR"
  log "starting dockerd (log: ${DOCKERD_LOG})"
  # setsid: the daemon outlives this script and is stopped with `down`.
  setsid dockerd >"$DOCKERD_LOG" 2>&1 </dev/null &
  echo $! >"$PID_FILE"
  for _ in $(seq 1 60); do
    if engine_answers; then log "dockerd is up (pid $(cat "$PID_FILE"))"; return 0; fi
    kill -0 "$(cat "$PID_FILE")" 2>/dev/null || { tail -20 "$DOCKERD_LOG" >&2; rm -f "$PID_FILE"; die "dockerd exited"; }
    sleep 0.5
  done
  die "dockerd did not answer within 30 s (see ${DOCKERD_LOG})"
}

stop_dockerd() {
  [ -f "$PID_FILE" ] || { log "no dockerd started by this script"; return 0; }
  local pid; pid="$(cat "$PID_FILE")"
  if kill -0 "$pid" 2>/dev/null && [ "$(cat "/proc/${pid}/comm" 2>/dev/null)" = dockerd ]; then
    log "stopping dockerd (pid ${pid})"
    kill -TERM "$pid"
    for _ in $(seq 1 60); do kill -0 "$pid" 2>/dev/null || break; sleep 0.5; done
    kill -0 "$pid" 2>/dev/null && die "dockerd (pid ${pid}) still running after 30 s"
  fi
  rm -f "$PID_FILE"
}

# --- images -----------------------------------------------------------------------------------
image_exists() { docker image inspect "$1" >/dev/null 2>&1; }

try_pull() {
  log "pulling $1"
  timeout "$PULL_TIMEOUT_S" docker pull -q "$1" >/dev/null 2>&1
}

# The first deb URI and suite of this machine's apt configuration (deb822 or one-line format).
apt_mirror() {
  local uri=""
  if [ -f /etc/apt/sources.list.d/debian.sources ]; then
    uri="$(awk '/^URIs:/ { print $2; exit }' /etc/apt/sources.list.d/debian.sources)"
  fi
  if [ -z "$uri" ] && [ -f /etc/apt/sources.list ]; then
    uri="$(awk '$1 == "deb" && $2 !~ /^\[/ { print $2; exit } $1 == "deb" { print $3; exit }' /etc/apt/sources.list)"
  fi
  printf '%s\n' "${uri:-http://deb.debian.org/debian}"
}

# A bookworm minbase root file system as a tarball, built once and cached.
base_rootfs() {
  local tarball="${CACHE_DIR}/bookworm-minbase.tar"
  if [ ! -s "$tarball" ]; then
    need_root
    local mirror dir; mirror="$(apt_mirror)"; dir="${CACHE_DIR}/rootfs.tmp"
    rm -rf "$dir"; mkdir -p "$CACHE_DIR"
    log "debootstrap bookworm from ${mirror} (a few minutes, once)"
    debootstrap --variant=minbase --components=main bookworm "$dir" "$mirror" >"${CACHE_DIR}/debootstrap.log" 2>&1 \
      || { tail -20 "${CACHE_DIR}/debootstrap.log" >&2; die "debootstrap failed"; }
    # The machine's apt sources (security and updates too), so images can apt-get install.
    rm -f "$dir/etc/apt/sources.list"
    cp -a /etc/apt/sources.list.d/*.sources "$dir/etc/apt/sources.list.d/" 2>/dev/null || true
    [ -f /etc/apt/sources.list ] && cp /etc/apt/sources.list "$dir/etc/apt/sources.list"
    chroot "$dir" apt-get clean
    rm -rf "$dir"/var/lib/apt/lists/* "$dir"/var/cache/apt/*.bin "$dir"/tmp/* "$dir"/proc/* "$dir"/sys/* "$dir"/dev/*
    tar -C "$dir" --numeric-owner -cf "${tarball}.tmp" .
    mv "${tarball}.tmp" "$tarball"
    rm -rf "$dir"
  fi
  printf '%s\n' "$tarball"
}

ensure_base_image() {
  image_exists "$BASE_IMAGE" && return 0
  local tarball; tarball="$(base_rootfs)"
  log "importing ${BASE_IMAGE}"
  docker import -c 'CMD ["bash"]' -c 'ENV PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin' \
    "$tarball" "$BASE_IMAGE" >/dev/null
}

# Build args that let containers reach the registries this machine reaches (no secrets: proxy
# URLs and the CA bundle path only; credentials never leave the host's npm config).
host_additions() {
  # Names the host resolves through /etc/hosts are not seen by containers; pass them on.
  local name
  for name in deb.debian.org registry.npmjs.org; do
    local ip; ip="$(getent hosts "$name" | awk '{ print $1; exit }')" || true
    if [ -n "$ip" ] && grep -qE "^[^#]*[[:space:]]${name//./\\.}([[:space:]]|$)" /etc/hosts; then
      printf -- '--add-host=%s:%s\n' "$name" "$ip"
    fi
  done
}

node_standin() {
  local node npm_dir ctx version
  node="$(command -v node)" || die "node not found on this machine"
  version="$("$node" --version)"
  case "$version" in v20.*) ;; *) die "this machine's node is ${version}; the stand-in ${NODE_IMAGE} needs Node.js 20";; esac
  npm_dir="$(dirname "$(dirname "$(readlink -f "$node")")")/lib/node_modules/npm"
  [ -f "$npm_dir/bin/npm-cli.js" ] || die "npm not found at ${npm_dir}"
  ensure_base_image
  ctx="$(mktemp -d)"
  mkdir -p "$ctx/usr/local/bin" "$ctx/usr/local/lib/node_modules" "$ctx/etc/ssl/certs"
  cp "$(readlink -f "$node")" "$ctx/usr/local/bin/node"
  cp -a "$npm_dir" "$ctx/usr/local/lib/node_modules/npm"
  ln -s ../lib/node_modules/npm/bin/npm-cli.js "$ctx/usr/local/bin/npm"
  ln -s ../lib/node_modules/npm/bin/npx-cli.js "$ctx/usr/local/bin/npx"
  cp /etc/ssl/certs/ca-certificates.crt "$ctx/etc/ssl/certs/ca-certificates.crt"
  cat >"$ctx/Dockerfile" <<EOF
FROM ${BASE_IMAGE}
COPY usr /usr
COPY etc /etc
RUN groupadd --gid 1000 node && useradd --uid 1000 --gid node --shell /bin/bash --create-home node \\
 && node --version && npm --version
ENV NODE_VERSION=${version#v} NODE_EXTRA_CA_CERTS=/etc/ssl/certs/ca-certificates.crt \\
    NPM_CONFIG_CAFILE=/etc/ssl/certs/ca-certificates.crt NPM_CONFIG_UPDATE_NOTIFIER=false
LABEL ${STANDIN_LABEL}="debootstrap bookworm + host node ${version}"
CMD ["node"]
EOF
  log "building stand-in ${NODE_IMAGE} (node ${version})"
  docker build -q -t "$NODE_IMAGE" "$ctx" >/dev/null
  rm -rf "$ctx"
}

redis_standin() {
  local ctx
  ensure_base_image
  ctx="$(mktemp -d)"
  cat >"$ctx/docker-entrypoint.sh" <<'EOF'
#!/bin/sh
# As the official image: `redis-server` without a config file listens on every interface of the
# container with protected mode off (the container network is the boundary).
set -e
if [ "${1#-}" != "$1" ]; then set -- redis-server "$@"; fi
if [ "$1" = redis-server ]; then
  shift
  set -- redis-server --bind '* -::*' --protected-mode no "$@"
  if [ "$(id -u)" = 0 ]; then exec setpriv --reuid=redis --regid=redis --init-groups "$@"; fi
fi
exec "$@"
EOF
  chmod 0755 "$ctx/docker-entrypoint.sh"
  cat >"$ctx/Dockerfile" <<EOF
FROM ${BASE_IMAGE}
RUN apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends redis-server redis-tools >/dev/null \\
 && apt-get clean && rm -rf /var/lib/apt/lists/* && mkdir -p /data && chown redis:redis /data
COPY docker-entrypoint.sh /usr/local/bin/docker-entrypoint.sh
WORKDIR /data
VOLUME /data
EXPOSE 6379
LABEL ${STANDIN_LABEL}="debootstrap bookworm + Debian redis-server"
ENTRYPOINT ["docker-entrypoint.sh"]
CMD ["redis-server"]
EOF
  log "building stand-in ${REDIS_IMAGE}"
  # shellcheck disable=SC2046
  docker build -q $(host_additions) -t "$REDIS_IMAGE" "$ctx" >/dev/null
  rm -rf "$ctx"
}

ensure_images() {
  image_exists "$NODE_IMAGE" || try_pull "$NODE_IMAGE" || node_standin
  image_exists "$REDIS_IMAGE" || try_pull "$REDIS_IMAGE" || redis_standin
}

# Build args for `docker build -f infra/Dockerfile`: where npm finds its registry (never tokens).
build_args() {
  host_additions
  local registry; registry="$(npm config get registry 2>/dev/null || true)"
  [ -n "$registry" ] && printf -- '--build-arg=NPM_CONFIG_REGISTRY=%s\n' "$registry"
  local var
  for var in HTTP_PROXY HTTPS_PROXY NO_PROXY http_proxy https_proxy no_proxy; do
    [ -n "${!var:-}" ] && printf -- '--build-arg=%s\n' "$var"
  done
  return 0
}

case "${1:-up}" in
  up) ensure_packages; start_dockerd; ensure_images ;;
  images) ensure_images ;;
  build-args) build_args ;;
  down) stop_dockerd ;;
  status)
    if engine_answers; then log "engine answers"; else log "engine does not answer"; exit 0; fi
    [ -f "$PID_FILE" ] && log "dockerd started by this script: pid $(cat "$PID_FILE")"
    for image in "$NODE_IMAGE" "$REDIS_IMAGE"; do
      if image_exists "$image"; then
        log "${image}: $(docker image inspect -f "{{ index .Config.Labels \"${STANDIN_LABEL}\" }}" "$image" | sed 's/^$/pulled/')"
      else log "${image}: missing"; fi
    done ;;
  *) die "usage: $0 up|images|build-args|down|status" ;;
esac
