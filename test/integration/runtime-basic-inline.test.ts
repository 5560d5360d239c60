// launch, log and retry cases (runtime-basic.cases.ts) under SFLOW_LAUNCHER=inline (no launcher: spawned from the driver itself)
import { runtimeBasicCases } from './runtime-basic.cases.js';

runtimeBasicCases('inline');
