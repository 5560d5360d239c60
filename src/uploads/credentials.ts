/**
 * The dry-run's offline credential check for storage targets (artifacts-batch.md B2): no network,
 * only whether any source of the AWS SDK's default chain is present. It only warns: an
 * instance or pod role can still provide credentials at run time. Never prints a value.
 */
import { existsSync } from 'node:fs';
import { homedir } from 'node:os';
import { join } from 'node:path';
import type { Plan } from '../plan/types.js';

export function usesStorage(plan: Plan): boolean {
  return plan.uploadAll !== null || plan.tasks.some((t) => (t.uploads?.length ?? 0) > 0);
}

/** Names of the credential sources found (env variable names or file paths). */
export function credentialSources(env: NodeJS.ProcessEnv = process.env, home = homedir()): string[] {
  const found: string[] = [];
  if (env.AWS_ACCESS_KEY_ID && env.AWS_SECRET_ACCESS_KEY)
    found.push('AWS_ACCESS_KEY_ID/AWS_SECRET_ACCESS_KEY');
  for (const k of [
    'AWS_PROFILE',
    'AWS_WEB_IDENTITY_TOKEN_FILE',
    'AWS_CONTAINER_CREDENTIALS_RELATIVE_URI',
    'AWS_CONTAINER_CREDENTIALS_FULL_URI',
  ])
    if (env[k]) found.push(k);
  for (const f of [
    env.AWS_SHARED_CREDENTIALS_FILE ?? join(home, '.aws', 'credentials'),
    env.AWS_CONFIG_FILE ?? join(home, '.aws', 'config'),
  ])
    if (existsSync(f)) found.push(f);
  return found;
}

export function credentialWarnings(plan: Plan, env: NodeJS.ProcessEnv = process.env): string[] {
  if (!usesStorage(plan)) return [];
  if (credentialSources(env).length > 0) return [];
  return [
    'Storage targets: no AWS credentials found (AWS_ACCESS_KEY_ID/AWS_SECRET_ACCESS_KEY, AWS_PROFILE, ~/.aws/credentials, web identity or container credentials); uploads will fail unless an instance or pod role provides them',
  ];
}
