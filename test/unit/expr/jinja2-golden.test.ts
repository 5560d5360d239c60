/**
 * sflow's `${{ }}` against Jinja2 itself: fixtures/jinja2-golden.json holds what Jinja2 3.1.6
 * rendered for each expression (written by fixtures/jinja2-golden.py; the suite needs neither
 * Python nor Jinja2). Printf-style `%` formatting over every conversion, flag and operand kind,
 * how values of every kind are printed, and whole templates (line ends, `-` trimming).
 */
import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { e, r, thrown } from './helpers.js';
import type { Scope } from '../../../src/config/expr/index.js';

type Expected = string | { error: string };
const golden = JSON.parse(
  readFileSync(new URL('./fixtures/jinja2-golden.json', import.meta.url), 'utf8'),
) as {
  percent: [string, Expected][];
  render: [string, Expected][];
  templates: [string, Expected][];
  scope: Scope;
};

function check(src: string, expected: Expected): void {
  if (typeof expected === 'string') expect(e(src, {})).toBe(expected);
  else expect(thrown(() => e(src, {})).message).toContain(expected.error);
}

describe('printf-style % formatting, as Jinja2 renders it', () => {
  it('has its cases', () => {
    expect(golden.percent.length).toBeGreaterThan(800);
  });
  it.each(golden.percent)('%s', check);
});

describe('values printed, as Jinja2 prints them', () => {
  it('has its cases', () => {
    expect(golden.render.length).toBeGreaterThan(40);
  });
  it.each(golden.render)('%s', check);
});

describe('whole templates, as Jinja2 renders them ({{ for ${{)', () => {
  it('has its cases', () => {
    expect(golden.templates.length).toBeGreaterThan(15);
  });
  it.each(golden.templates)('%j', (src, expected) => {
    expect(r(src, golden.scope)).toEqual(expected);
  });
});
