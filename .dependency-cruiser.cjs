/**
 * The intended flow of src/ (docs/architecture.md), checked in CI by `npm run lint:deps`:
 *
 *   util, visualize ─► probes ─► config ─► events ─► operators ─► plan ─► gpu, outputs, preflight,
 *     uploads ─► monitor, artifacts ─► backends ─► runtime ─► reporters, report, samples, skills,
 *     remote ─► results ─► cli ─► sea
 *
 * Probes sit below config: a probe kind owns its schema, its planning and its check
 * (docs/adding-a-probe.md), so config builds `task.probes` from the probe registry and the plan
 * plans through it; the kinds get config's schema helpers and the plan's expression resolution
 * handed in (src/probes/kind.ts) instead of importing them.
 *
 * A folder imports only folders to its left (and itself); within a layer, folders do not import
 * each other. So there is no cycle between folders, and `no-circular` forbids cycles between files.
 * The runtime imports no concrete backend (only the contract, src/backends/backend.ts) and no
 * reporter; backend-type checks live in src/backends only (the rest reads capabilities).
 */
const layers = [
  ['util', 'visualize'],
  ['probes'],
  ['config'],
  ['events'],
  ['operators'],
  ['plan'],
  ['gpu', 'outputs', 'preflight', 'uploads'],
  ['monitor', 'artifacts'],
  ['backends'],
  ['runtime'],
  ['reporters', 'report', 'samples', 'skills', 'remote'],
  ['results'],
  ['cli'],
  ['sea'],
];

const folder = (names) => `^src/(${names.join('|')})/`;
const layerRules = layers.flatMap((group, i) => {
  const above = layers.slice(i + 1).flat();
  const rules = [];
  if (above.length)
    rules.push({
      name: `layer-${group.join('-')}`,
      comment: `${group.join(', ')} may not import ${above.join(', ')} (the flow goes the other way)`,
      severity: 'error',
      from: { path: folder(group) },
      to: { path: folder(above) },
    });
  for (const g of group)
    for (const other of group.filter((x) => x !== g))
      rules.push({
        name: `same-layer-${g}-${other}`,
        comment: `${g} and ${other} are on the same layer: neither imports the other`,
        severity: 'error',
        from: { path: folder([g]) },
        to: { path: folder([other]) },
      });
  return rules;
});

module.exports = {
  forbidden: [
    {
      name: 'no-circular',
      comment: 'no import cycles between files',
      severity: 'error',
      from: {},
      to: { circular: true },
    },
    {
      name: 'runtime-no-concrete-backend',
      comment: 'the runtime talks to backends through the contract only; the CLI picks them (registry)',
      severity: 'error',
      from: { path: '^src/runtime/' },
      to: { path: '^src/backends/', pathNot: '^src/backends/backend\\.ts$' },
    },
    {
      name: 'backend-folders-independent',
      comment: 'a backend folder imports only the shared contract files, never another backend',
      severity: 'error',
      from: { path: '^src/backends/([^/]+)/' },
      to: { path: '^src/backends/([^/]+)/', pathNot: '^src/backends/$1/' },
    },
    {
      name: 'cli-no-backend-kind',
      comment:
        'the CLI reaches a backend type only through the registry (its flags, its batch, its recovery): never a backend folder, an operator or a probe kind module',
      severity: 'error',
      from: { path: '^src/cli/' },
      to: {
        path: ['^src/backends/[^/]+/', '^src/operators/', '^src/probes/kinds/'],
        pathNot: '^src/operators/(index|types)\\.ts$',
      },
    },
    {
      name: 'plan-no-runtime-concerns',
      comment:
        'the plan is pure data built from the recipe: it starts, reads, writes and calls nothing (runtime, backends, outputs, processes, files, sockets); path and crypto (hashes for names) are all it needs of Node',
      severity: 'error',
      from: { path: '^src/plan/' },
      to: {
        path: [
          '^src/(runtime|backends|outputs|uploads|artifacts|gpu|monitor|preflight|remote)/',
          '^(node:)?(child_process|fs|fs/promises|net|http|https|http2|dgram|dns|tls|worker_threads|cluster|os|readline|stream|timers|timers/promises|perf_hooks|process)$',
        ],
      },
    },
    {
      name: 'folder-in-layer-table',
      comment: 'every folder of src/ has its place in the layer table above (add a new one there)',
      severity: 'error',
      from: { path: '^src/[^/]+/', pathNot: folder(layers.flat()) },
      to: {},
    },
    ...layerRules,
  ],
  options: {
    doNotFollow: { path: 'node_modules' },
    tsPreCompilationDeps: true,
    tsConfig: { fileName: 'tsconfig.json' },
    enhancedResolveOptions: { extensions: ['.ts', '.js'] },
  },
};
