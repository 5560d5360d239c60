#!/bin/sh
# sflow hardware monitor collector: one per node, POSIX sh + coreutils, no Node.js needed.
# Samples /proc/stat, /proc/loadavg, /proc/meminfo, `df -P -k /`, /proc/net/dev and
# `nvidia-smi --query-gpu` into headerless CSV files (layouts: docs/monitor.md), one file per
# scope: <out-dir>/<scope>_monitor_node_<id>_<host>.log, opened in append mode.
#
# Options (all optional):
#   --interval-ms N           default sampling interval (>= 100; default 5000)
#   --scopes LIST             comma list of gpu,cpu,memory,disk,network, or `all` (default)
#   --scope-interval S=N      interval of one scope in ms (repeatable), e.g. gpu=500
#   --gpu-fields LIST         nvidia-smi --query-gpu list; must start with `index`
#   --out-dir DIR             default $SFLOW_TASK_OUTPUT_DIR, else .
#   --node-id ID              default $SLURM_NODEID, else 0
#   --host NAME               default $SLURMD_NODENAME, else `hostname`
#   --parent-pid PID          exit when this process is gone (checked every tick)
#   --custom CMD              a shell command run beside the collector (repeatable); its output
#                             lines go to custom_monitor_node_<id>_<host>.log as `ts,<k>,<line>`
#   --max-ticks N             stop after N ticks (tests and benchmarks)
# Stops cleanly on TERM/INT/HUP (its custom commands with it). One failed sample is logged to
# stderr and sampling goes on. Never reserves anything: it only reads.
set -u

interval_ms=5000
scopes=all
gpu_fields=index,utilization.gpu,utilization.memory,temperature.gpu,temperature.memory,power.draw,clocks.sm,clocks.mem,memory.total,memory.used
out_dir=${SFLOW_TASK_OUTPUT_DIR:-.}
node_id=${SLURM_NODEID:-0}
host=${SLURMD_NODENAME:-}
parent_pid=
max_ticks=0
iv_gpu=; iv_cpu=; iv_memory=; iv_disk=; iv_network=

die() { printf 'monitor-collector: %s\n' "$1" >&2; exit 2; }
is_int() { case $1 in ''|*[!0-9]*) return 1 ;; *) return 0 ;; esac; }

want=
for a in "$@"; do
  if [ -n "$want" ]; then
    case $want in
      --interval-ms) interval_ms=$a ;;
      --scopes) scopes=$a ;;
      --gpu-fields) gpu_fields=$a ;;
      --out-dir) out_dir=$a ;;
      --node-id) node_id=$a ;;
      --host) host=$a ;;
      --parent-pid) parent_pid=$a ;;
      --max-ticks) max_ticks=$a ;;
      --custom) ;;
      --scope-interval)
        s=${a%%=*}; v=${a#*=}
        is_int "$v" && [ "$v" -ge 100 ] || die "--scope-interval $a: the interval must be an integer >= 100"
        case $s in
          gpu) iv_gpu=$v ;; cpu) iv_cpu=$v ;; memory) iv_memory=$v ;; disk) iv_disk=$v ;;
          network) iv_network=$v ;; *) die "--scope-interval: unknown scope '$s'" ;;
        esac ;;
    esac
    want=; continue
  fi
  case $a in
    --interval-ms|--scopes|--gpu-fields|--out-dir|--node-id|--host|--parent-pid|--custom|--scope-interval|--max-ticks) want=$a ;;
    *) die "unknown option '$a'" ;;
  esac
done
[ -z "$want" ] || die "option $want needs a value"
is_int "$interval_ms" && [ "$interval_ms" -ge 100 ] || die "--interval-ms must be an integer >= 100, got '$interval_ms'"
case $gpu_fields in index|index,*) ;; *) die "--gpu-fields must start with 'index'" ;; esac
[ -n "$host" ] || host=$(hostname 2>/dev/null || uname -n)

on_gpu=0; on_cpu=0; on_memory=0; on_disk=0; on_network=0
[ "$scopes" = all ] && scopes=gpu,cpu,memory,disk,network
old_ifs=$IFS; IFS=,
for s in $scopes; do
  case $s in
    gpu) on_gpu=1 ;; cpu) on_cpu=1 ;; memory) on_memory=1 ;; disk) on_disk=1 ;; network) on_network=1 ;;
    ''|none) ;;
    *) IFS=$old_ifs; die "unknown scope '$s' (expected gpu, cpu, memory, disk, network or all)" ;;
  esac
done
IFS=$old_ifs
: "${iv_gpu:=$interval_ms}" "${iv_cpu:=$interval_ms}" "${iv_memory:=$interval_ms}"
: "${iv_disk:=$interval_ms}" "${iv_network:=$interval_ms}"

mkdir -p "$out_dir" || die "cannot create $out_dir"
file() { printf '%s/%s_monitor_node_%s_%s.log' "$out_dir" "$1" "$node_id" "$host"; }
f_gpu=$(file gpu); f_cpu=$(file cpu); f_memory=$(file memory); f_disk=$(file disk)
f_network=$(file network); f_custom=$(file custom)

# Time without a fork per sample: the node's epoch ms once, then /proc/uptime (centiseconds).
up_cs() {
  read -r up _ </proc/uptime
  _i=${up%.*}; _f=${up#*.}
  UP=$((_i * 100 + 1$_f - 100))
}
up_cs; up0=$UP
epoch0=$(date +%s%3N 2>/dev/null)
is_int "$epoch0" || epoch0=$(($(date +%s) * 1000))
now_ms() { up_cs; NOW=$((epoch0 + (UP - up0) * 10)); }
# formatting without a fork ($(printf) would start a subshell per sample)
fmt_ts() {
  _r=$(($1 % 1000))
  case ${#_r} in 1) _r=00$_r ;; 2) _r=0$_r ;; esac
  TS=$(($1 / 1000)).$_r
}
# a / b with two decimals (integers; b > 0; a negative a, e.g. a counter reset, reads 0)
pct2() {
  _x=$(($1 * 10000 / $2))
  [ "$_x" -ge 0 ] || _x=0
  _f=$((_x % 100))
  [ "$_f" -ge 10 ] || _f=0$_f
  P=$((_x / 100)).$_f
}

pids=
cleanup() {
  trap '' TERM INT HUP
  # started in our own process group: stop the whole group (custom commands' children too)
  read -r _ _ _ _ pgrp _ </proc/$$/stat 2>/dev/null || pgrp=
  if [ "$pgrp" = "$$" ]; then kill -TERM 0 2>/dev/null; else
    for p in $pids; do kill -TERM "$p" 2>/dev/null; done
  fi
  exit 0
}
trap cleanup TERM INT HUP

# custom commands: started once, each output line stamped with the node time
k=0; want=
for a in "$@"; do
  if [ "$want" = --custom ]; then
    k=$((k + 1))
    (
      sh -c "$a" 2>&1 </dev/null | while IFS= read -r line; do
        now_ms; fmt_ts "$NOW"; printf '%s,%s,%s\n' "$TS" "$k" "$line"
      done >>"$f_custom"
    ) &
    pids="$pids $!"
  fi
  want=$a
done

[ "$on_gpu" -eq 1 ] && printf '#fields=%s\n' "$gpu_fields" >>"$f_gpu"

sample_gpu() {
  if ! command -v nvidia-smi >/dev/null 2>&1; then
    printf '%s,ERROR,nvidia-smi not found\n' "$TS" >>"$f_gpu"; return
  fi
  if command -v timeout >/dev/null 2>&1; then
    out=$(timeout 10 nvidia-smi --query-gpu="$gpu_fields" --format=csv,noheader,nounits 2>&1)
  else
    out=$(nvidia-smi --query-gpu="$gpu_fields" --format=csv,noheader,nounits 2>&1)
  fi
  rc=$?
  if [ "$rc" -eq 0 ]; then
    printf '%s\n' "$out" | sed -e 's/, /,/g' -e "s/^/$TS,/" >>"$f_gpu"
  else
    msg=$(printf '%s' "$out" | tr '\n,' '  ')
    [ -n "$msg" ] || msg="nvidia-smi exited with status $rc"
    [ "$rc" -eq 124 ] && msg="nvidia-smi timed out after 10s"
    printf '%s,ERROR,%s\n' "$TS" "$msg" >>"$f_gpu"
    printf 'monitor-collector: gpu sample failed: %s\n' "$msg" >&2
  fi
}

c_prev_total=; c_prev_busy=
read_cpu() {
  read -r _ u n s i w q sq st _ </proc/stat
  C_TOTAL=$((u + n + s + i + w + q + sq + st)); C_BUSY=$((C_TOTAL - i - w))
}
sample_cpu() {
  read_cpu
  if [ -n "$c_prev_total" ] && [ "$C_TOTAL" -gt "$c_prev_total" ]; then
    pct2 $((C_BUSY - c_prev_busy)) $((C_TOTAL - c_prev_total))
    read -r l1 l5 l15 _ </proc/loadavg
    printf '%s,%s,%s,%s,%s\n' "$TS" "$P" "$l1" "$l5" "$l15" >>"$f_cpu"
  fi
  c_prev_total=$C_TOTAL; c_prev_busy=$C_BUSY
}

sample_memory() {
  mt=0; ma=0; swt=0; swf=0
  while read -r key val _; do
    case $key in
      MemTotal:) mt=$val ;; MemAvailable:) ma=$val ;; SwapTotal:) swt=$val ;; SwapFree:) swf=$val ;;
    esac
  done </proc/meminfo
  [ "$mt" -gt 0 ] || { printf 'monitor-collector: memory sample failed\n' >&2; return; }
  used=$((mt - ma)); pct2 "$used" "$mt"
  printf '%s,%s,%s,%s,%s,%s,%s\n' "$TS" "$mt" "$ma" "$used" "$P" "$swt" "$swf" >>"$f_memory"
}

sample_disk() {
  # shellcheck disable=SC2046
  set -- $(df -P -k / 2>/dev/null) || true
  if [ "$#" -lt 13 ] || ! is_int "$9" || ! is_int "${10}" || ! is_int "${11}"; then
    printf 'monitor-collector: disk sample failed (df -P -k /)\n' >&2; return
  fi
  tot=$(($9 * 1024)); used=$((${10} * 1024)); free=$((${11} * 1024))
  if [ $((used + free)) -gt 0 ]; then pct2 "$used" $((used + free)); else P=0.00; fi
  printf '%s,/,%s,%s,%s,%s\n' "$TS" "$tot" "$used" "$free" "$P" >>"$f_disk"
}

n_prev_ms=; n_prev_rx=0; n_prev_tx=0; n_prev_rp=0; n_prev_tp=0
sample_network() {
  rx=0; tx=0; rp=0; tp=0
  while IFS= read -r line; do
    case $line in *:*) ;; *) continue ;; esac
    name=${line%%:*}; name=${name##* }
    [ "$name" = lo ] && continue
    # shellcheck disable=SC2086
    set -- ${line#*:}
    rx=$((rx + $1)); rp=$((rp + $2)); tx=$((tx + $9)); tp=$((tp + ${10}))
  done </proc/net/dev
  if [ -n "$n_prev_ms" ] && [ "$NOW" -gt "$n_prev_ms" ]; then
    dt=$((NOW - n_prev_ms))
    pct2 $(((rx - n_prev_rx) * 10)) "$dt"; r1=$P
    pct2 $(((tx - n_prev_tx) * 10)) "$dt"; r2=$P
    pct2 $(((rp - n_prev_rp) * 10)) "$dt"; r3=$P
    pct2 $(((tp - n_prev_tp) * 10)) "$dt"; r4=$P
    printf '%s,%s,%s,%s,%s,%s,%s\n' "$TS" "$rx" "$tx" "$r1" "$r2" "$r3" "$r4" >>"$f_network"
  fi
  n_prev_ms=$NOW; n_prev_rx=$rx; n_prev_tx=$tx; n_prev_rp=$rp; n_prev_tp=$tp
}

now_ms
far=$((NOW + 100000000000000))  # an inactive scope is never due
d_gpu=$far; d_cpu=$far; d_memory=$far; d_disk=$far; d_network=$far
[ "$on_gpu" -eq 1 ] && d_gpu=$NOW
[ "$on_cpu" -eq 1 ] && d_cpu=$NOW
[ "$on_memory" -eq 1 ] && d_memory=$NOW
[ "$on_disk" -eq 1 ] && d_disk=$NOW
[ "$on_network" -eq 1 ] && d_network=$NOW
ticks=0
while :; do
  if [ -n "$parent_pid" ] && ! kill -0 "$parent_pid" 2>/dev/null; then cleanup; fi
  now_ms; fmt_ts "$NOW"
  # a due scope samples, then its next due time moves on by its interval (never into the past)
  [ "$on_gpu" -eq 1 ] && [ "$NOW" -ge "$d_gpu" ] && { sample_gpu; d_gpu=$((d_gpu + iv_gpu)); [ "$d_gpu" -gt "$NOW" ] || d_gpu=$((NOW + iv_gpu)); }
  [ "$on_cpu" -eq 1 ] && [ "$NOW" -ge "$d_cpu" ] && { sample_cpu; d_cpu=$((d_cpu + iv_cpu)); [ "$d_cpu" -gt "$NOW" ] || d_cpu=$((NOW + iv_cpu)); }
  [ "$on_memory" -eq 1 ] && [ "$NOW" -ge "$d_memory" ] && { sample_memory; d_memory=$((d_memory + iv_memory)); [ "$d_memory" -gt "$NOW" ] || d_memory=$((NOW + iv_memory)); }
  [ "$on_disk" -eq 1 ] && [ "$NOW" -ge "$d_disk" ] && { sample_disk; d_disk=$((d_disk + iv_disk)); [ "$d_disk" -gt "$NOW" ] || d_disk=$((NOW + iv_disk)); }
  [ "$on_network" -eq 1 ] && [ "$NOW" -ge "$d_network" ] && { sample_network; d_network=$((d_network + iv_network)); [ "$d_network" -gt "$NOW" ] || d_network=$((NOW + iv_network)); }
  ticks=$((ticks + 1))
  [ "$max_ticks" -gt 0 ] && [ "$ticks" -ge "$max_ticks" ] && cleanup
  # sleep until the next due scope (in the background, so a TERM is handled at once)
  next=$((NOW + interval_ms))
  for d in $d_gpu $d_cpu $d_memory $d_disk $d_network; do [ "$d" -lt "$next" ] && next=$d; done
  now_ms; wait_ms=$((next - NOW))
  [ "$wait_ms" -ge 10 ] || wait_ms=10
  fmt_ts "$wait_ms"
  sleep "$TS" &
  sp=$!
  wait "$sp" 2>/dev/null
done
