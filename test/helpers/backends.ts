/** Planned backends for tests that build Plans by hand. */
import { localKind } from '../../src/backends/local/kind.js';
import type { BackendCapabilities, PlannedBackend } from '../../src/plan/types.js';

export const LOCAL_CAPABILITIES: BackendCapabilities = localKind.capabilities;

export function plannedBackend(over: Partial<PlannedBackend> = {}): PlannedBackend {
  return {
    name: 'local',
    type: 'local',
    isDefault: true,
    placeholder: false,
    nodes: [],
    config: {},
    capabilities: LOCAL_CAPABILITIES,
    ...over,
  };
}
