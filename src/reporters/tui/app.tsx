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
import { useEffect, useMemo, useRef, useState } from 'react';
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

export function App(props: AppProps) {
  const { model, onQuit } = props;
  const now = props.now ?? Date.now;
  const readTail = props.readTail ?? ((p: string, endAt?: number) => readLogTail(p, { endAt }));
  const { columns, rows } = useTerminalSize(props.columns, props.rows);
  const [, setTick] = useState(0);
  const [picked, setPicked] = useState<number | undefined>(undefined);
  const [paused, setPaused] = useState<{ size: number; back: number } | undefined>(undefined);
  const { isRawModeSupported } = useStdin();

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
      Math.min(props.refreshMs ?? 250, 1000),
    );
    return () => clearInterval(timer);
  }, [model, paused]);

  const tasks = model.tasks;
  const selected = Math.min(picked ?? autoSelect(tasks), Math.max(0, tasks.length - 1));
  const task = tasks[selected];
  // the key handler reads the latest selection (it may have been registered by an older render)
  const current = useRef({ selected, task });
  current.current = { selected, task };

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
    { isActive: isRawModeSupported },
  );

  const t = now();
  const wide = columns >= WIDE;
  const header = [
    `sflow ▸ ${model.workflow || 'starting…'}  ${model.verdict ? model.verdict.status : model.stopping ? 'STOPPING' : 'RUNNING'}  ${wallClock(t)}  elapsed ${duration((model.verdict?.at ?? t) - model.startedAt)}`,
    countsLine(model),
  ];
  const runDirLine = `run dir: ${model.runDir || '(preparing)'}`;
  const headerRows = header.length + Math.max(1, Math.ceil(runDirLine.length / columns));
  const notice = model.verdict
    ? `${model.verdict.message} — press q to exit`
    : (model.notices.at(-1) ?? (model.stopping ? model.stopping : ''));
  const footerRows = 2;
  const body = Math.max(4, rows - 1 - headerRows - footerRows);
  const backendRows = Math.min(model.backends.length, 3);
  const leftWidth = wide ? Math.max(40, Math.floor(columns * 0.5)) : columns;
  const backendBlock = backendRows ? backendRows + 1 : 0;
  // wide: table and log side by side; narrow: the table takes what it needs, the log at least 4 lines
  const tableRows = wide
    ? Math.max(1, body - 1 - backendBlock)
    : Math.max(1, Math.min(tasks.length, body - 1 - backendBlock - 1 - 4));
  const logRows = Math.max(1, (wide ? body : body - 1 - tableRows - backendBlock) - 1);
  const longest = useMemo(() => tasks.reduce((n, x) => Math.max(n, x.name.length), 0), [tasks.length]);
  const nameWidth = Math.max(8, Math.min(longest, leftWidth - 38));

  const start = windowStart(selected, tasks.length, tableRows);
  const visible = tasks.slice(start, start + tableRows);
  const tail = useMemo(
    () => (task ? readTail(task.logPath, paused?.size) : { lines: [], size: 0 }),
    [task?.logPath, paused?.size, model.version, t - (t % 250)],
  );
  const end = Math.max(0, tail.lines.length - (paused?.back ?? 0));
  const logLines = tail.lines.slice(Math.max(0, end - logRows), end);
  const logTitle = task
    ? `log: ${task.name} (${humanBytes(tail.size)})${paused ? ' — paused' : ' — following'}${task.detail ? ` — ${task.detail}` : ''}`
    : 'log: (no task yet)';

  return (
    <Box flexDirection="column" width={columns}>
      {header.map((h, i) => (
        <Text key={`h${i}`} bold={i === 0} wrap="truncate-end">
          {h}
        </Text>
      ))}
      <Text wrap="wrap">{runDirLine}</Text>
      <Box flexDirection={wide ? 'row' : 'column'} height={body}>
        <Box flexDirection="column" width={leftWidth} flexShrink={0}>
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
              {taskLine(row, t, nameWidth, start + i === selected)}
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
        <Box flexDirection="column" flexGrow={1} paddingLeft={wide ? 1 : 0}>
          <Text dimColor wrap="truncate-end">
            {logTitle}
          </Text>
          {logLines.map((l, i) => (
            <Text key={`l${i}`} wrap="truncate-end">
              {l || ' '}
            </Text>
          ))}
        </Box>
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
