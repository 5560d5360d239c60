#!/usr/bin/env bash
# Two real, independent Docker engines (Debian's docker.io) for the Docker backend tests.
#   scripts/engines/docker.sh up|down|status
# Engine "a" and engine "b" each get their own dockerd (and the containerd it manages) with a private
# socket, data-root, exec-root and an empty daemon.json, no systemd, --iptables=false --bridge=none
# (containers use --network=host or none). No registry is reachable here, so each engine gets the image
# local/busybox:ci made by `docker import` from busybox-static. State lives in
# ${SFLOW_ENGINES_DIR:-/tmp/sflow-engines}/docker/{a,b}; settings go to …/docker.env (DOCKER_HOST = a).
set -euo pipefail
ENGINE=docker
# shellcheck source=scripts/engines/lib.sh
. "$(dirname "$0")/lib.sh"

W=$ENGINES_DIR/docker
ENVF=$ENGINES_DIR/docker.env
IMAGE=local/busybox:ci
ENGINE_NAMES=(a b)
PKGS="apt-get install -y --no-install-recommends docker.io busybox-static"

sock() { echo "unix://$W/$1/docker.sock"; }
dk() { timeout "${DK_TIMEOUT:-20}" docker -H "$(sock "$1")" "${@:2}"; }

engine_healthy() {
  pid_alive "$W/$1/dockerd.pid" && DK_TIMEOUT=10 dk "$1" image inspect "$IMAGE" >/dev/null 2>&1
}

healthy() {
  local e
  for e in "${ENGINE_NAMES[@]}"; do engine_healthy "$e" || return 1; done
}

# a tiny root filesystem: busybox-static and one symlink per applet; imported into both engines
make_rootfs_tar() {
  local r=$W/rootfs a
  mkdir -p "$r/bin" "$r/etc" "$r/tmp" "$r/proc" "$r/sys" "$r/dev" "$r/root"
  cp "$(command -v busybox)" "$r/bin/busybox"
  for a in $("$r/bin/busybox" --list); do [ "$a" = busybox ] || ln -s busybox "$r/bin/$a"; done
  echo 'root:x:0:0:root:/root:/bin/sh' >"$r/etc/passwd"
  echo 'root:x:0:' >"$r/etc/group"
  chmod 1777 "$r/tmp"
  tar -C "$r" -cf "$W/rootfs.tar" .
  rm -rf "$r"
}

start_engine() {
  local e=$1 d=$W/$1
  mkdir -p "$d"
  echo '{}' >"$d/daemon.json" # never read the host's /etc/docker/daemon.json
  start_daemon "$d/dockerd.pid" "$d/dockerd.log" /usr/sbin/dockerd --config-file="$d/daemon.json" \
    --data-root="$d/root" --exec-root="$d/exec" --pidfile="$d/dockerd.conf.pid" --host="$(sock "$e")" \
    --iptables=false --ip-masq=false --ip-forward=false --bridge=none --storage-driver=overlay2
}

start() {
  mkdir -p "$W"
  chmod 0755 "$W"
  local e
  for e in "${ENGINE_NAMES[@]}"; do start_engine "$e"; done
  make_rootfs_tar
  for e in "${ENGINE_NAMES[@]}"; do
    wait_until 40 "dockerd $e ($(sock "$e"))" "$W/$e/dockerd.log" "$W/$e/dockerd.pid" -- dk "$e" version --format '{{.Server.Version}}'
    dk "$e" import -c 'ENV PATH=/bin' "$W/rootfs.tar" "$IMAGE" >/dev/null ||
      fail "docker import of $IMAGE into engine $e failed" "$W/$e/dockerd.log"
  done
  rm -f "$W/rootfs.tar"
}

write_docker_env() {
  write_env "$ENVF" "DOCKER_HOST=$(sock a)" \
    "SFLOW_TEST_DOCKER_HOST_A=$(sock a)" \
    "SFLOW_TEST_DOCKER_HOST_B=$(sock b)" \
    "SFLOW_TEST_DOCKER_IMAGE=$IMAGE" \
    "SFLOW_TEST_DOCKER_CLI=$(command -v docker)" \
    "SFLOW_TEST_DOCKER_DIR=$W"
}

up() {
  need_root
  need_cmds "$PKGS" dockerd docker busybox node
  local linkage
  linkage=$(LC_ALL=C ldd "$(command -v busybox)" 2>&1 || true)
  [[ "$linkage" == *"not a dynamic executable"* ]] ||
    fail "$(command -v busybox) is not statically linked, so it cannot be the image; install busybox-static"
  if healthy; then
    write_docker_env
    log "reusing the two healthy engines in $W (DOCKER_HOST=$(sock a))"
    return 0
  fi
  [ ! -e "$W" ] || {
    log "cleaning stale state in $W"
    down
  }
  local t0
  t0=$(now)
  start_with_retries "engines did not start"
  write_docker_env
  log "ready in $(elapsed "$t0")s: engines a and b with $IMAGE; env in $ENVF"
}

stop_engine() {
  local e=$1 ids
  if pid_alive "$W/$e/dockerd.pid"; then
    ids=$(DK_TIMEOUT=10 dk "$e" ps -aq 2>/dev/null || true)
    # shellcheck disable=SC2086
    [ -z "$ids" ] || DK_TIMEOUT=30 dk "$e" rm -f $ids >/dev/null 2>&1 || log "could not remove containers of engine $e"
  fi
  stop_pid "$W/$e/dockerd.pid" 20
}

down() {
  rm -f "$ENVF"
  [ -d "$W" ] || return 0
  local e
  for e in "${ENGINE_NAMES[@]}"; do stop_engine "$e"; done
  reap_dir "$W" # containerd, shims and mounts (netns, overlay) left under it
  log "stopped; $W removed"
}

status() {
  local e bad=0
  for e in "${ENGINE_NAMES[@]}"; do
    if engine_healthy "$e"; then
      echo "docker $e: up ($(sock "$e"), server $(dk "$e" version --format '{{.Server.Version}}'))"
    else
      echo "docker $e: not running (or no $IMAGE) in $W/$e"
      bad=1
    fi
  done
  return "$bad"
}

# fault kill|start dockerd-a|dockerd-b: SIGKILL one dockerd of THIS fixture (its containerd and the
# containers' shims live on), or start it again on the same data-root. For the fault suite.
fault_cmd() {
  local verb=${1:-} d=${2:-} e
  case "$d" in dockerd-a | dockerd-b) e=${d#dockerd-} ;; *) fail "fault: unknown daemon '$d' (dockerd-a, dockerd-b)" ;; esac
  [ -d "$W/$e" ] || fail "fault: no engine in $W/$e"
  case "$verb" in
    kill)
      pid_alive "$W/$e/dockerd.pid" || return 0
      kill -KILL "$(cat "$W/$e/dockerd.pid")"
      local i
      for ((i = 0; i < 50; i++)); do pid_alive "$W/$e/dockerd.pid" || return 0; sleep 0.1; done
      fail "fault: $d did not die"
      ;;
    start)
      pid_alive "$W/$e/dockerd.pid" && return 0
      mv -f "$W/$e/dockerd.log" "$W/$e/dockerd.log.1" 2>/dev/null || true
      start_engine "$e"
      wait_until 60 "dockerd $e" "$W/$e/dockerd.log" "$W/$e/dockerd.pid" -- dk "$e" version --format '{{.Server.Version}}'
      ;;
    *) fail "fault: unknown verb '$verb' (kill, start)" ;;
  esac
}

engine_main up down status "$@"
