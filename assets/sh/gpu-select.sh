# sflow in-step GPU selection (POSIX sh; sourced at the start of every Slurm step of a task with a
# GPU slice, before the task's own script). slurmstepd rewrites CUDA_VISIBLE_DEVICES on GRES
# partitions and containers renumber devices from 0, so the planned host indices cannot be trusted
# inside the step. This prelude:
#   1. works out this node's position in the task (SFLOW_TASK_NODE_INDEX) and its name
#      (SFLOW_TASK_NODE_NAME, from SLURMD_NODENAME);
#   2. lists the devices the step can see (nvidia-smi index, uuid);
#   3. finds the cards the plan chose by the UUIDs the driver's topology probe recorded
#      (SFLOW_GPU_UUIDS_BY_NODE="node=uuid0,uuid1,…;node=…": each node's GPUs in index order), or, without UUIDs, by index
#      arithmetic, and re-exports CUDA_VISIBLE_DEVICES as the step-local indices of those cards;
#   4. writes the audit record <task dir>/sflow_gpus.log (sflow_gpus.<node>.log on multi-node tasks);
#   5. exits 97 when the plan cannot be honoured (a planned card not visible, fewer GPUs than
#      planned, a planned slot out of range), with the reason on stderr and in the audit record.
# Inputs: SFLOW_GPU_PLAN (planned host indices, comma separated), SFLOW_NODE_GPU_COUNT (GPUs per
# node, optional), SFLOW_GPU_UUIDS_BY_NODE (optional), SFLOW_TASK_OUTPUT_DIR,
# SFLOW_TASK_NUM_NODES, SFLOW_TASK_ASSIGNED_NODE_NAMES, SLURMD_NODENAME, SLURM_NODEID,
# SLURM_LOCALID, CUDA_VISIBLE_DEVICES. Everything it defines starts with _sflow_ and is unset again.

_sflow_node=${SLURMD_NODENAME:-$(hostname 2>/dev/null | cut -d. -f1)}
_sflow_i=0
SFLOW_TASK_NODE_INDEX=${SLURM_NODEID:-0}
for _sflow_n in $(printf '%s' "${SFLOW_TASK_ASSIGNED_NODE_NAMES:-}" | tr ',' ' '); do
  [ "$_sflow_n" = "$_sflow_node" ] && SFLOW_TASK_NODE_INDEX=$_sflow_i
  _sflow_i=$((_sflow_i + 1))
done
export SFLOW_TASK_NODE_INDEX
[ -n "${SLURMD_NODENAME:-}" ] && SFLOW_TASK_NODE_NAME=$SLURMD_NODENAME && export SFLOW_TASK_NODE_NAME

_sflow_plan=${SFLOW_GPU_PLAN:-}
_sflow_inherited=${CUDA_VISIBLE_DEVICES-<unset>}
_sflow_uuids=''
for _sflow_e in $(printf '%s' "${SFLOW_GPU_UUIDS_BY_NODE:-}" | tr ';' ' '); do
  [ "${_sflow_e%%=*}" = "$_sflow_node" ] && _sflow_uuids=${_sflow_e#*=}
done
_sflow_visible=$(nvidia-smi --query-gpu=index,uuid --format=csv,noheader 2>/dev/null | tr -d ' ')
_sflow_nvis=$(printf '%s\n' "$_sflow_visible" | grep -c ,)
_sflow_mode=''
_sflow_sel=''
_sflow_why=''
_sflow_planned=''

# the n-th (0-based) item of a comma list
_sflow_item() { printf '%s' "$1" | tr ',' '\n' | sed -n "$(($2 + 1))p"; }
_sflow_count() { printf '%s' "$1" | tr ',' '\n' | grep -c .; }
_sflow_add() { if [ -z "$_sflow_sel" ]; then _sflow_sel=$1; else _sflow_sel="$_sflow_sel,$1"; fi; }

_sflow_nplan=$(_sflow_count "$_sflow_plan")
case $_sflow_plan in
  '' | *[!0-9,]* | ,* | *, | *,,*) _sflow_why="SFLOW_GPU_PLAN '$_sflow_plan' is not a comma list of GPU indices" ;;
esac

if [ -z "$_sflow_why" ] && [ -n "$_sflow_uuids" ] && [ "$_sflow_nvis" -gt 0 ]; then
  _sflow_mode='uuid'
  _sflow_nuuid=$(_sflow_count "$_sflow_uuids")
  for _sflow_p in $(printf '%s' "$_sflow_plan" | tr ',' ' '); do
    if [ "$_sflow_p" -ge "$_sflow_nuuid" ]; then
      _sflow_why="planned GPU $_sflow_p is out of range: node $_sflow_node has $_sflow_nuuid GPU(s) (indices 0-$((_sflow_nuuid - 1)))"
      break
    fi
    _sflow_u=$(_sflow_item "$_sflow_uuids" "$_sflow_p")
    _sflow_l=$(printf '%s\n' "$_sflow_visible" | grep ",$_sflow_u\$" | head -n 1 | cut -d, -f1)
    if [ -z "$_sflow_l" ]; then
      _sflow_why="planned GPU $_sflow_p ($_sflow_u) is not visible in this step on $_sflow_node: the step sees $_sflow_nvis GPU(s)"
      break
    fi
    _sflow_add "$_sflow_l"
    _sflow_planned="${_sflow_planned:+$_sflow_planned,}$_sflow_u"
  done
elif [ -z "$_sflow_why" ] && [ "$_sflow_inherited" != '<unset>' ] && [ -n "$_sflow_inherited" ] &&
  [ "$_sflow_inherited" != "$_sflow_plan" ]; then
  case $_sflow_inherited in
    *[!0-9,]* | ,* | *, | *,,*)
      # not a device list sflow can reason about (a workflow variable of that name?): keep it
      _sflow_mode='kept (inherited CUDA_VISIBLE_DEVICES is not a plain index list)'
      _sflow_sel=$_sflow_inherited ;;
    *)
      # Slurm, not sflow, chose the devices: index arithmetic within what the step holds
      _sflow_mode='index (devices chosen by Slurm; no GPU UUIDs to match)'
      _sflow_held=$(_sflow_count "$_sflow_inherited")
      _sflow_total=${SFLOW_NODE_GPU_COUNT:-0}
      if [ "$_sflow_held" -lt "$_sflow_nplan" ]; then
        _sflow_why="the step holds $_sflow_held GPU(s) ($_sflow_inherited) but the plan needs $_sflow_nplan ($_sflow_plan)"
      elif [ "$_sflow_total" -gt 0 ] && [ "$_sflow_held" -ge "$_sflow_total" ]; then
        for _sflow_p in $(printf '%s' "$_sflow_plan" | tr ',' ' '); do
          if [ "$_sflow_p" -ge "$_sflow_held" ]; then
            _sflow_why="planned GPU $_sflow_p is out of range: the step holds $_sflow_held GPU(s)"
            break
          fi
          _sflow_add "$(_sflow_item "$_sflow_inherited" "$_sflow_p")"
        done
      else
        _sflow_i=0
        while [ "$_sflow_i" -lt "$_sflow_nplan" ]; do
          _sflow_add "$(_sflow_item "$_sflow_inherited" "$_sflow_i")"
          _sflow_i=$((_sflow_i + 1))
        done
      fi ;;
  esac
elif [ -z "$_sflow_why" ]; then
  # the step sees the node's devices numbered as on the host: the plan's indices are the answer
  _sflow_mode='index (host numbering; no GPU UUIDs to match)'
  _sflow_total=${SFLOW_NODE_GPU_COUNT:-0}
  [ "$_sflow_nvis" -gt 0 ] && _sflow_total=$_sflow_nvis
  for _sflow_p in $(printf '%s' "$_sflow_plan" | tr ',' ' '); do
    if [ "$_sflow_total" -gt 0 ] && [ "$_sflow_p" -ge "$_sflow_total" ]; then
      _sflow_why="planned GPU $_sflow_p is out of range: node $_sflow_node has $_sflow_total GPU(s) (indices 0-$((_sflow_total - 1)))"
      break
    fi
    _sflow_add "$_sflow_p"
  done
fi

_sflow_log=${SFLOW_TASK_OUTPUT_DIR:-.}/sflow_gpus.log
[ "${SFLOW_TASK_NUM_NODES:-1}" -gt 1 ] 2>/dev/null && _sflow_log=${SFLOW_TASK_OUTPUT_DIR:-.}/sflow_gpus.$_sflow_node.log
if [ "${SLURM_LOCALID:-0}" = 0 ] || [ -n "$_sflow_why" ]; then
  {
    printf '# sflow in-step GPU selection: what the plan was, what the step saw, what it exported\n'
    printf 'time: %s\n' "$(date -u +%Y-%m-%dT%H:%M:%SZ)"
    printf 'node: %s\n' "$_sflow_node"
    printf 'node_index: %s of %s\n' "$SFLOW_TASK_NODE_INDEX" "${SFLOW_TASK_NUM_NODES:-1}"
    printf 'step: %s.%s rank %s\n' "${SLURM_JOB_ID:-?}" "${SLURM_STEP_ID:-?}" "${SLURM_PROCID:-0}"
    printf 'planned_indices: %s\n' "$_sflow_plan"
    printf 'node_uuids: %s\n' "${_sflow_uuids:-<unknown: no topology probe result for this node>}"
    printf 'planned_uuids: %s\n' "${_sflow_planned:--}"
    printf 'inherited_cuda_visible_devices: %s\n' "$_sflow_inherited"
    printf 'visible: %s\n' "$(printf '%s' "$_sflow_visible" | tr '\n' ' ')"
    printf 'mode: %s\n' "$_sflow_mode"
    if [ -n "$_sflow_why" ]; then
      printf 'result: ABORT exit 97: %s\n' "$_sflow_why"
    else
      printf 'selected: %s\n' "$_sflow_sel"
      printf 'result: OK\n'
    fi
  } >"$_sflow_log" 2>/dev/null
fi

if [ -n "$_sflow_why" ]; then
  printf 'sflow: the GPU plan cannot be honoured on %s: %s (exit 97; see %s)\n' \
    "$_sflow_node" "$_sflow_why" "$_sflow_log" >&2
  exit 97
fi
export CUDA_VISIBLE_DEVICES="$_sflow_sel"
[ -n "$_sflow_planned" ] && export SFLOW_PLANNED_GPU_UUIDS="$_sflow_planned"
unset _sflow_node _sflow_i _sflow_n _sflow_plan _sflow_inherited _sflow_uuids _sflow_e _sflow_visible \
  _sflow_nvis _sflow_mode _sflow_sel _sflow_why _sflow_nplan _sflow_nuuid _sflow_p _sflow_u _sflow_l \
  _sflow_held _sflow_total _sflow_log _sflow_planned
unset -f _sflow_item _sflow_count _sflow_add
true
