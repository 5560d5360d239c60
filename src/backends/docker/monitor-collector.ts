/**
 * Docker: on the local engine the containers share this host, so the hardware monitor's collector
 * runs here, bare, beside them (src/monitor/host-collector.ts). A pool host runs it over ssh, its
 * CSV lines streamed back into the raw files (ssh-collector.ts).
 */
import { hostCollectorLauncher } from '../../monitor/host-collector.js';
import type { CollectorLauncher } from '../../monitor/launcher.js';
import { sshCollectorLauncher } from './ssh-collector.js';

/** the synthetic nodes of one local engine (hosts.ts: `localhost`, `localhost-1`, … at 127.0.0.1) */
const onLocalEngine = (name: string, ip: string): boolean =>
  /^localhost(-\d+)?$/.test(name) && ip === '127.0.0.1';

export function dockerCollectorLauncher(): CollectorLauncher {
  const here = hostCollectorLauncher();
  const overSsh = sshCollectorLauncher();
  return {
    start(l) {
      if (!onLocalEngine(l.spec.node.name, l.spec.node.ip)) return overSsh.start(l);
      return here.start(l);
    },
  };
}
