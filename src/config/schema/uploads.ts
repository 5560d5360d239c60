/** `storage[*]`, `task.uploads[*]`, `workflow.upload_all` (artifacts-batch.md Part B). */
import * as z from 'zod';
import { fail, isExpr, oneOf, str } from './common.js';
import { strictObject } from './shapes.js';
import { typedUnion } from './typed-union.js';

export const S3StorageSchema = strictObject('s3 storage', {
  name: str(),
  type: z.literal('s3'),
  bucket: str({ nonEmpty: true }),
  region: str().optional(),
  /** key prefix prepended to every uploaded object */
  prefix: str().optional(),
  endpoint_url: str().optional(),
  addressing_style: oneOf(['auto', 'virtual', 'path'], { allowExpr: true }).optional(),
  storage_class: str().optional(),
});

export const StorageSchema = typedUnion('storage', [S3StorageSchema]);

const ON_ERROR = ['warn', 'fail'] as const;

function hasDotDot(p: string): boolean {
  return !isExpr(p) && p.split(/[/\\]/).includes('..');
}

export const UploadSchema = strictObject('upload', {
  /** name of a declared storage entry */
  target: str({ nonEmpty: true }),
  /** local file or glob; may contain ${{ }} */
  from: str({ nonEmpty: true }),
  /** remote key relative to the target prefix; trailing '/' = directory */
  to: str({ nonEmpty: true }).optional(),
  on_error: oneOf(ON_ERROR).optional(),
  /**
   * sflow extension: also upload files reached through a symbolic link that leads out of the
   * folder `from` names (default false: such files are skipped and reported)
   */
  follow_symlinks: z.boolean().optional(),
}).superRefine((u, ctx) => {
  if (u.to === undefined) return;
  if (hasDotDot(u.to)) fail(ctx, ['to'], `upload 'to' must not contain '..' segments, got '${u.to}'`);
  const glob = !isExpr(u.from) && /[*?[]/.test(u.from);
  if (glob && !isExpr(u.to) && !u.to.endsWith('/'))
    fail(
      ctx,
      ['to'],
      `upload 'to' must end with '/' when 'from' is a glob (from='${u.from}', to='${u.to}')`,
      "a trailing '/' makes 'to' a directory that receives every matched file",
    );
});

export const UploadAllSchema = strictObject('workflow.upload_all', {
  target: str({ nonEmpty: true }),
  /** default `<run_id>.zip` */
  to: str({ nonEmpty: true }).optional(),
  on_error: oneOf(ON_ERROR).optional(),
}).superRefine((u, ctx) => {
  if (u.to !== undefined && hasDotDot(u.to))
    fail(ctx, ['to'], `upload_all 'to' must not contain '..' segments, got '${u.to}'`);
});

export type Storage = z.output<typeof StorageSchema>;
export type Upload = z.output<typeof UploadSchema>;
export type UploadAll = z.output<typeof UploadAllSchema>;
