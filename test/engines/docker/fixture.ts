/**
 * What the Docker backend's engine tests share: a test image and backend settings. The fixture's
 * image (busybox, `docker import`ed) has no bash or python3, so the tests build `sflowtest/hostbin`
 * from it (offline: `FROM` a local image, one `ENV PATH`) and bind-mount this machine's `/usr`,
 * `/lib` and `/lib64` read-only: containers run the host's bash and python3. Honest for what is
 * tested (the engine really runs the containers); an image that ships bash needs no mounts.
 */
import { chmodSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import type { BackendContext, TaskHandle } from '../../../src/backends/backend.js';
import { membersOf } from '../../../src/backends/docker/members.js';
import { engineStateOf } from '../../../src/backends/handle-state.js';
import { localHandleState } from '../../../src/backends/local/handle-state.js';
import { readHandleLedger } from '../../../src/events/handle-ledger.js';
import { dockerKind } from '../../../src/backends/docker/kind.js';
import type { BackendConfig, PlannedBackend } from '../../../src/plan/types.js';
import type { Engine } from '../helpers/engines.js';

export const HOSTBIN_IMAGE = `sflowtest/hostbin:${process.pid}`;
export const HOST_MOUNTS = ['/usr:/usr:ro', '/lib:/lib:ro', '/lib64:/lib64:ro'];

/** builds the test image on each endpoint (idempotent per process) */
export async function buildHostbinImage(docker: Engine, hosts: string[]): Promise<void> {
  const base = docker.get('SFLOW_TEST_DOCKER_IMAGE');
  for (const host of hosts) {
    const r = await docker.exec('docker', ['-H', host, 'build', '-q', '-t', HOSTBIN_IMAGE, '-'], {
      input: `FROM ${base}\nENV PATH=/usr/local/bin:/usr/bin:/bin\n`,
      timeout: 120_000,
    });
    if (r.exitCode !== 0) throw new Error(`docker build on ${host}: ${String(r.stderr)}`);
  }
}

export async function removeHostbinImage(docker: Engine, hosts: string[]): Promise<void> {
  for (const host of hosts) await docker.exec('docker', ['-H', host, 'rmi', '-f', HOSTBIN_IMAGE]);
}

export function dockerPlanned(
  config: Partial<BackendConfig<'docker'>> = {},
  name = 'dk',
): PlannedBackend<'docker'> {
  return {
    name,
    type: 'docker',
    isDefault: true,
    placeholder: false,
    nodes: [],
    config: {
      name,
      type: 'docker',
      image: HOSTBIN_IMAGE,
      mounts: HOST_MOUNTS,
      extra_args: ['--network=host'],
      ...config,
    },
    capabilities: dockerKind.capabilities,
  };
}

export function dockerCtx(env: NodeJS.ProcessEnv, over: Partial<BackendContext> = {}): BackendContext {
  return {
    runId: 'conformance',
    runDir: '/nonexistent',
    log: () => undefined,
    options: {},
    env,
    gpuTasks: false,
    ...over,
  };
}

/**
 * A `docker` CLI for SFLOW_DOCKER_CLI that records each argv (one line, arguments separated by
 * TAB) in `argvLog` and drops `--gpus` before handing the rest to the real CLI: the test engines
 * have no NVIDIA runtime, so GPU tasks run and their device request is checked from the log.
 * Returns the wrapper's path (in `dir`).
 */
export function gpuDroppingCli(dir: string, argvLog: string): string {
  const wrapper = join(dir, 'docker-rec');
  writeFileSync(
    wrapper,
    [
      '#!/bin/sh',
      '# test wrapper: record the argv (one line, arguments separated by TAB), drop --gpus, run docker',
      `log=${JSON.stringify(argvLog)}`,
      '{ for a in "$@"; do printf "%s\\t" "$a"; done; printf "\\n"; } >>"$log"',
      'n=$#; i=0; skip=0',
      'for a in "$@"; do',
      '  i=$((i+1))',
      '  if [ "$i" -eq 1 ]; then set --; fi',
      '  if [ "$skip" = 1 ]; then skip=0; continue; fi',
      '  case "$a" in --gpus) skip=1; continue;; --gpus=*) continue;; esac',
      '  set -- "$@" "$a"',
      'done',
      '[ "$n" -eq 0 ] && set --',
      'exec docker "$@"',
      '',
    ].join('\n'),
  );
  chmodSync(wrapper, 0o755);
  return wrapper;
}

/**
 * The container names a run's handle ledger records, read from each handle's engine state through
 * its kind's parse (Docker members; a local `docker_run` task's container), never from the labels.
 */
export function ledgerContainers(runDir: string): string[] {
  return readHandleLedger(join(runDir, 'handles.jsonl')).all.flatMap(handleContainers);
}

export function handleContainers(h: TaskHandle): string[] {
  if (h.type === 'local') {
    const c = engineStateOf(localHandleState, h).container;
    return c ? [c] : [];
  }
  return membersOf(h).map((m) => m.name);
}
