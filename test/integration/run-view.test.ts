/** `--tui` without an interactive terminal falls back to the console view; `--help` stays lean. */
import { mkdtempSync, readdirSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { REPO, sflow } from '../helpers/cli.js';

const cwd = mkdtempSync(join(tmpdir(), 'sflow-view-'));
afterAll(() => rmSync(cwd, { recursive: true, force: true }));

describe('run view selection', () => {
  it('--tui on a pipe: a notice, then the console view and the usual verdict', () => {
    const r = sflow(
      ['run', '-f', join(REPO, 'assets/samples/self_contained/local/hello_world.yaml'), '--tui'],
      {
        cwd,
      },
    );
    expect(r.code, r.stderr).toBe(0);
    expect(r.stderr).toContain('--tui needs an interactive terminal; showing the console view instead');
    expect(r.stdout).toContain('✓ hello completed');
    expect(r.stdout).toContain('✓ Workflow completed');
    expect(r.stdout).not.toContain('\x1b[?1049h');
  });

  it('--tui-refresh is accepted and --tui is ignored with --dry-run', () => {
    const r = sflow(
      [
        'run',
        '-f',
        join(REPO, 'assets/samples/self_contained/local/dag.yaml'),
        '--tui',
        '--tui-refresh',
        '2',
        '--dry-run',
      ],
      { cwd },
    );
    expect(r.code, r.stderr).toBe(0);
    expect(r.stderr).toContain('--tui is ignored with --dry-run');
  });

  it('ink and react are only reachable through a dynamic import (sflow --help and plain runs never load them)', () => {
    const dir = join(REPO, 'dist', 'bundle');
    const seen = new Set<string>();
    const visit = (file: string) => {
      if (seen.has(file)) return;
      seen.add(file);
      const text = readFileSync(join(dir, file), 'utf8');
      for (const m of text.matchAll(/^import\s[^;]*?from\s+"\.\/([^"]+)"|^import\s+"\.\/([^"]+)"/gm))
        visit(m[1] ?? m[2]);
    };
    visit('main.js');
    expect(seen.size).toBeGreaterThan(1);
    for (const f of seen) {
      const text = readFileSync(join(dir, f), 'utf8');
      expect(text, f).not.toContain('node_modules/ink/');
      expect(text, f).not.toContain('node_modules/react');
    }
    // and outside the lazily imported TUI chunk no file carries them at all
    for (const f of readdirSync(dir).filter((x) => x.endsWith('.js'))) {
      const text = readFileSync(join(dir, f), 'utf8');
      if (text.includes('node_modules/ink/')) expect(f).toMatch(/^(tui|devtools)-/);
    }
    expect(sflow(['--help']).stdout).toContain('completion');
  });
});
