/**
 * The live view (ink): a header with the workflow, a clock that ticks every second and the run
 * directory (wrapped, never clipped); on the left the task table and the backends' allocation;
 * on the right (below, on a narrow terminal) the selected task's log, auto-tailing.
 *
 * Keys: ↑/↓ (k/j) select a task, PgUp/PgDn scroll its log (pauses), f or space follows/pauses,
 * a returns to following the newest task, q (or Ctrl-C) stops the run the way Ctrl-C does and,
 * once it has ended, leaves.
 */
import { Box, Text, useInput, useStdin, useStdout, type Key } from 'ink';
import { useEffect, useMemo, useRef, useState, type Dispatch, type SetStateAction } from 'react';
import {
  autoSelect,
  backendLine,
  countsLine,
  duration,
  STATE_COLOR,
  TABLE_HEADER,
  taskLine,
  wallClock,
  windowStart,
} from './format.js';
import { humanBytes, readLogTail, type LogTail } from './log-tail.js';

/** the keys the view reacts to (a subset of ink's Key) */
type Keys = Pick<Key, 'upArrow' | 'downArrow' | 'home' | 'end' | 'pageUp' | 'pageDown' | 'ctrl'>;
const NO_KEYS: Keys = {
  upArrow: false,
  downArrow: false,
  home: false,
  end: false,
  pageUp: false,
  pageDown: false,
  ctrl: false,
};
import type { TuiModel } from './model.js';

export interface AppProps {
  model: TuiModel;
  /** q / Ctrl-C */
  onQuit: () => void;
  /** screen size; default: the terminal's */
  columns?: number;
  rows?: number;
  /** how often the view picks up changes (the clock ticks every second regardless) */
  refreshMs?: number;
  now?: () => number;
  readTail?: (path: string, endAt?: number) => LogTail;
}

const WIDE = 100;

function useTerminalSize(columns?: number, rows?: number): { columns: number; rows: number } {
  const { stdout } = useStdout();
  const read = () => ({
    columns: columns ?? (stdout.columns || 80),
    rows: rows ?? (stdout.rows || 24),
  });
  const [size, setSize] = useState(read);
  useEffect(() => {
    const onResize = () => setSize(read());
    stdout.on('resize', onResize);
    return () => {
      stdout.off('resize', onResize);
    };
  });
  return size;
}

/** a paused log: the file size it stopped at and how many lines it is scrolled back */
type Paused = { size: number; back: number };

/** Re-renders when the model changes, every second for the clock, and on every tick while following. */
function useRefresh(model: TuiModel, paused: Paused | undefined, now: () => number, refreshMs = 250): void {
  const [, setTick] = useState(0);
  useEffect(() => {
    let seen = model.version;
    let lastSecond = Math.floor(now() / 1000);
    const timer = setInterval(
      () => {
        const second = Math.floor(now() / 1000);
        if (model.version !== seen || second !== lastSecond || !paused) {
          seen = model.version;
          lastSecond = second;
          setTick((t) => t + 1);
        }
      },
      Math.min(refreshMs, 1000),
    );
    return () => clearInterval(timer);
  }, [model, paused]);
}

interface KeyState {
  tasks: TuiModel['tasks'];
  selected: number;
  task: TuiModel['tasks'][number] | undefined;
  rows: number;
  readTail: (path: string, endAt?: number) => LogTail;
  onQuit: () => void;
  setPicked: (n: number | undefined) => void;
  setPaused: Dispatch<SetStateAction<Paused | undefined>>;
  active: boolean;
}

/** The keys (see the top of this file); a chunk of typed keys counts key by key. */
function useKeys(s: KeyState): void {
  const { tasks, rows, readTail, onQuit, setPicked, setPaused } = s;
  // the key handler reads the latest selection (it may have been registered by an older render)
  const current = useRef({ selected: s.selected, task: s.task });
  current.current = { selected: s.selected, task: s.task };
  useInput(
    (input, key) => {
      // a busy terminal hands several typed keys over in one chunk ("jq"): each one counts
      const chunk = !key.ctrl && !key.meta && input.length > 1 && !input.startsWith('\u001b');
      const keys: [string, Keys][] = chunk ? [...input].map((ch) => [ch, NO_KEYS]) : [[input, key]];
      let { selected } = current.current;
      const { task } = current.current;
      for (const [input, key] of keys) {
        if (input === 'q' || (key.ctrl && input === 'c')) return onQuit();
        const move = (to: number) => {
          selected = Math.max(0, Math.min(tasks.length - 1, to));
          setPicked(selected);
          setPaused(undefined);
        };
        if (key.upArrow || input === 'k') move(selected - 1);
        else if (key.downArrow || input === 'j') move(selected + 1);
        else if (key.home || input === 'g') move(0);
        else if (key.end || input === 'G') move(tasks.length - 1);
        else if (input === 'a') {
          setPicked(undefined);
          setPaused(undefined);
        } else if (input === 'f' || input === ' ')
          setPaused((p) => (p ? undefined : { size: readTail(task?.logPath ?? '').size, back: 0 }));
        else if (key.pageUp || key.pageDown) {
          const step = Math.max(1, rows - 8) * (key.pageUp ? 1 : -1);
          setPaused((p) => {
            const base = p ?? { size: readTail(task?.logPath ?? '').size, back: 0 };
            return { ...base, back: Math.max(0, base.back + step) };
          });
        }
      }
    },
    { isActive: s.active },
  );
}

/** How the screen is split: header, body (table, backends, log) and footer rows. */
function layout(model: TuiModel, t: number, columns: number, rows: number) {
  const wide = columns >= WIDE;
  const header = [
    `sflow ▸ ${model.workflow || 'starting…'}  ${model.verdict ? model.verdict.status : model.stopping ? 'STOPPING' : 'RUNNING'}  ${wallClock(t)}  elapsed ${duration((model.verdict?.at ?? t) - model.startedAt)}`,
    countsLine(model),
  ];
  const runDirLine = `run dir: ${model.runDir || '(preparing)'}`;
  const headerRows = header.length + Math.max(1, Math.ceil(runDirLine.length / columns));
  const footerRows = 2;
  const body = Math.max(4, rows - 1 - headerRows - footerRows);
  const backendRows = Math.min(model.backends.length, 3);
  const leftWidth = wide ? Math.max(40, Math.floor(columns * 0.5)) : columns;
  const backendBlock = backendRows ? backendRows + 1 : 0;
  // wide: table and log side by side; narrow: the table takes what it needs, the log at least 4 lines
  const tableRows = wide
    ? Math.max(1, body - 1 - backendBlock)
    : Math.max(1, Math.min(model.tasks.length, body - 1 - backendBlock - 1 - 4));
  const logRows = Math.max(1, (wide ? body : body - 1 - tableRows - backendBlock) - 1);
  return { wide, header, runDirLine, body, backendRows, leftWidth, tableRows, logRows };
}

export function App(props: AppProps) {
  const { model, onQuit } = props;
  const now = props.now ?? Date.now;
  const readTail = props.readTail ?? ((p: string, endAt?: number) => readLogTail(p, { endAt }));
  const { columns, rows } = useTerminalSize(props.columns, props.rows);
  const [picked, setPicked] = useState<number | undefined>(undefined);
  const [paused, setPaused] = useState<Paused | undefined>(undefined);
  const { isRawModeSupported } = useStdin();
  useRefresh(model, paused, now, props.refreshMs);

  const tasks = model.tasks;
  const selected = Math.min(picked ?? autoSelect(tasks), Math.max(0, tasks.length - 1));
  const task = tasks[selected];
  useKeys({
    tasks,
    selected,
    task,
    rows,
    readTail,
    onQuit,
    setPicked,
    setPaused,
    active: isRawModeSupported,
  });

  const t = now();
  const l = layout(model, t, columns, rows);
  const notice = model.verdict
    ? `${model.verdict.message} — press q to exit`
    : (model.notices.at(-1) ?? (model.stopping ? model.stopping : ''));
  const longest = useMemo(() => tasks.reduce((n, x) => Math.max(n, x.name.length), 0), [tasks.length]);
  const nameWidth = Math.max(8, Math.min(longest, l.leftWidth - 38));
  const tail = useMemo(
    () => (task ? readTail(task.logPath, paused?.size) : { lines: [], size: 0 }),
    [task?.logPath, paused?.size, model.version, t - (t % 250)],
  );

  return (
    <Box flexDirection="column" width={columns}>
      {l.header.map((h, i) => (
        <Text key={`h${i}`} bold={i === 0} wrap="truncate-end">
          {h}
        </Text>
      ))}
      <Text wrap="wrap">{l.runDirLine}</Text>
      <Box flexDirection={l.wide ? 'row' : 'column'} height={l.body}>
        <TaskTable
          model={model}
          selected={selected}
          t={t}
          nameWidth={nameWidth}
          width={l.leftWidth}
          tableRows={l.tableRows}
          backendRows={l.backendRows}
        />
        <LogPane task={task} tail={tail} paused={paused} logRows={l.logRows} wide={l.wide} />
      </Box>
      <Text color={model.verdict?.status === 'FAILED' ? 'red' : 'yellow'} wrap="truncate-end">
        {notice || ' '}
      </Text>
      <Text dimColor wrap="truncate-end">
        {isRawModeSupported
          ? '↑↓/jk select · PgUp/PgDn scroll · f follow/pause · a auto · q ' +
            (model.verdict ? 'exit' : 'stop the run')
          : 'no keyboard: Ctrl-C stops the run'}
      </Text>
    </Box>
  );
}

/** The task table's window around the selection, padded to its rows, then the backends. */
function TaskTable(p: {
  model: TuiModel;
  selected: number;
  t: number;
  nameWidth: number;
  width: number;
  tableRows: number;
  backendRows: number;
}) {
  const { model, selected, tableRows, backendRows } = p;
  const start = windowStart(selected, model.tasks.length, tableRows);
  const visible = model.tasks.slice(start, start + tableRows);
  return (
    <Box flexDirection="column" width={p.width} flexShrink={0}>
      <Text dimColor wrap="truncate-end">
        {TABLE_HEADER}
      </Text>
      {visible.map((row, i) => (
        <Text
          key={row.name}
          color={STATE_COLOR[row.state]}
          inverse={start + i === selected}
          wrap="truncate-end"
        >
          {taskLine(row, p.t, p.nameWidth, start + i === selected)}
        </Text>
      ))}
      {Array.from({ length: tableRows - visible.length }, (_, i) => (
        <Text key={`pad${i}`}> </Text>
      ))}
      {backendRows > 0 && <Text dimColor>backends</Text>}
      {model.backends.slice(0, backendRows).map((b) => (
        <Text key={b.name} wrap="truncate-end">
          {backendLine(b)}
        </Text>
      ))}
    </Box>
  );
}

/** The selected task's log: its last lines (scrolled back while paused) under a title. */
function LogPane(p: {
  task: TuiModel['tasks'][number] | undefined;
  tail: { lines: string[]; size: number };
  paused: Paused | undefined;
  logRows: number;
  wide: boolean;
}) {
  const { task, tail, paused } = p;
  const end = Math.max(0, tail.lines.length - (paused?.back ?? 0));
  const logLines = tail.lines.slice(Math.max(0, end - p.logRows), end);
  const logTitle = task
    ? `log: ${task.name} (${humanBytes(tail.size)})${paused ? ' — paused' : ' — following'}${task.detail ? ` — ${task.detail}` : ''}`
    : 'log: (no task yet)';
  return (
    <Box flexDirection="column" flexGrow={1} paddingLeft={p.wide ? 1 : 0}>
      <Text dimColor wrap="truncate-end">
        {logTitle}
      </Text>
      {logLines.map((l, i) => (
        <Text key={`l${i}`} wrap="truncate-end">
          {l || ' '}
        </Text>
      ))}
    </Box>
  );
}
