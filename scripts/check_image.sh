#!/usr/bin/env bash
# The Docker image as shipped, built and tried: every page in chromium, and a judgment kept across a restart.
#
#   make image-check            (or: bash scripts/check_image.sh; needs root, chromium and the dev .venv)
#
# 1. Build the Dockerfile with `docker` where a daemon answers, else with Debian's buildah (apt-get install buildah
#    debootstrap): vfs storage in $WORK/store, chroot isolation, docker format (it keeps the HEALTHCHECK).  When
#    python:3.11-slim cannot be pulled, the base is a stand-in made once by debootstrap: Debian bookworm's
#    python3.11 with `python` and `pip` as the official image has them.  buildah's build uses the package indexes,
#    wheel folders and CA bundle this machine's pip uses (`pip config list`), mounted read-only.
# 2. Start it with an empty folder as its KWEVAL_HOME volume; the HEALTHCHECK command must pass.
# 3. Open every page in chromium (its own title, no error box) and grade one keyword (scripts/image_pages.py).
# 4. Replace the container by a new one on the same volume: the judgment is found again.
# Prints the build's time and the image's size; exit 0 when every check holds.  KWEVAL_IMAGE_BUILT=1 tries the image
# an earlier run built (the checks alone).
set -euo pipefail
cd "$(dirname "$0")/.."

IMAGE=${KWEVAL_IMAGE:-localhost/kweval:check}
WORK=${KWEVAL_IMAGE_WORK:-/var/tmp/kweval-image}
PYTHON=${PYTHON:-.venv/bin/python}
MIRROR=${DEBIAN_MIRROR:-http://deb.debian.org/debian}
STANDIN=localhost/kweval-python-standin:3.11-bookworm
UPSTREAM=docker.io/library/python:3.11-slim
BUILDAH=(buildah --root "$WORK/store" --runroot "$WORK/run" --storage-driver vfs)
VOLUME="$WORK/volume"
SERVER_PID=

say() { printf 'image-check: %s\n' "$*"; }
fail() { say "FAILED: $*"; exit 1; }
free_port() { "$PYTHON" -c 'import socket; s = socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])'; }

# --- the engine ---------------------------------------------------------------------------------------------------
if command -v docker >/dev/null && docker info >/dev/null 2>&1; then
  ENGINE=docker
elif command -v buildah >/dev/null; then
  ENGINE=buildah
else
  say "no Docker daemon and no buildah: apt-get install buildah debootstrap"; exit 2
fi
[ "$(id -u)" = 0 ] || { say "needs root: buildah's storage, and the volume folder given to the image's user"; exit 2; }
[ -x "$PYTHON" ] || { say "no $PYTHON: make dev first (selenium drives chromium)"; exit 2; }
mkdir -p "$WORK"
say "engine: $ENGINE; work folder $WORK"

# --- buildah: the base image and pip's settings ------------------------------------------------------------------
standin_base() {  # Debian bookworm + python3.11, `python` and `pip` on PATH, pip free to install (as in python:*-slim)
  "${BUILDAH[@]}" inspect --type image "$STANDIN" >/dev/null 2>&1 && return
  command -v debootstrap >/dev/null || { say "python:3.11-slim cannot be pulled and debootstrap is missing"; exit 2; }
  say "making the stand-in base with debootstrap ($MIRROR)"
  local root="$WORK/rootfs"
  rm -rf "$root"
  debootstrap --variant=minbase --include=python3,python3-pip,ca-certificates bookworm "$root" "$MIRROR" \
    >"$WORK/debootstrap.log" 2>&1 || fail "debootstrap (see $WORK/debootstrap.log)"
  rm -f "$root"/usr/lib/python3*/EXTERNALLY-MANAGED
  ln -sf python3 "$root/usr/bin/python"
  rm -rf "$root"/var/lib/apt/lists/* "$root"/var/cache/apt/*.bin
  tar -C "$root" -cf "$WORK/rootfs.tar" .
  local ctr
  ctr=$("${BUILDAH[@]}" from scratch)
  "${BUILDAH[@]}" add "$ctr" "$WORK/rootfs.tar" / >/dev/null
  "${BUILDAH[@]}" config --env PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin \
    --env LANG=C.UTF-8 --cmd python3 "$ctr"
  "${BUILDAH[@]}" commit -q "$ctr" "$STANDIN" >/dev/null
  "${BUILDAH[@]}" rm "$ctr" >/dev/null
  rm -rf "$root" "$WORK/rootfs.tar"
}

pip_settings() {  # KEY=VALUE lines: this machine's pip extra indexes, wheel folders and CA bundle (env over files)
  "$PYTHON" - <<'EOF'
import ast, subprocess, sys
out = subprocess.run([sys.executable, "-m", "pip", "config", "list"], capture_output=True, text=True).stdout
found = {}
for line in sorted(out.splitlines(), key=lambda l: l.startswith(":env:")):  # the environment's last: it wins
    key, _, value = line.partition("=")
    name = key.rsplit(".", 1)[-1]
    if name in ("extra-index-url", "find-links", "cert"):
        found[name] = ast.literal_eval(value)
for name, arg in (("extra-index-url", "PIP_EXTRA_INDEX_URL"), ("find-links", "PIP_FIND_LINKS"), ("cert", "PIP_CERT")):
    print(f"{arg}={found.get(name, '')}")
EOF
}

build_with_buildah() {
  local base=$UPSTREAM args=() mounts=() seen=" "
  if "${BUILDAH[@]}" inspect --type image "$UPSTREAM" >/dev/null 2>&1 ||
    timeout 120 "${BUILDAH[@]}" pull -q "$UPSTREAM" >/dev/null 2>&1; then
    say "base: $UPSTREAM"
  else
    standin_base
    base=$STANDIN
    say "base: $STANDIN (python:3.11-slim cannot be pulled here)"
  fi
  while IFS='=' read -r arg value; do
    [ -n "$value" ] || continue
    args+=(--build-arg "$arg=$value")
    for item in $value; do  # each local index, wheel folder or bundle is mounted where pip's settings name it
      local path=${item#file://}
      path=${path%/simple}
      [[ $path == /* && -e $path && $seen != *" $path "* ]] || continue
      mounts+=(-v "$path:$path:ro")
      seen+="$path "
    done
    say "build argument $arg=$value"
  done < <(pip_settings)
  "${BUILDAH[@]}" build --isolation chroot --format docker --pull=never -f Dockerfile -t "$IMAGE" \
    --build-arg "PYTHON_IMAGE=$base" "${args[@]}" "${mounts[@]}" . >"$WORK/build.log" 2>&1 ||
    { tail -30 "$WORK/build.log"; fail "the build (see $WORK/build.log)"; }
  "${BUILDAH[@]}" rmi --prune >/dev/null 2>&1 || true  # an earlier build's image, untagged now (vfs: gigabytes)
}

# --- the container ------------------------------------------------------------------------------------------------
image_config() {  # one field of the image's config (Entrypoint, Healthcheck), as JSON
  if [ "$ENGINE" = docker ]; then
    docker image inspect "$IMAGE" |
      "$PYTHON" -c 'import json, sys; print(json.dumps(json.load(sys.stdin)[0]["Config"][sys.argv[1]]))' "$1"
  else  # buildah's format templates have no json function: its whole inspection, read here
    "${BUILDAH[@]}" inspect --type image "$IMAGE" |
      "$PYTHON" -c 'import json, sys; print(json.dumps(json.load(sys.stdin)["Docker"]["config"][sys.argv[1]]))' "$1"
  fi
}

entrypoint() {  # the image's ENTRYPOINT, one word a line
  image_config Entrypoint | "$PYTHON" -c 'import json, sys; print("\n".join(json.load(sys.stdin)))'
}

healthcheck() {  # the image's HEALTHCHECK command, one word a line (["CMD", word...] or ["CMD-SHELL", line])
  image_config Healthcheck | "$PYTHON" -c '
import json, sys
test = json.load(sys.stdin)["Test"]
print("\n".join(["/bin/sh", "-c", test[1]] if test[0] == "CMD-SHELL" else test[1:]))'
}

wait_healthy() {
  for _ in $(seq 600); do
    curl -sf "$URL/_stcore/health" >/dev/null 2>&1 && return 0
    if [ "$ENGINE" = buildah ] && ! kill -0 "$SERVER_PID" 2>/dev/null; then
      tail -20 "$WORK/server.log"; fail "the server exited"
    fi
    sleep 0.5
  done
  tail -20 "$WORK/server.log"; fail "the server did not answer within 300 s"
}

start() {  # a new container from the image on the same volume; sets URL
  PORT=$(free_port)
  URL="http://127.0.0.1:$PORT"
  if [ "$ENGINE" = docker ]; then
    CTR=$(docker run -d -p "127.0.0.1:$PORT:8501" -v "$VOLUME:$HOME_IN" "$IMAGE")
  else
    # chroot isolation shares this machine's network: the server takes a free port (the ENTRYPOINT's words, then
    # --server.port, which the last one given sets) and listens on the loopback only
    CTR=$("${BUILDAH[@]}" from --pull=never "$IMAGE")
    mapfile -t ENTRY < <(entrypoint)
    setsid "${BUILDAH[@]}" run --isolation chroot -v "$VOLUME:$HOME_IN" "$CTR" -- "${ENTRY[@]}" \
      "--server.port=$PORT" --server.address=127.0.0.1 >"$WORK/server.log" 2>&1 &
    SERVER_PID=$!
  fi
  wait_healthy
  mapfile -t HEALTH < <(healthcheck)
  if [ "$ENGINE" = docker ]; then
    docker exec "$CTR" "${HEALTH[@]}" || fail "the HEALTHCHECK command failed"
  else
    "${BUILDAH[@]}" run --isolation chroot "$CTR" -- "${HEALTH[@]//8501/$PORT}" || fail "the HEALTHCHECK command failed"
  fi
  say "container up at $URL as uid $(run_in id -u), HEALTHCHECK passes"
}

run_in() {  # a command in the running container (as its user)
  if [ "$ENGINE" = docker ]; then docker exec "$CTR" "$@"; else "${BUILDAH[@]}" run --isolation chroot "$CTR" -- "$@"; fi
}

stop() {
  [ -n "${CTR:-}" ] || return 0
  if [ "$ENGINE" = docker ]; then
    docker rm -f "$CTR" >/dev/null
  else
    if [ -n "$SERVER_PID" ] && kill -0 "$SERVER_PID" 2>/dev/null; then
      kill -TERM -- "-$SERVER_PID" 2>/dev/null || true  # its own process group (setsid): buildah and the server
      for _ in $(seq 60); do kill -0 "$SERVER_PID" 2>/dev/null || break; sleep 0.5; done
    fi
    SERVER_PID=
    "${BUILDAH[@]}" rm "$CTR" >/dev/null
  fi
  CTR=
}
trap stop EXIT

# --- 1. build -----------------------------------------------------------------------------------------------------
started=$(date +%s)
if [ "${KWEVAL_IMAGE_BUILT:-}" = 1 ]; then  # try the image an earlier run built, without building it again
  say "not built again (KWEVAL_IMAGE_BUILT=1): the build's time below is 0"
elif [ "$ENGINE" = docker ]; then
  docker build -t "$IMAGE" . >"$WORK/build.log" 2>&1 || { tail -30 "$WORK/build.log"; fail "the build"; }
else
  build_with_buildah
fi
built=$(date +%s)
if [ "$ENGINE" = docker ]; then
  SIZE=$(docker image inspect --format '{{.Size}}' "$IMAGE" | awk '{printf "%.2f GB", $1 / 1e9}')
else
  SIZE=$("${BUILDAH[@]}" images --format '{{.Size}}' "$IMAGE" | head -1)
fi
say "built $IMAGE in $((built - started)) s; size $SIZE"

# --- 2.-4. run, pages, judgment, restart --------------------------------------------------------------------------
HOME_IN=$("$PYTHON" - <<'EOF'
import re
print(re.search(r"^VOLUME\s+(\S+)", open("Dockerfile").read(), re.M).group(1))
EOF
)
rm -rf "$VOLUME" && mkdir -p "$VOLUME"
chown 1000:1000 "$VOLUME"  # the image's user (useradd --uid 1000), as a new named volume would be
start
[ "$(run_in id -u)" != 0 ] || fail "the server runs as root"
"$PYTHON" scripts/image_pages.py "$URL" pages || fail "a page"
"$PYTHON" scripts/image_pages.py "$URL" judge || fail "grading a keyword"
stop
stores=$(find "$VOLUME" -path '*/judgments/*.sqlite' | wc -l)
[ "$stores" = 1 ] || fail "$stores judgment stores in the volume, not 1"
say "the judgment is in the volume: $(find "$VOLUME" -path '*/judgments/*.sqlite' -printf '%P')"
start
"$PYTHON" scripts/image_pages.py "$URL" judged || fail "the judgment after the restart"
stop
say "passed: built in $((built - started)) s, image $SIZE, checks done in $(($(date +%s) - built)) s"
