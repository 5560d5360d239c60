export * from './nvidia-smi.js';
export * from './settings.js';
export { claim, lend, release, releaseRun, reapDead } from './registry.js';
export type { Claim, ClaimRequest, Inventory } from './registry.js';
export type { ReservationRecord, RecordState } from './records.js';
