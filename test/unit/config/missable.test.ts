/** `--missable-tasks` stripping (spec config.md §4.6) and `required_by` folding (§4.7). */
import { describe, expect, it } from 'vitest';
import { foldRequiredBy, globToRegExp, stripMissableTasks } from '../../../src/config/missable.js';

type Obj = Record<string, unknown>;

const recipe = (tasks: Obj[]): Obj => ({ workflow: { name: 'w', tasks } });
const tasksOf = (doc: Obj) => (doc.workflow as Obj).tasks as Obj[];
const matches = (pattern: string, names: string[]) => names.filter((n) => globToRegExp(pattern).test(n));

describe('glob patterns (Python fnmatch)', () => {
  const names = [
    'agg_server',
    'agg_client',
    'prefill_server',
    'decode_server',
    'server',
    'server1',
    'server2',
    'serverX',
    'a.b',
    'axb',
    'x]y',
    'x!y',
    'x^y',
  ];

  it('a plain name matches only itself; regex characters are literal', () => {
    expect(matches('server', names)).toEqual(['server']);
    expect(matches('a.b', names)).toEqual(['a.b']);
  });

  it('* matches any run of characters, ? exactly one', () => {
    expect(matches('agg_*', names)).toEqual(['agg_server', 'agg_client']);
    expect(matches('*_server', names)).toEqual(['agg_server', 'prefill_server', 'decode_server']);
    expect(matches('server?', names)).toEqual(['server1', 'server2', 'serverX']);
    expect(matches('*', names)).toEqual(names);
  });

  it('[…] classes and ranges, [!…] negation', () => {
    expect(matches('server[12]', names)).toEqual(['server1', 'server2']);
    expect(matches('server[0-9]', names)).toEqual(['server1', 'server2']);
    expect(matches('server[!0-9]', names)).toEqual(['serverX']);
    expect(matches('[ap]*_server', names)).toEqual(['agg_server', 'prefill_server']);
  });

  it('a ] first in a class is literal, ^ inside a class is literal, an unclosed [ is literal', () => {
    expect(matches('x[]]y', names)).toEqual(['x]y']);
    expect(matches('x[!]]y', names)).toEqual(['x!y', 'x^y']);
    expect(matches('x[^]y', names)).toEqual(['x^y']);
    expect(matches('x[y', ['x[y', 'xy'])).toEqual(['x[y']);
  });
});

describe('stripMissableTasks', () => {
  const doc = () =>
    recipe([
      { name: 'server', script: ['s'] },
      { name: 'bench', script: ['b'], depends_on: ['server', 'agg_server', 'router'] },
      { name: 'client', script: ['c'], depends_on: ['agg_server'] },
      {
        name: 'watcher',
        script: ['w'],
        probes: {
          readiness: { log_watch: { logger: 'prefill_server', regex_pattern: 'READY' } },
          failure: [
            { log_watch: { logger: 'server', regex_pattern: 'ERR' } },
            { log_watch: { logger: 'decode_server', regex_pattern: 'ERR' } },
          ],
        },
      },
    ]);

  it('removes only references to absent tasks that match a pattern, and reports each one', () => {
    const d = doc();
    const r = stripMissableTasks(d, ['agg_*', '*_server', 'server']);
    const [server, bench, client, watcher] = tasksOf(d);
    expect(server).toEqual({ name: 'server', script: ['s'] });
    // `server` is present: kept although it matches; `router` matches no pattern: kept (validation reports it)
    expect(bench.depends_on).toEqual(['server', 'router']);
    // an emptied depends_on is removed entirely
    expect('depends_on' in client).toBe(false);
    // the logger key is removed, so the probe watches the task's own log
    expect(watcher.probes).toEqual({
      readiness: { log_watch: { regex_pattern: 'READY' } },
      failure: [
        { log_watch: { logger: 'server', regex_pattern: 'ERR' } },
        { log_watch: { regex_pattern: 'ERR' } },
      ],
    });
    expect(r.removed).toEqual([
      'bench.depends_on: agg_server',
      'client.depends_on: agg_server',
      'watcher.probes.readiness.log_watch.logger: prefill_server',
      'watcher.probes.failure.log_watch.logger: decode_server',
    ]);
    expect(r.unused).toEqual([]);
  });

  it('reports patterns that matched neither an absent reference nor a present task', () => {
    const d = doc();
    const r = stripMissableTasks(d, ['benchmark_*', 'agg_server', 'serv?r']);
    expect(r.unused).toEqual(['benchmark_*']);
    expect(r.removed).toEqual(['bench.depends_on: agg_server', 'client.depends_on: agg_server']);
  });

  it('changes nothing without matching patterns', () => {
    const d = doc();
    const before = JSON.stringify(d);
    expect(stripMissableTasks(d, ['nothing'])).toEqual({ removed: [], unused: ['nothing'] });
    expect(JSON.stringify(d)).toBe(before);
  });

  it('a pattern matching an absent required_by target removes it (reported) and counts as used', () => {
    const d = recipe([
      { name: 'a', script: ['x'], required_by: ['bench_x', 'c'] },
      { name: 'c', script: ['y'] },
    ]);
    const r = stripMissableTasks(d, ['bench_*', 'c']);
    expect(r.unused).toEqual([]);
    expect(r.removed).toEqual(['a.required_by: bench_x']);
    expect(tasksOf(d)[0].required_by).toEqual(['c']); // present tasks stay, whatever matches them
  });
});

describe('foldRequiredBy', () => {
  it('A.required_by: [B] adds A to B.depends_on, after what B already lists', () => {
    const d = recipe([
      { name: 'server', script: ['s'], required_by: ['bench', 'client'] },
      { name: 'db', script: ['d'], required_by: ['bench'] },
      { name: 'bench', script: ['b'], depends_on: ['warmup'] },
      { name: 'warmup', script: ['w'] },
      { name: 'client', script: ['c'] },
    ]);
    foldRequiredBy(d);
    const byName = Object.fromEntries(tasksOf(d).map((t) => [t.name, t]));
    expect(byName.bench.depends_on).toEqual(['warmup', 'server', 'db']);
    expect(byName.client.depends_on).toEqual(['server']);
    expect(byName.server.depends_on).toBeUndefined();
  });

  it('both spellings of the same edge collapse into one', () => {
    const d = recipe([
      { name: 'server', script: ['s'], required_by: ['bench', 'bench'] },
      { name: 'bench', script: ['b'], depends_on: ['server'] },
    ]);
    foldRequiredBy(d);
    expect(tasksOf(d)[1].depends_on).toEqual(['server']);
  });

  it('folding leaves an absent target alone (validation reports it)', () => {
    const d = recipe([
      { name: 'server', script: ['s'], required_by: ['benchmark_infmax', 'bench'] },
      { name: 'bench', script: ['b'] },
    ]);
    expect(() => foldRequiredBy(d)).not.toThrow();
    expect(tasksOf(d)[1].depends_on).toEqual(['server']);
    expect(tasksOf(d)).toHaveLength(2);
  });

  it('ignores documents without tasks', () => {
    const d: Obj = { workflow: { name: 'w' } };
    foldRequiredBy(d);
    expect(d).toEqual({ workflow: { name: 'w' } });
  });
});
