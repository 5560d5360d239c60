// launch, log and retry cases (runtime-basic.cases.ts) under SFLOW_LAUNCHER=node (the launcher used where Perl is missing)
import { runtimeBasicCases } from './runtime-basic.cases.js';

runtimeBasicCases('node');
