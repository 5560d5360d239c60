/**
 * http readiness probes with a status and body match (sflow extension of http_get/http_post):
 * a service answering 200 "warming" is not READY until its body says "ready", and a 503 never
 * counts even when the body matches.
 */
import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { scratchDir } from '../helpers/scratch.js';
import { sflow } from '../helpers/cli.js';
import { onlyRunDir, taskLog, taskTable } from '../helpers/run-dir.js';

const PORT = 18763;

const SERVER = `import os, sys, time
from http.server import BaseHTTPRequestHandler, HTTPServer
flag = sys.argv[1]
class H(BaseHTTPRequestHandler):
    def do_GET(self):
        ready = os.path.exists(flag)
        code = 200 if ready or os.environ.get("WARM_CODE") != "503" else 503
        body = b"state: ready" if ready else b"state: warming"
        self.send_response(code); self.end_headers(); self.wfile.write(body)
    def log_message(self, *a):
        pass
HTTPServer(("127.0.0.1", ${PORT}), H).serve_forever()
`;

function recipe(dir: string, probe: string): string {
  writeFileSync(join(dir, 'server.py'), SERVER);
  return `version: "0.1"
workflow:
  name: http_match
  tasks:
    - name: server
      script:
        - exec python3 ${join(dir, 'server.py')} ${join(dir, 'flag')}
      probes:
        readiness:
          http_get:
            url: http://127.0.0.1:${PORT}/health
${probe}
          interval: 1
          timeout: 30
    - name: flip
      script:
        - sleep 2
        - date +%s.%N > ${join(dir, 'flag')}
    - name: client
      depends_on: [server]
      script:
        - date +%s.%N
`;
}

describe.sequential('http readiness with status and body match', () => {
  it('waits for the body to match before the dependent starts', () => {
    const dir = scratchDir('sflow-http-');
    writeFileSync(
      join(dir, 'r.yaml'),
      recipe(dir, '            expected_status: 200\n            body_match: "re:state:\\\\s+ready"'),
    );
    const dry = sflow(['run', '-f', 'r.yaml', '--dry-run'], { cwd: dir });
    expect(dry.stdout).toMatch(
      /http_get http:\/\/127\.0\.0\.1:18763\/health status in \[200\] body ~ "re:state:\\\\s\+ready"/,
    );
    const r = sflow(['run', '-f', 'r.yaml'], { cwd: dir });
    expect(r.code, r.stderr).toBe(0);
    const runDir = onlyRunDir(join(dir, 'sflow_output'));
    const flipped = Number(readFileSync(join(dir, 'flag'), 'utf8'));
    const clientStart = Number(taskLog(runDir, 'client').trim());
    expect(clientStart).toBeGreaterThan(flipped);
    expect(taskTable(runDir).server.status).toBe('READY');
  });

  it('a status outside expected_status never counts, whatever the body', () => {
    const dir = scratchDir('sflow-http-');
    writeFileSync(
      join(dir, 'r.yaml'),
      recipe(dir, '            expected_status: [200, 204]')
        .replace('exec python3', 'WARM_CODE=503 exec python3')
        .replace('sleep 2', 'sleep 1'),
    );
    const r = sflow(['run', '-f', 'r.yaml'], { cwd: dir });
    expect(r.code, r.stderr).toBe(0);
    const runDir = onlyRunDir(join(dir, 'sflow_output'));
    expect(Number(taskLog(runDir, 'client').trim())).toBeGreaterThan(
      Number(readFileSync(join(dir, 'flag'), 'utf8')),
    );
  });
});
