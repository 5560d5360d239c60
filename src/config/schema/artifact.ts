/** `artifacts[*]` (config §1.6, artifacts-batch A1). */
import * as z from 'zod';
import { fail, isExpr, str } from './common.js';
import { strictObject } from './shapes.js';

const URI = /^([A-Za-z][A-Za-z0-9+.-]*):\/\/(.*)$/s;

export const ArtifactSchema = strictObject('artifact', {
  name: str(),
  description: str().nullable().optional(),
  uri: str(),
  content: str().nullable().optional(),
}).superRefine((a, ctx) => {
  if (!isExpr(a.uri)) {
    const m = URI.exec(a.uri.trim());
    if (!m) {
      fail(
        ctx,
        ['uri'],
        `artifact '${a.name}': URI must have a scheme (e.g. fs://, file://, https://, s3://), got '${a.uri}'`,
        'write fs:///abs/path for a local directory or file:///abs/path for a local file',
      );
      return;
    }
    if (m[2].trim() === '') {
      fail(ctx, ['uri'], `artifact '${a.name}': URI '${a.uri}' has no location or path after '://'`);
      return;
    }
  }
  if (a.content != null && !a.uri.startsWith('file://')) {
    fail(
      ctx,
      ['content'],
      `artifact '${a.name}': inline content is only supported for 'file://' URIs`,
      "use a file:// URI (e.g. file://config.yaml) or remove 'content'",
    );
  }
});

export type Artifact = z.output<typeof ArtifactSchema>;
