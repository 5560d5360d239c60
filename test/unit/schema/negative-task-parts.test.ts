/** One focused rejection per rule: replicas, retries, probes, result/outputs, monitor. */
import { describe, expect, it } from 'vitest';
import { findIssue, recipe, task, type Expected } from './helpers.js';

type Case = [string, unknown, Expected];
const T = ['workflow', 'tasks', 0];
const one = (extra: Record<string, unknown>) => recipe({}, [task(extra)]);
const lw = (log_watch: Record<string, unknown>) => one({ probes: { readiness: { log_watch } } });

const CASES: Case[] = [
  // replicas and retries
  [
    'replica count 0',
    one({ replicas: { count: 0 } }),
    { path: [...T, 'replicas', 'count'], message: 'must be >= 1, got 0' },
  ],
  [
    'replica count boolean',
    one({ replicas: { count: true } }),
    {
      path: [...T, 'replicas', 'count'],
      message: 'expected an integer or a ${{ }} expression, got boolean true',
    },
  ],
  [
    'replica policy',
    one({ replicas: { count: 2, policy: 'random' } }),
    {
      path: [...T, 'replicas', 'policy'],
      message: "expected one of 'parallel', 'sequential' or a ${{ }} expression, got string 'random'",
    },
  ],
  [
    'fractional backoff',
    one({ retries: { count: 1, interval: 1, backoff: 1.5 } }),
    {
      path: [...T, 'retries', 'backoff'],
      message: 'expected an integer or a ${{ }} expression, got number 1.5',
    },
  ],
  [
    'retries without interval',
    one({ retries: { count: 1 } }),
    { path: [...T, 'retries', 'interval'], message: "missing required key 'interval'" },
  ],
  [
    'negative retry count',
    one({ retries: { count: -1, interval: 0 } }),
    { path: [...T, 'retries', 'count'], message: 'must be >= 0, got -1' },
  ],
  // probes
  [
    'probe without a type',
    one({ probes: { readiness: { interval: 5 } } }),
    { path: [...T, 'probes', 'readiness'], message: 'Exactly one probe type must be specified, found none' },
  ],
  [
    'probe with two types',
    one({ probes: { readiness: { tcp_port: { port: 80 }, http_get: { url: 'http://x' } } } }),
    {
      path: [...T, 'probes', 'readiness'],
      message: 'Exactly one probe type must be specified, found tcp_port and http_get',
    },
  ],
  [
    'on_error on a readiness probe (it applies to failure probes only)',
    one({ probes: { readiness: { tcp_port: { port: 80 }, on_error: 'warn' } } }),
    {
      path: [...T, 'probes', 'readiness', 'on_error'],
      message: 'on_error applies to failure probes only',
    },
  ],
  [
    'on_error of a failure probe that is neither fail nor warn',
    one({ probes: { failure: { log_watch: { regex_pattern: 'x' }, on_error: 'ignore' } } }),
    {
      path: [...T, 'probes', 'failure', 'on_error'],
      message: "expected one of 'fail', 'warn', got string 'ignore'",
    },
  ],
  [
    'log_watch with both patterns',
    lw({ match_pattern: 'a', regex_pattern: 'b' }),
    {
      path: [...T, 'probes', 'readiness', 'log_watch', 'match_pattern'],
      message: "Only one of 'regex_pattern' or 'match_pattern' may be set, not both",
    },
  ],
  [
    'log_watch with no pattern',
    lw({ match_count: 2 }),
    {
      path: [...T, 'probes', 'readiness', 'log_watch'],
      message: "Either 'regex_pattern' or 'match_pattern' must be set",
    },
  ],
  [
    'tcp port not a number',
    one({ probes: { readiness: { tcp_port: { port: 'http' } } } }),
    {
      path: [...T, 'probes', 'readiness', 'tcp_port', 'port'],
      message: "expected an integer or a ${{ }} expression, got string 'http'",
    },
  ],
  [
    'http probe URL scheme',
    one({ probes: { readiness: { http_get: { url: 'ftp://x' } } } }),
    {
      path: [...T, 'probes', 'readiness', 'http_get', 'url'],
      message: "http probe URL must start with http:// or https://, got 'ftp://x'",
    },
  ],
  [
    'probe timing typo',
    one({ probes: { readiness: { tcp_port: { port: 1 }, intervall: 2 } } }),
    {
      path: [...T, 'probes', 'readiness', 'intervall'],
      message: "unknown key 'intervall' in probe",
      hint: "did you mean 'interval'?",
    },
  ],
  [
    'empty readiness list',
    one({ probes: { readiness: [] } }),
    { path: [...T, 'probes', 'readiness'], message: 'readiness probe list cannot be empty' },
  ],
  [
    'threshold 0',
    one({ probes: { failure: { log_watch: { regex_pattern: 'x' }, failure_threshold: 0 } } }),
    { path: [...T, 'probes', 'failure', 'failure_threshold'], message: 'must be >= 1, got 0' },
  ],
  // result and outputs
  [
    'result file escaping',
    one({ result: { file: '../r.json' } }),
    { path: [...T, 'result', 'file'], message: "result.file must not contain '..', got '../r.json'" },
  ],
  [
    'result file absolute',
    one({ result: { file: '/tmp/r.json' } }),
    {
      path: [...T, 'result', 'file'],
      message: "result.file must be relative to the task output directory, got '/tmp/r.json'",
    },
  ],
  [
    'result file not json',
    one({ result: { file: 'r.txt' } }),
    { path: [...T, 'result', 'file'], message: "result.file must end in '.json', got 'r.txt'" },
  ],
  [
    'result patterns and file',
    one({ result: { patterns: [{ name: 'x', regex: 'y' }], file: 'r.json' } }),
    { path: [...T, 'result', 'file'], message: 'result.patterns and result.file are mutually exclusive' },
  ],
  [
    'result simple value not a regex',
    one({ result: { ttft: 5 } }),
    { path: [...T, 'result', 'ttft'], message: "result entry 'ttft' must be a regex string, got number 5" },
  ],
  [
    'result aggregate',
    one({ result: { patterns: [{ name: 'x', regex: 'y', aggregate: 'median' }] } }),
    {
      path: [...T, 'result', 'patterns', 0, 'aggregate'],
      message: /^expected one of 'first', 'last', .*got string 'median'$/,
    },
  ],
  [
    'duplicate result names',
    one({
      result: {
        patterns: [
          { name: 'x', regex: 'a' },
          { name: 'x', regex: 'b' },
        ],
      },
    }),
    { path: [...T, 'result', 'patterns', 1, 'name'], message: "duplicate result pattern name 'x'" },
  ],
  [
    'outputs entry without pattern',
    one({ outputs: [{ source: 'stdout' }] }),
    { path: [...T, 'outputs', 0, 'pattern'], message: "missing required key 'pattern'" },
  ],
  // monitor
  [
    'monitor interval too small',
    one({ monitor: { interval: 50 } }),
    { path: [...T, 'monitor', 'interval'], message: 'must be >= 100, got 50' },
  ],
  [
    'monitor expression',
    one({ monitor: { interval: '${{ variables.I }}' } }),
    { path: [...T, 'monitor', 'interval'], message: /expressions are not resolved here/ },
  ],
  [
    'monitor scope typo',
    one({ monitor: { scopes: { gpus: {} } } }),
    {
      path: [...T, 'monitor', 'scopes', 'gpus'],
      message: "unknown key 'gpus' in monitor.scopes",
      hint: "did you mean 'gpu'?",
    },
  ],
  [
    'gpu fields must start with index',
    one({ monitor: { scopes: { gpu: { fields: ['power.draw', 'index'] } } } }),
    {
      path: [...T, 'monitor', 'scopes', 'gpu', 'fields'],
      message: "monitor.scopes.gpu.fields must start with 'index', got 'power.draw'",
    },
  ],
  [
    'report format',
    one({ monitor: { report: { format: ['pdf'] } } }),
    {
      path: [...T, 'monitor', 'report', 'format', 0],
      message: "expected one of 'csv', 'svg', 'png', got string 'pdf'",
    },
  ],
  [
    'used_by_tasks unknown',
    one({ monitor: { resources: { used_by_tasks: ['ghost'] } } }),
    {
      path: [...T, 'monitor', 'resources', 'used_by_tasks', 0],
      message: "Task 'a' monitor.resources.used_by_tasks refers to unknown task 'ghost'",
    },
  ],
  [
    'window with report off',
    one({ monitor: { window: { start: 'A', end: 'B' }, report: { enabled: false } } }),
    { path: [...T, 'monitor', 'window'], message: 'monitor.window requires report.enabled: true' },
  ],
  [
    'window regex invalid',
    one({ monitor: { window: { start: 're:(', end: 'B' } } }),
    { path: [...T, 'monitor', 'window', 'start'], message: /^invalid monitor.window regex 're:\('/ },
  ],
];

describe('rejections in task parts', () => {
  it.each(CASES)('%s', (_name, doc, expected) => {
    expect(findIssue(doc, expected)).toBeTruthy();
  });
});
