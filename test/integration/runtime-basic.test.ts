// launch, log and retry cases (runtime-basic.cases.ts) under the Perl launcher, the default
import { runtimeBasicCases } from './runtime-basic.cases.js';

runtimeBasicCases('perl');
