/**
 * The artifacts and uploads part of a real run, at the composition root: downloads http(s)
 * artifacts into the cache before any task starts (progress on stderr) and, when the plan
 * uploads anything, hands the runtime the S3 uploader (settings and the S3 library checked now,
 * so a bad SFLOW_UPLOAD_* value or a broken install stops the run before it starts).
 */
import type { LoadedRecipe } from '../config/load.js';
import type { Plan } from '../plan/types.js';
import type { RunUploads } from '../runtime/run.js';
import type { RunEventInput } from '../runtime/orchestrator-types.js';

export async function stageRun(
  loaded: LoadedRecipe,
  plan: Plan,
  err: (s: string) => void = (s) => process.stderr.write(s),
): Promise<{ warnings: string[]; uploads?: (emit: (e: RunEventInput) => void) => RunUploads }> {
  const { stageArtifacts } = await import('../artifacts/stage.js');
  const warnings = await stageArtifacts(loaded, plan, { say: (line) => err(`${line}\n`) });
  for (const w of warnings) err(`⚠ ${w}\n`);
  const { usesStorage } = await import('../uploads/credentials.js');
  if (!usesStorage(plan)) return { warnings };
  const { uploadSettings } = await import('../uploads/settings.js');
  const { Uploader } = await import('../uploads/uploader.js');
  const settings = uploadSettings();
  // a missing S3 client library is reported now, before any task runs
  await import('../uploads/s3-client.js').then((m) => m.loadSdk());
  return { warnings, uploads: (emit) => new Uploader(plan, emit, process.env, settings) };
}
