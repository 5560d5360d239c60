/** Local backend: the hardware monitor collector runs on this host (src/monitor/host-collector.ts). */
export { hostCollectorLauncher as localCollectorLauncher } from '../../monitor/host-collector.js';
