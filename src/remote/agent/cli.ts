/**
 * `sflow remote-agent VERB SESSION [...]`: the hidden command the local side of `--ssh` runs on
 * the remote host through ssh. Always the same sflow version on both ends (the local side makes
 * sure of it), so this is an internal protocol, not a user interface.
 *   start SESSION -- ARGS…        start `sflow ARGS…` detached; prints `started supervisor=PID`
 *   supervise SESSION -- ARGS…    (started by start)
 *   follow SESSION --mode M [--interval S]   stream|logs|status until the run ends
 *   snapshot SESSION              one watch snapshot
 *   stop SESSION                  stop the run (SIGINT → SIGTERM → SIGKILL), wait, report
 *   pack SESSION --mode logs|all  tar of the output on stdout
 */
import { isAbsolute } from 'node:path';
import { agentStart, agentStop, agentSupervise } from './lifecycle.js';
import { agentFollow, agentSnapshot } from './observe.js';
import { agentPack } from './pack.js';

function opt(args: string[], name: string, fallback: string): string {
  const i = args.indexOf(name);
  return i >= 0 && i + 1 < args.length ? args[i + 1] : fallback;
}

export async function remoteAgent(verb: string, session: string, rest: string[]): Promise<number> {
  if (!isAbsolute(session)) {
    process.stderr.write(`remote-agent: the session must be an absolute path, got ${session}\n`);
    return 2;
  }
  const afterDashes = rest[0] === '--' ? rest.slice(1) : rest;
  switch (verb) {
    case 'start':
      return agentStart(session, afterDashes);
    case 'supervise':
      return agentSupervise(session, afterDashes);
    case 'follow': {
      const mode = opt(rest, '--mode', 'logs');
      if (mode !== 'stream' && mode !== 'logs' && mode !== 'status') break;
      return agentFollow(session, mode, Math.max(0.2, Number(opt(rest, '--interval', '5')) || 5));
    }
    case 'snapshot':
      return agentSnapshot(session);
    case 'stop':
      return agentStop(session);
    case 'pack': {
      const mode = opt(rest, '--mode', 'logs');
      if (mode !== 'logs' && mode !== 'all') break;
      return agentPack(session, mode);
    }
  }
  process.stderr.write(`remote-agent: unknown request ${[verb, ...rest].join(' ')}\n`);
  return 2;
}
