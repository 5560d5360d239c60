/**
 * Image rendering without a system Graphviz: DOT → SVG with the Graphviz WASM build
 * (@hpcc-js/wasm-graphviz), SVG → PNG with resvg. Both libraries are imported lazily so that
 * commands that never draw an image do not pay for loading them.
 */
import type { Graphviz } from '@hpcc-js/wasm-graphviz';
import type { ResvgRenderOptions } from '@resvg/resvg-js';
import { DOT_FONT } from './dot.js';
import { resolveFontFiles } from './fonts.js';

/** what the SVG asks for: the DOT font, then fonts of similar width, then any sans-serif */
const SVG_FONTS = `${DOT_FONT},Verdana,Helvetica,Arial,sans-serif`;

let graphviz: Promise<Graphviz> | undefined;

function loadGraphviz(): Promise<Graphviz> {
  graphviz ??= import('@hpcc-js/wasm-graphviz')
    .then((m) => m.Graphviz.load())
    .catch((e: unknown) => {
      graphviz = undefined;
      throw e;
    });
  return graphviz;
}

/** Lay out DOT source with the `dot` engine and return the SVG text. Throws on invalid DOT. */
export async function renderSvg(dot: string): Promise<string> {
  const gv = await loadGraphviz();
  return gv.dot(dot, 'svg').replaceAll(`font-family="${DOT_FONT}"`, `font-family="${SVG_FONTS}"`);
}

export interface PngOptions {
  /** preferred scale over the SVG's own size (default 2, for crisp text) */
  scale?: number;
  /** upper bounds on the output size in pixels (defaults 8192 × 16384, 64 Mpx in all) */
  maxWidth?: number;
  maxHeight?: number;
  /** font files to use instead of the ones found by resolveFontFiles() */
  fontFiles?: string[];
}

const MAX_PIXELS = 64 * 1024 * 1024;

export function pngRenderOptions(opts: PngOptions = {}): ResvgRenderOptions {
  const fontFiles = opts.fontFiles ?? resolveFontFiles();
  return {
    background: 'white',
    logLevel: 'off',
    font:
      fontFiles.length > 0
        ? { loadSystemFonts: false, fontFiles, defaultFontSize: 14 }
        : { loadSystemFonts: true, defaultFontSize: 14 },
  };
}

/** Render SVG text to a PNG (white background), scaled for readability within sane pixel bounds. */
export async function renderPng(svg: string, opts: PngOptions = {}): Promise<Buffer> {
  const { Resvg, renderAsync } = await import('@resvg/resvg-js');
  const base = pngRenderOptions(opts);
  const probe = new Resvg(svg, base);
  const zoom = pngZoom(probe.width, probe.height, opts);
  const image = await renderAsync(svg, { ...base, fitTo: { mode: 'zoom', value: zoom } });
  return image.asPng();
}

/** The zoom factor: `scale` unless that would exceed the width/height/pixel limits. */
export function pngZoom(width: number, height: number, opts: PngOptions = {}): number {
  const w = Math.max(1, width);
  const h = Math.max(1, height);
  let zoom = opts.scale ?? 2;
  zoom = Math.min(zoom, (opts.maxWidth ?? 8192) / w, (opts.maxHeight ?? 16384) / h);
  zoom = Math.min(zoom, Math.sqrt(MAX_PIXELS / (w * h)));
  return Math.max(zoom, 1e-3);
}
