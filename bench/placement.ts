/**
 * Placement planner benchmark: 10,000 replica instances on 64 nodes × 8 GPUs.
 *
 * Run (no build, no extra dependency; Node 20):
 *   node --import ./test/fixtures/ts-loader/register.js bench/placement.ts
 *
 * Prints the median of 5 runs (after one warm-up) per scenario. Goal: well under one second each.
 */
import { performance } from 'node:perf_hooks';
import os from 'node:os';
import { allocationMap, planPlacement } from '../src/plan/placement/index.js';
import type { PlacementRequest, TopologyNode } from '../src/plan/placement/index.js';
import { slurmKind } from '../src/backends/slurm/kind.js';

const NODES = 64;
const GPUS = 8;
const REPLICAS = 10_000;
const RUNS = 5;

const topology = {
  cluster: Array.from({ length: NODES }, (_, i): TopologyNode => ({
    name: `node${i}`,
    ip: `10.0.${i >> 8}.${i & 255}`,
    index: i,
    numGpus: GPUS,
  })),
};

function replicas(base: string, n: number, extra: Partial<PlacementRequest>): PlacementRequest[] {
  return Array.from({ length: n }, (_, i) => ({
    task: `${base}_${i}`,
    base,
    backend: 'cluster',
    engine: slurmKind.capabilities,
    replicaIndex: i,
    policy: 'parallel',
    hasReadiness: false,
    dependsOn: [],
    ...extra,
  }));
}

/** 20 stages × 500 one-GPU replicas; each stage waits for the whole previous one and reuses its GPUs */
function stages(): PlacementRequest[] {
  const out: PlacementRequest[] = [];
  let prev: string[] = [];
  for (let s = 0; s < 20; s++) {
    const batch = replicas(`stage${s}`, REPLICAS / 20, { gpus: { count: 1 }, dependsOn: prev });
    out.push(...batch);
    prev = batch.map((r) => r.task);
  }
  return out;
}

/** one sequential task of 10,000 whole-node replicas (a 10,000-long dependency chain) */
function chain(): PlacementRequest[] {
  return replicas('sweep', REPLICAS, { policy: 'sequential', gpus: { count: GPUS } });
}

/** 512 one-GPU servers filling the board, then 9,488 CPU-only clients pinned to node slices */
function mixed(): PlacementRequest[] {
  const servers = replicas('server', NODES * GPUS, {
    hasReadiness: true,
    gpus: { count: 1, indices: undefined },
  });
  const clients = replicas('client', REPLICAS - servers.length, {
    policy: 'sequential',
    nodes: { count: 4, exclude: [0] },
    dependsOn: ['server_0'],
  });
  return [...servers, ...clients];
}

function median(xs: number[]): number {
  const s = [...xs].sort((a, b) => a - b);
  return s[Math.floor(s.length / 2)];
}

function bench(name: string, make: () => PlacementRequest[]): void {
  const requests = make();
  planPlacement(requests, topology); // warm-up
  const times: number[] = [];
  let mapMs = 0;
  for (let r = 0; r < RUNS; r++) {
    const t0 = performance.now();
    const placements = planPlacement(requests, topology);
    times.push(performance.now() - t0);
    const t1 = performance.now();
    allocationMap(placements, topology);
    mapMs = performance.now() - t1;
  }
  const runs = times.map((t) => t.toFixed(1)).join(', ');
  console.log(
    `${name.padEnd(34)} ${requests.length} tasks  median ${median(times).toFixed(1)} ms  (runs: ${runs})  allocation map ${mapMs.toFixed(1)} ms`,
  );
}

console.log(
  `placement planner, ${NODES} nodes × ${GPUS} GPUs, node ${process.version}, ${os.cpus()[0]?.model ?? 'cpu'}`,
);
bench('stages (20 × 500 one-GPU replicas)', stages);
bench('chain (10,000 sequential, 8 GPUs)', chain);
bench('mixed (512 services + clients)', mixed);
