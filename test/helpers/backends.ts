/** Planned backends for tests that build Plans by hand. */
import { localKind } from '../../src/backends/local/kind.js';
import type {
  BackendCapabilities,
  BackendConfig,
  BackendType,
  PlannedBackend,
  PlannedBackendOf,
  PlannedOperator,
} from '../../src/plan/types.js';
import type { OperatorType } from '../../src/operators/index.js';

export const LOCAL_CAPABILITIES: BackendCapabilities = localKind.capabilities;

/** a planned backend (local unless `type` says otherwise); `config` as the planner writes it */
export function plannedBackend<T extends BackendType = 'local'>(
  over: Partial<Omit<PlannedBackendOf<T>, 'config'>> & { config?: Partial<BackendConfig<T>> } = {},
): PlannedBackend<T> {
  const name = over.name ?? 'local';
  const type = over.type ?? 'local';
  return {
    name,
    type,
    isDefault: true,
    placeholder: false,
    nodes: [],
    capabilities: LOCAL_CAPABILITIES,
    ...over,
    config: { name, type, ...over.config },
  } as PlannedBackend<T>;
}

/** a plan's backend as the type a test knows it has (an error naming both otherwise) */
export function backendOfType<T extends BackendType>(b: PlannedBackend, type: T): PlannedBackend<T> {
  if (b.type !== type) throw new Error(`backend '${b.name}' is ${b.type}, not ${type}`);
  return b as PlannedBackend<T>;
}

/** the planned operator narrowed to one type, for tests that read or set that type's settings */
export function operatorOfType<T extends OperatorType>(op: PlannedOperator, type: T): PlannedOperator<T> {
  if (op.type !== type) throw new Error(`operator '${op.name}' is ${op.type}, not ${type}`);
  return op as PlannedOperator<T>;
}
