# shellcheck shell=bash
# Shared helpers of the real-engine fixtures (sourced by scripts/engines/<engine>.sh; not run alone).
# Every engine lives in a private directory under $ENGINES_DIR and writes KEY=VALUE lines to
# $ENGINES_DIR/<engine>.env; every wait is bounded and prints the daemon's log tail when it gives up.

ENGINES_DIR=${SFLOW_ENGINES_DIR:-/tmp/sflow-engines}

# an unexpected failure under `set -e` names its place instead of exiting silently
set -E
FAILED_LOUDLY= # set by fail(), which has already said why
on_err() { [ -n "$FAILED_LOUDLY" ] || printf '!! %s: failed at line %s: %s\n' "$ENGINE" "$1" "$2" >&2; }
trap 'on_err "$LINENO" "$BASH_COMMAND"' ERR

log() { printf '%s: %s\n' "$ENGINE" "$*" >&2; }
now() { date +%s.%N; }
elapsed() { awk -v a="$1" -v b="$(now)" 'BEGIN { printf "%.1f", b - a }'; }

# fail MESSAGE [LOGFILE…]: a loud one-line reason, then the last lines of each log that exists.
fail() {
  FAILED_LOUDLY=1
  local msg=$1
  shift
  printf '!! %s: %s\n' "$ENGINE" "$msg" >&2
  local f
  for f in "$@"; do
    [ -s "$f" ] || continue
    printf -- '--- last lines of %s\n' "$f" >&2
    tail -n 25 "$f" >&2
  done
  return 1
}

# need_cmds HINT CMD…: every command on PATH, else one message naming the missing ones and the fix.
need_cmds() {
  local hint=$1 missing=() c
  shift
  for c in "$@"; do command -v "$c" >/dev/null 2>&1 || missing+=("$c"); done
  [ ${#missing[@]} -eq 0 ] || fail "missing ${missing[*]}; install with: $hint"
}

# need_reachable DIR: other users (munge, the ssh test account) must be able to enter DIR's parents.
need_reachable() {
  local d
  d=$(dirname "$(realpath -m "$1")")
  while [ "$d" != / ]; do
    if [ -d "$d" ] && [ "$(($(stat -c '0%a' "$d") & 1))" = 0 ]; then
      fail "$d is not searchable by other users (mode $(stat -c %a "$d")); use an SFLOW_ENGINES_DIR below /tmp"
    fi
    d=$(dirname "$d")
  done
}

need_root() { [ "$(id -u)" = 0 ] || fail "must run as root (it starts system daemons and creates device nodes)"; }

# wait_until SECONDS WHAT "LOGFILE…" PIDFILE -- CMD…: poll CMD every 0.2 s until it succeeds; gives up
# at the deadline, or at once when the daemon in PIDFILE (may be "") has died, printing the logs' tails.
wait_until() {
  local secs=$1 what=$2 logs pidfile=$4
  read -r -a logs <<<"$3"
  shift 5
  local deadline
  deadline=$(awk -v n="$(now)" -v s="$secs" 'BEGIN { printf "%.0f", n + s }')
  until "$@" >/dev/null 2>&1; do
    if [ -n "$pidfile" ] && ! pid_alive "$pidfile"; then
      fail "$what exited while starting" "${logs[@]}"
      return 1
    fi
    if [ "$(date +%s)" -ge "$deadline" ]; then
      fail "$what not ready after ${secs}s" "${logs[@]}"
      return 1
    fi
    sleep 0.2
  done
}

# start_with_retries WHAT: `start` in a subshell (so that `set -e` holds inside it); after a failure,
# `down`, and once more with new ports when the failure was a port taken meanwhile (at most 3 attempts).
# Never call it in a tested context (`if`, `||`, `&&`): bash would then ignore `set -e` inside start.
start_with_retries() {
  local attempt rc
  for attempt in 1 2 3; do
    set +e
    trap - ERR # start reports its own failures (in the subshell, which has the trap again)
    (trap 'on_err "$LINENO" "$BASH_COMMAND"' ERR; set -e; start)
    rc=$?
    trap 'on_err "$LINENO" "$BASH_COMMAND"' ERR
    set -e
    [ "$rc" != 0 ] || return 0
    if [ "$attempt" -lt 3 ] && port_clash "$W"; then
      log "a port was taken meanwhile (attempt $attempt); retrying with new ports"
      down
      continue
    fi
    down
    break
  done
  fail "$1 (logs above)"
}

# port_clash DIR: did a daemon logging under DIR fail because its port was taken meanwhile?
port_clash() { grep -rqsiE 'address already in use|bind.*(failed|error)|error.*bind' "$1" --include='*.log' --include='*.out'; }

# free_ports ADDRESS N: N distinct TCP ports free on ADDRESS right now (the kernel picks them).
free_ports() {
  node -e '
    const net = require("node:net");
    const [addr, n] = [process.argv[1], Number(process.argv[2])];
    const servers = [];
    const next = () => {
      if (servers.length === n) {
        console.log(servers.map((s) => s.address().port).join(" "));
        servers.forEach((s) => s.close());
        return;
      }
      const s = net.createServer();
      s.once("error", (e) => { console.error(e.message); process.exit(1); });
      s.listen(0, addr, () => { servers.push(s); next(); });
    };
    next();' "$1" "$2"
}

# start_daemon PIDFILE LOGFILE CMD…: CMD in its own session, detached from our stdio; PID recorded.
start_daemon() {
  local pidfile=$1 logf=$2
  shift 2
  setsid "$@" >"$logf" 2>&1 </dev/null 9>&- &
  echo $! >"$pidfile"
}

# alive PID: the process exists and is not a zombie (PID 1 here may reap exited daemons late).
alive() {
  local stat
  { read -r stat <"/proc/$1/stat"; } 2>/dev/null || return 1
  stat=${stat##*) }
  [ "${stat%% *}" != Z ]
}

pid_alive() { [ -s "$1" ] && alive "$(cat "$1")"; }

# stop_pid PIDFILE [SECONDS]: SIGTERM, wait, then SIGKILL; quiet when already gone.
stop_pid() {
  local pidfile=$1 secs=${2:-10} pid i
  [ -s "$pidfile" ] || return 0
  pid=$(cat "$pidfile")
  kill -TERM "$pid" 2>/dev/null || return 0
  for ((i = 0; i < secs * 5; i++)); do
    alive "$pid" || return 0
    sleep 0.2
  done
  log "pid $pid ignored SIGTERM for ${secs}s; killing it"
  kill -KILL "$pid" 2>/dev/null || true
}

# procs_using DIR: PIDs (other than ours) whose command line names DIR or that hold a file under it open.
procs_using() {
  local dir=$1
  {
    grep -lsaF -- "$dir" /proc/[0-9]*/cmdline || true
    find /proc/[0-9]*/fd -maxdepth 1 -lname "$dir/*" 2>/dev/null || true
  } | cut -d/ -f3 | sort -u | while read -r pid; do
    [ "$pid" = $$ ] || [ "$pid" = "$BASHPID" ] || ! alive "$pid" || echo "$pid"
  done
  return 0
}

# with_descendants PID…: those PIDs and every process below them (e.g. a command an ssh session ran).
with_descendants() {
  ps -eo pid=,ppid= | awk -v roots="$*" '
    BEGIN { n = split(roots, r, " "); for (i = 1; i <= n; i++) keep[r[i]] = 1 }
    { parent[$1] = $2 }
    END {
      for (grew = 1; grew;) { grew = 0; for (p in parent) if (!(p in keep) && (parent[p] in keep)) { keep[p] = 1; grew = 1 } }
      for (p in keep) print p
    }'
}

# reap_dir DIR: kill every leftover process tied to DIR and its descendants (by PID), unmount what is
# mounted under it, then remove it. Used by every `down`, so nothing outlives a fixture.
reap_dir() {
  local dir=$1 pids m i
  [ -d "$dir" ] || return 0
  pids=$(procs_using "$dir" | tr '\n' ' ')
  if [ -n "${pids// /}" ]; then
    # shellcheck disable=SC2086
    pids=$(with_descendants $pids | grep -vx -e "$$" -e "$BASHPID" | tr '\n' ' ' || true)
    log "stopping leftover processes: $pids"
    # shellcheck disable=SC2086
    kill -TERM $pids 2>/dev/null || true
    for ((i = 0; i < 25; i++)); do
      pids=$(for m in $pids; do alive "$m" && echo "$m"; done | tr '\n' ' ' || true)
      [ -z "${pids// /}" ] && break
      sleep 0.2
    done
    # shellcheck disable=SC2086
    [ -z "${pids// /}" ] || kill -KILL $pids 2>/dev/null || true
  fi
  # deepest mount first; lazy unmount as a last resort
  awk -v d="$dir" '$5 == d || index($5, d "/") == 1 { print $5 }' /proc/self/mountinfo | sort -r |
    while read -r m; do umount "$m" 2>/dev/null || umount -l "$m" 2>/dev/null || log "could not unmount $m"; done
  rm -rf "$dir" 2>/dev/null || { sleep 0.5 && rm -rf "$dir"; } || fail "could not remove $dir"
}

# write_env FILE KEY=VALUE…: atomically (re)write an engine's env file.
write_env() {
  local file=$1 tmp
  shift
  tmp="$file.tmp.$$"
  printf '%s\n' "# written by scripts/engines/$ENGINE.sh at $(date -u +%FT%TZ); removed by '$ENGINE.sh down'" >"$tmp"
  printf '%s\n' "$@" >>"$tmp"
  mv -f "$tmp" "$file"
}

# with_lock: serialise up/down of one engine in one engines dir (concurrent test runs share it).
with_lock() {
  mkdir -p "$ENGINES_DIR"
  chmod 0755 "$ENGINES_DIR"
  exec 9>"$ENGINES_DIR/.$ENGINE.lock"
  flock -w 300 9 || fail "another '$ENGINE.sh' has held $ENGINES_DIR/.$ENGINE.lock for 300s"
}

# engine_main UP DOWN STATUS "$@": the common command line of every engine script.
engine_main() {
  local up=$1 down=$2 status=$3
  shift 3
  case "${1:-}" in
    up)
      with_lock
      "$up"
      ;;
    down)
      with_lock
      "$down"
      rm -f "$ENGINES_DIR/.$ENGINE.lock"
      rmdir "$ENGINES_DIR" 2>/dev/null || true # only when no other engine is left in it
      ;;
    status) "$status" ;;
    fault)
      # fault injection (test/engines/faults/): `fault kill|start DAEMON` on this engine only
      declare -F fault_cmd >/dev/null || fail "$ENGINE has no fault verbs"
      shift
      fault_cmd "$@"
      ;;
    *)
      echo "usage: $0 up|down|status|fault kill|start DAEMON   (state in \${SFLOW_ENGINES_DIR:-/tmp/sflow-engines}/$ENGINE)" >&2
      return 2
      ;;
  esac
}
