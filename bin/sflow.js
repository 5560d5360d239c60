#!/usr/bin/env node
// Thin launcher: the compiled CLI lives in dist/ (built by `npm install` via the prepare script).
import('../dist/cli/main.js').then(
  (m) => m.main(process.argv),
  (err) => {
    if (err && err.code === 'ERR_MODULE_NOT_FOUND' && String(err.message).includes('dist/cli/main.js')) {
      process.stderr.write('sflow is not built yet: run `npm install` (or `npm run build`) in the sflow checkout.\n');
      process.exit(1);
    }
    throw err;
  },
);
