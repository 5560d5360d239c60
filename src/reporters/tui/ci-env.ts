/**
 * ink draws nothing live when the environment says it runs in CI (`CI`, `CONTINUOUS_INTEGRATION`;
 * read once, when ink is first imported). `--tui` on a real terminal is a live view all the same,
 * so ink is imported with those markers switched off; they are put back right after, so tasks
 * still see the user's environment.
 */
const MARKERS = ['CI', 'CONTINUOUS_INTEGRATION'] as const;

export async function withoutCiMarkers<T>(load: () => Promise<T>): Promise<T> {
  const saved = MARKERS.map((k) => [k, process.env[k]] as const);
  for (const k of MARKERS) if (k in process.env) process.env[k] = 'false';
  try {
    return await load();
  } finally {
    for (const [k, v] of saved) {
      if (v === undefined) delete process.env[k];
      else process.env[k] = v;
    }
  }
}
