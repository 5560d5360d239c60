/**
 * sflow's `${{ }}` against Jinja2 itself: fixtures/jinja2-golden.json holds what Jinja2 3.1.6
 * rendered for each expression (written by fixtures/jinja2-golden.py; the suite needs neither
 * Python nor Jinja2). Printf-style `%` formatting over every conversion, flag and operand kind,
 * and how values of every kind are printed.
 */
import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { e, thrown } from './helpers.js';

type Expected = string | { error: string };
const golden = JSON.parse(
  readFileSync(new URL('./fixtures/jinja2-golden.json', import.meta.url), 'utf8'),
) as {
  percent: [string, Expected][];
  render: [string, Expected][];
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
