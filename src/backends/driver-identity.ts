/**
 * Who made a remote object: `<host>:<pid>:<start time>` of the sflow driver (start time: field 22
 * of /proc/<pid>/stat, `0` where unknown). Backends record it on what they create (Kubernetes:
 * the `sflow/driver` annotation; Docker: the `sflow.driver` container label) so that a later
 * driver reaps only what a dead driver of THIS host left: a pid means nothing on another machine,
 * and a reused pid is told apart by its start time.
 */
import { hostname } from 'node:os';
import { isProcessAlive, processStartTime } from '../util/process-liveness.js';

export interface DriverIdentity {
  host: string;
  pid: number;
  /** clock ticks since boot; 0: not recorded (no procfs where it was written) */
  startTime: number;
}

/** `<host>:<pid>:<start time>` of this driver */
export function driverId(): string {
  return `${hostname()}:${process.pid}:${processStartTime(process.pid) ?? 0}`;
}

/**
 * A recorded identity, or undefined when it is not one. The host is everything before the last
 * two fields, so a host name with a colon (never valid, but written by someone) still parses.
 */
export function parseDriverId(id: string | undefined): DriverIdentity | undefined {
  if (!id) return undefined;
  const m = /^(.+):(\d+):(\d+)$/.exec(id.trim());
  if (!m) return undefined;
  const pid = Number(m[2]);
  const startTime = Number(m[3]);
  if (!Number.isSafeInteger(pid) || pid <= 0 || !Number.isSafeInteger(startTime)) return undefined;
  return { host: m[1], pid, startTime };
}

/**
 * The recorded driver is a process of `host` (this machine by default) that provably no longer
 * runs: its pid is gone (or a zombie), or the pid now belongs to a process that started at another
 * time. Anything else — another host's driver, an identity that does not parse, a live pid whose
 * start time cannot be compared — is not gone.
 */
export function driverGone(id: string | undefined, host = hostname()): boolean {
  const d = parseDriverId(id);
  if (!d || d.host !== host) return false;
  return !isProcessAlive(d.pid, d.startTime > 0 ? d.startTime : null);
}
