/**
 * The sessions of a resumed run (`sflow run --resume`): when each ran, how it ended, what it
 * reused and what it ran again. Shown only when the run has more than one session.
 */
import { chip, clip, dur, esc, stamp } from './html.js';
import type { ReportModel } from './model.js';

export function sessionsHtml(m: ReportModel): string {
  const rows = m.sessions.map((s) => {
    const ran = m.tasks.reduce((n, t) => n + t.attempts.filter((a) => a.session === s.n).length, 0);
    const what =
      s.rerun === undefined
        ? 'the first run'
        : `resumed${s.forced ? ' with --force (changed recipe)' : ''}: ${s.reused ?? 0} task(s) reused; ran again ${clip(s.rerun.join(', '), 400)}`;
    return `<tr data-session="${s.n}"><td data-v="${s.n}">${s.n}</td><td>${esc(stamp(s.startedAt))}</td><td>${s.endedAt !== undefined ? esc(dur(s.endedAt - s.startedAt)) : '-'}</td><td>${s.status ? chip(s.status) : '<span class="note">did not finish</span>'}</td><td data-v="${ran}">${ran}</td><td class="detail">${esc(what)}</td></tr>`;
  });
  return `<table class="sessions"><thead><tr><th>session</th><th>started</th><th>took</th><th>status</th><th>attempts</th><th>what</th></tr></thead><tbody>${rows.join('')}</tbody></table><p class="note">Bars of later sessions follow the ↺ rule in the timeline; reused tasks are marked ↺ and keep their earlier attempts and results.</p>`;
}
