/**
 * The report's "Hardware monitor" section: one uPlot chart per monitor chart (GPU utilisation and
 * memory per GPU, CPU, memory, network), the run's task events drawn over each as markers, and
 * where the samples came from; GPU collection errors are listed instead of being silently absent.
 */
import { esc } from './html.js';
import type { Marker } from './markers.js';
import type { MonitorView } from './monitor.js';
import type { PageChart } from './page-chart.js';

/**
 * `range`: the run's span, epoch seconds. The charts' x is seconds from the run's start, like the
 * timeline and the concurrency chart, and the axis covers the whole run: a series with a single
 * sample is drawn at its time within the run's span.
 */
export function monitorSection(
  views: MonitorView[],
  markers: Marker[],
  range: [number, number],
): { html: string; charts: PageChart[] } {
  const t0 = range[0];
  const since = (t: number) => Math.round((t - t0) * 1000) / 1000;
  const shifted: Marker[] = markers.map(([t, kind, label]) => [since(t), kind, label]);
  const span: [number, number] = [0, since(range[1])];
  const charts: PageChart[] = [];
  const parts: string[] = [];
  views.forEach((v, i) => {
    if (views.length > 1 || v.name !== 'workflow')
      parts.push(`<h3>${v.name === 'workflow' ? 'Whole run' : `Task ${esc(v.name)}`}</h3>`);
    for (const e of v.errors) parts.push(`<p class="note bad">GPU samples missing: ${esc(e)}</p>`);
    v.charts.forEach((c, k) => {
      const id = `chart-monitor-${i}-${k}`;
      charts.push({
        id,
        title: c.title,
        unit: c.unit,
        gaps: true,
        x: c.x.map(since),
        series: c.series,
        markers: shifted,
        range: span,
      });
      parts.push(`<div class="chart monitor" id="${id}" data-title="${esc(c.title)}"></div>`);
    });
    parts.push(
      `<p class="note">${v.samples} samples from ${v.hosts.length} host${v.hosts.length === 1 ? '' : 's'} (${esc(v.hosts.join(', '))}), read from <code>${esc(v.file)}</code>; rules mark task events (dotted: start, ready; solid: done, failed, cancelled).</p>`,
    );
  });
  return { html: parts.join(''), charts };
}
