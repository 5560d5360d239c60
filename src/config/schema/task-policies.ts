/** `task.replicas` (config §1.12) and `task.retries` (§1.13). */
import * as z from 'zod';
import { intOrExpr, oneOf } from './common.js';
import { strictObject, strList } from './shapes.js';

export const REPLICA_POLICIES = ['parallel', 'sequential'] as const;

export const ReplicasSchema = strictObject('replicas', {
  /** literal must be >= 1 */
  count: intOrExpr({ min: 1 }).optional(),
  /** case-insensitive; literals come out lower-case */
  policy: oneOf(REPLICA_POLICIES, { caseInsensitive: true, allowExpr: true }).optional(),
  /** variables to sweep over (Cartesian product of their domains) */
  variables: strList('replicas.variables').optional(),
});

export const RetriesSchema = strictObject('retries', {
  count: intOrExpr({ min: 0 }),
  /** seconds */
  interval: intOrExpr({ min: 0 }),
  backoff: intOrExpr({ min: 1 }).optional(),
});

export type Replicas = z.output<typeof ReplicasSchema>;
export type Retries = z.output<typeof RetriesSchema>;
