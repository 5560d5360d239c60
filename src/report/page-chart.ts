/** The chart shape the page script draws: its own file, so page.ts and monitor-section.ts import no cycle. */
import type { Marker } from './markers.js';

/** A chart for the page script: `x` plus one values array per series. */
export interface PageChart {
  id: string;
  title: string;
  unit?: string;
  time?: boolean;
  stepped?: boolean;
  /** draw lines across missing samples */
  gaps?: boolean;
  x: number[];
  series: Array<{ label: string; values: Array<number | null>; color?: string }>;
  /** task events as vertical rules */
  markers?: Marker[];
  /** x range the axis covers at least (the run's span), beyond the samples */
  range?: [number, number];
}
