/**
 * Scripts of any size run (issue 9): a 150 KB script, which `bash -c <script>` cannot pass as one
 * argument (E2BIG), runs from a file in the task's folder; the dry-run shows that exact command,
 * and a small script keeps `bash -c`.
 */
import { mkdtempSync, readFileSync, readdirSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { sflow } from '../helpers/cli.js';

const dir = mkdtempSync(join(tmpdir(), 'sflow-bigscript-'));
const env = { SFLOW_RUN_INDEX_DIR: join(dir, 'index') };
afterAll(() => rmSync(dir, { recursive: true, force: true }));

function recipe(lines: number): string {
  const body = Array.from({ length: lines }, (_, i) => `        - ": line ${i} ${'x'.repeat(10)}"`).join(
    '\n',
  );
  return `version: "0.1"
workflow:
  name: big
  tasks:
    - name: t
      script:
${body}
        - 'echo "done $(( 6 * 7 ))"'
`;
}

describe('scripts too large for one argument', () => {
  it('a 150 KB script runs from a file the dry-run names; a small one keeps bash -c', () => {
    writeFileSync(join(dir, 'big.yaml'), recipe(7000));
    const dry = sflow(['run', '--dry-run', '-f', 'big.yaml'], { cwd: dir, env });
    expect(dry.code).toBe(0);
    const file = join(dir, 'sflow_output', '_dry_run', 'big', 't', 't.sh');
    expect(dry.stdout).toContain(`command: bash ${file}\n`);
    expect(dry.stdout).toMatch(/script file: .*t\.sh \(1\d{5} bytes, too large for one argument/);

    const run = sflow(['run', '-f', 'big.yaml'], { cwd: dir, env });
    expect(run.stderr + run.stdout).not.toContain('E2BIG');
    expect(run.code).toBe(0);
    const [runDir] = readdirSync(join(dir, 'sflow_output')).filter((n) => n.startsWith('big-'));
    const task = join(dir, 'sflow_output', runDir, 't');
    expect(readFileSync(join(task, 't.log'), 'utf8')).toBe('done 42\n');
    const script = readFileSync(join(task, 't.sh'), 'utf8');
    expect(Buffer.byteLength(script)).toBeGreaterThan(150_000);
    expect(script.endsWith('echo "done $(( 6 * 7 ))"')).toBe(true);

    writeFileSync(join(dir, 'small.yaml'), recipe(3));
    const small = sflow(['run', '--dry-run', '-f', 'small.yaml'], { cwd: dir, env });
    expect(small.stdout).toContain("command: bash -c ': line 0");
    expect(small.stdout).not.toContain('script file:');
  });
});
