/**
 * Streaming aggregation of one result pattern's matches (config.md 1.15): first, last, list,
 * count, min, max, avg, sum — without keeping every match unless `list` asks for it.
 * The `matches` trace keeps the first and the last TRACE_HALF matches.
 */
import type { PlannedResultPattern } from '../plan/types.js';
import { PyFloat } from './json-write.js';
import { numericOf, type CastValue } from './cast.js';

export const TRACE_HALF = 500;
const TEXT_CAP = 1000;

export interface MatchTrace {
  line: number;
  value: CastValue;
  text: string;
}

export class PatternAggregate {
  count = 0;
  private first: CastValue | undefined;
  private last: CastValue | undefined;
  private list: CastValue[] | undefined;
  /** the smallest/largest numeric value so far, with its number */
  private min: { value: CastValue; n: number } | undefined;
  private max: { value: CastValue; n: number } | undefined;
  private sum = 0;
  private anyFloat = false;
  private nonNumeric: CastValue | undefined;
  private readonly head: MatchTrace[] = [];
  private readonly tail: MatchTrace[] = [];

  constructor(readonly spec: PlannedResultPattern) {
    if (spec.aggregate === 'list') this.list = [];
  }

  add(value: CastValue, line: number, text: string): void {
    this.count++;
    if (this.count === 1) this.first = value;
    this.last = value;
    this.list?.push(value);
    const a = this.spec.aggregate;
    if (a === 'min' || a === 'max' || a === 'sum' || a === 'avg') {
      const n = numericOf(value);
      if (n === undefined) this.nonNumeric ??= value;
      else {
        if (value instanceof PyFloat) this.anyFloat = true;
        this.sum += n;
        if (this.min === undefined || n < this.min.n) this.min = { value, n };
        if (this.max === undefined || n > this.max.n) this.max = { value, n };
      }
    }
    const entry = { line, value, text: text.length > TEXT_CAP ? text.slice(0, TEXT_CAP) : text };
    if (this.head.length < TRACE_HALF) this.head.push(entry);
    else {
      this.tail.push(entry);
      if (this.tail.length > TRACE_HALF) this.tail.shift();
    }
  }

  trace(): MatchTrace[] {
    return [...this.head, ...this.tail];
  }

  /** The aggregated value, or an error message; undefined when nothing matched. */
  result(): { value: CastValue } | { error: string } | undefined {
    if (this.count === 0) return undefined;
    switch (this.spec.aggregate) {
      case 'first':
        return this.first === undefined ? undefined : { value: this.first };
      case 'last':
        return this.last === undefined ? undefined : { value: this.last };
      case 'list':
        return { value: this.list ?? [] };
      case 'count':
        return { value: this.count };
      default:
        break;
    }
    if (this.nonNumeric !== undefined) {
      return {
        error: `${this.spec.name}: aggregate '${this.spec.aggregate}' needs numbers, got ${JSON.stringify(this.nonNumeric)}`,
      };
    }
    switch (this.spec.aggregate) {
      case 'min':
        return this.min && { value: this.min.value };
      case 'max':
        return this.max && { value: this.max.value };
      case 'sum':
        return { value: this.anyFloat ? new PyFloat(this.sum) : this.sum };
      case 'avg':
        return { value: new PyFloat(this.sum / this.count) };
    }
    return undefined;
  }
}
