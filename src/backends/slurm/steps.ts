/**
 * Reading Slurm's answers: `scontrol -o show step <job>` (one line per step of the allocation,
 * with the srun client that created it), `scontrol -o show node`, `salloc`'s messages.
 */

export interface StepInfo {
  /** `<job>.<step>` */
  id: string;
  /** the two parts of the id: the job (`123`, `123_4` in an array) and the step within it */
  job: string;
  step: string;
  name: string;
  state: string;
  /** host and pid of the srun client that created the step (matches our own srun processes) */
  srunHost: string;
  srunPid: number;
  nodeList: string;
}

/** `key=value` fields of one `-o` (one-line) record; values run to the next ` key=` */
export function oneLineFields(line: string): Record<string, string> {
  const out: Record<string, string> = {};
  const re = /(?:^|\s)([A-Za-z][A-Za-z0-9:_/]*)=/g;
  const keys: Array<{ key: string; start: number; end: number }> = [];
  for (let m = re.exec(line); m; m = re.exec(line))
    keys.push({ key: m[1], start: m.index, end: m.index + m[0].length });
  keys.forEach((k, i) => {
    out[k.key] = line.slice(k.end, i + 1 < keys.length ? keys[i + 1].start : undefined).trim();
  });
  return out;
}

/** Steps from `scontrol -o show step <job>`; "not found" / "no job steps" answers are empty lists. */
export function parseSteps(stdout: string): StepInfo[] {
  const steps: StepInfo[] = [];
  for (const line of stdout.split('\n')) {
    if (!line.startsWith('StepId=')) continue;
    const f = oneLineFields(line);
    const [host, pid] = (f['SrunHost:Pid'] ?? '').split(':');
    const id = f.StepId ?? '';
    const dot = id.lastIndexOf('.');
    steps.push({
      id,
      job: dot > 0 ? id.slice(0, dot) : id,
      step: dot > 0 ? id.slice(dot + 1) : '',
      name: f.Name ?? '',
      state: f.State ?? 'UNKNOWN',
      srunHost: host ?? '',
      srunPid: Number(pid) || 0,
      nodeList: f.NodeList ?? '',
    });
  }
  return steps;
}

/** `scontrol show step` said the job has no steps, or the job is gone (both: nothing runs). */
export function noSteps(text: string): boolean {
  return /not found|No job steps exist|Invalid job id/i.test(text);
}

/** NodeName → NodeAddr from `scontrol -o show node <list>`. */
export function parseNodeAddrs(stdout: string): Map<string, string> {
  const out = new Map<string, string>();
  for (const line of stdout.split('\n')) {
    if (!line.startsWith('NodeName=')) continue;
    const f = oneLineFields(line);
    out.set(f.NodeName, f.NodeAddr || f.NodeHostName || f.NodeName);
  }
  return out;
}

/** `scontrol getaddrs` lines `<host>: <ip>:<port>` → [host, ip] in order. */
export function parseGetAddrs(stdout: string): Array<[string, string]> {
  const out: Array<[string, string]> = [];
  for (const line of stdout.split('\n')) {
    const m = /^\s*([^\s:]+):\s*(\S+?)(?::\d+)?\s*$/.exec(line);
    if (m) out.push([m[1], m[2].replace(/^\[|\]$/g, '')]);
  }
  return out;
}

/** What salloc said so far: the job id (pending or granted) and the granted node list. */
export interface SallocProgress {
  jobId?: string;
  granted: boolean;
  nodeList?: string;
  queued: boolean;
}

export function parseSallocOutput(text: string, into: SallocProgress = { granted: false, queued: false }) {
  for (const line of text.split('\n')) {
    let m = /(?:Pending|Granted) job allocation (\d+)/.exec(line);
    if (m) into.jobId = m[1];
    if (/Granted job allocation/.test(line)) into.granted = true;
    m = /Nodes (\S+) are ready for job/.exec(line);
    if (m) into.nodeList = m[1];
    if (/queued and waiting for resources/.test(line)) into.queued = true;
  }
  return into;
}
