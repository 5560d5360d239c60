/**
 * Docker: on the local engine the containers share this host, so the hardware monitor's collector
 * runs here, bare, beside them (src/monitor/host-collector.ts). Pool hosts are not sampled yet (the
 * collector would have to run over ssh and its files come back): starting one fails with the
 * reason, and the run warns that the node is not sampled.
 */
import { hostCollectorLauncher } from '../../monitor/host-collector.js';
import type { CollectorLauncher } from '../../monitor/launcher.js';

/** the synthetic nodes of one local engine (hosts.ts: `localhost`, `localhost-1`, … at 127.0.0.1) */
const onLocalEngine = (name: string, ip: string): boolean =>
  /^localhost(-\d+)?$/.test(name) && ip === '127.0.0.1';

export function dockerCollectorLauncher(): CollectorLauncher {
  const here = hostCollectorLauncher();
  return {
    start(l) {
      if (!onLocalEngine(l.spec.node.name, l.spec.node.ip))
        return Promise.reject(
          new Error(
            `'${l.spec.node.name}' is a Docker pool host: collectors over ssh are not in this version, so it is not sampled`,
          ),
        );
      return here.start(l);
    },
  };
}
