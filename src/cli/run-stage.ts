/**
 * The artifacts and uploads part of a real run, at the composition root: downloads http(s)
 * artifacts into the cache before anything is allocated (progress on stderr), warns on the final
 * plan about fs:// paths missing here that the preflight could not check, and, when the plan
 * uploads anything, hands the runtime the S3 uploader (settings and the S3 library checked now,
 * so a bad SFLOW_UPLOAD_* value or a broken install stops the run before it starts).
 */
import type { LoadedRecipe } from '../config/load.js';
import type { Plan } from '../plan/types.js';
import type { RunEventInput } from '../events/events.js';
import type { RunUploadsFactory } from '../runtime/finalize.js';

export interface StagedRun {
  /** called with the final plan, before any task starts */
  onPlan: (plan: Plan, emit: (e: RunEventInput) => void) => void;
  /** the S3 uploader, when the plan uploads anything */
  uploads?: RunUploadsFactory;
}

export async function stageRun(
  loaded: LoadedRecipe,
  plan: Plan,
  err: (s: string) => void = (s) => process.stderr.write(s),
): Promise<StagedRun> {
  const { stageArtifacts, missingArtifactWarnings } = await import('../artifacts/stage.js');
  await stageArtifacts(plan, { say: (line) => err(`${line}\n`) });
  const onPlan = (final: Plan, emit: (e: RunEventInput) => void): void => {
    for (const message of missingArtifactWarnings(loaded, final))
      emit({ type: 'log', level: 'warning', message });
  };
  const { usesStorage } = await import('../uploads/credentials.js');
  if (!usesStorage(plan)) return { onPlan };
  const { uploadSettings } = await import('../uploads/settings.js');
  const { Uploader } = await import('../uploads/uploader.js');
  const settings = uploadSettings();
  // a missing S3 client library is reported now, before any task runs
  await import('../uploads/s3-client.js').then((m) => m.loadSdk());
  return { onPlan, uploads: (p, emit) => new Uploader(p, emit, process.env, settings) };
}
