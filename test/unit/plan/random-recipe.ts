/**
 * Random recipes for plan properties (fast-check): variables (some swept, with values that need
 * sanitising in replica and folder names), tasks with replica counts or sweeps, GPU requests on a
 * local backend of two synthetic nodes, dependencies on earlier tasks.
 */
import fc from 'fast-check';

const yamlString = (s: string): string => JSON.stringify(s);

const sweepValue = fc.oneof(
  fc.integer({ min: -50, max: 5000 }),
  fc.constantFrom('fast', 'slow', 'a.b', 'x-y', 'with space', 'ünï', 'p/q', '名前', 'v1.2-rc'),
);

const taskShape = fc.record({
  replicas: fc.oneof(
    fc.constant(null),
    fc.integer({ min: 1, max: 12 }).map((n) => ({ count: n })),
    fc.constant({ sweep: true }),
  ),
  policy: fc.constantFrom('parallel', 'sequential'),
  gpus: fc.constantFrom(0, 0, 1, 2),
  dependsOnPrevious: fc.boolean(),
  longName: fc.boolean(),
});

export const randomRecipe = fc
  .record({
    workflow: fc.constantFrom('wf', 'my-flow', 'flow.v2', 'ünï_flow'),
    plain: fc.string({ maxLength: 12 }).filter((s) => !s.includes('\0')),
    domain: fc.uniqueArray(sweepValue, { minLength: 1, maxLength: 4, selector: (v) => String(v) }),
    tasks: fc.array(taskShape, { minLength: 1, maxLength: 4 }),
  })
  .map(({ workflow, plain, domain, tasks }) => {
    let y = 'version: "0.1"\nvariables:\n';
    y += `  PLAIN:\n    value: ${yamlString(plain)}\n`;
    y += `  SWEPT:\n    value: ${yamlString(String(domain[0]))}\n`;
    y += `    domain: [${domain.map((v) => yamlString(String(v))).join(', ')}]\n`;
    y +=
      'backends:\n  - name: box\n    type: local\n    default: true\n    nodes: 2\n    gpus_per_node: 64\n';
    y += `workflow:\n  name: ${yamlString(workflow)}\n  tasks:\n`;
    tasks.forEach((t, i) => {
      const name = t.longName ? `task_${i}_${'long'.repeat(30)}` : `t${i}`;
      y += `    - name: ${name}\n`;
      if (t.replicas && 'count' in t.replicas)
        y += `      replicas:\n        count: ${t.replicas.count}\n        policy: ${t.policy}\n`;
      if (t.replicas && 'sweep' in t.replicas)
        y += `      replicas:\n        variables: [SWEPT]\n        policy: ${t.policy}\n`;
      if (t.gpus) y += `      resources:\n        gpus:\n          count: ${t.gpus}\n`;
      if (t.dependsOnPrevious && i > 0)
        y += `      depends_on: [${tasks[i - 1].longName ? `task_${i - 1}_${'long'.repeat(30)}` : `t${i - 1}`}]\n`;
      y += '      script:\n        - echo "$SFLOW_TASK_NAME $SWEPT"\n';
    });
    return y;
  });
