import { Resvg } from '@resvg/resvg-js';
import { describe, expect, it } from 'vitest';
import { renderPng, renderSvg, resolveFontFiles, toDot } from '../../../src/visualize/index.js';
import { nodeText } from '../../../src/visualize/dag-view.js';
import { findFontFiles } from '../../../src/visualize/fonts.js';
import { pngZoom } from '../../../src/visualize/render.js';
import { twentyTaskView } from './fixtures.js';
import { PNG_SIGNATURE, decodePng, inkPixels } from './png-decode.js';
import { svgTexts, xmlRoot } from './xml-check.js';

const view = twentyTaskView();
const dot = toDot(view, { variables: { MODEL: 'tiny' } });
const svgPromise = renderSvg(dot);

describe('renderSvg', () => {
  it('lays the DOT export out with the WASM Graphviz into well-formed SVG', async () => {
    const svg = await svgPromise;
    expect(xmlRoot(svg)).toBe('svg');
    expect(() => new Resvg(svg)).not.toThrow();
  });

  it('contains every task label, the edge labels and the start/stop nodes', async () => {
    const texts = svgTexts(await svgPromise);
    for (const n of view.nodes) expect(texts).toContain(nodeText(n));
    for (const t of ['start', 'stop', 'Ready', 'Completed', 'client', 'bench', 'MODEL = tiny'])
      expect(texts).toContain(t);
  });

  it('rejects DOT that Graphviz cannot parse', async () => {
    await expect(renderSvg('digraph { a -> ; }')).rejects.toThrow();
  });
});

describe('renderPng', () => {
  it('writes a PNG with positive IHDR dimensions, scaled above the SVG size', async () => {
    const svg = await svgPromise;
    const png = await renderPng(svg);
    expect(png.subarray(0, 8).equals(PNG_SIGNATURE)).toBe(true);
    expect(png.toString('latin1', 12, 16)).toBe('IHDR');
    const width = png.readUInt32BE(16);
    const height = png.readUInt32BE(20);
    expect(width).toBeGreaterThan(new Resvg(svg).width);
    expect(height).toBeGreaterThan(0);
  });

  it('decodes (test helper) to exactly the pixels resvg rendered', async () => {
    const r = new Resvg(await svgPromise, { background: 'white' }).render();
    const img = decodePng(r.asPng());
    expect([img.width, img.height]).toEqual([r.width, r.height]);
    expect(img.rgba.equals(r.pixels)).toBe(true);
  });

  it('has a white background', async () => {
    const img = decodePng(await renderPng(await svgPromise, { scale: 1 }));
    expect([...img.rgba.subarray(0, 4)]).toEqual([255, 255, 255, 255]);
    const last = img.rgba.length - 4;
    expect([...img.rgba.subarray(last, last + 4)]).toEqual([255, 255, 255, 255]);
  });

  // Needs a font: the system's (fonts-dejavu-core on Debian), the dejavu-fonts-ttf package, or SFLOW_FONT_FILE.
  it.skipIf(resolveFontFiles().length === 0)('draws the label text (not only boxes and arrows)', async () => {
    const svg = await svgPromise;
    const withText = decodePng(await renderPng(svg, { scale: 1 }));
    const noText = decodePng(
      await renderPng(svg.replace(/<text\b[^>]*>[\s\S]*?<\/text>/g, ''), { scale: 1 }),
    );
    expect(withText.width).toBe(noText.width);
    expect(withText.height).toBe(noText.height);
    const textInk = inkPixels(withText) - inkPixels(noText);
    expect(textInk).toBeGreaterThan(inkPixels(noText) * 0.2);
  });
});

describe('pngZoom', () => {
  it('scales ×2 by default and stays within width, height and pixel limits', () => {
    expect(pngZoom(800, 600)).toBe(2);
    expect(pngZoom(800, 600, { scale: 1.5 })).toBe(1.5);
    expect(800 * pngZoom(20_000, 100)).toBeLessThanOrEqual((8192 * 800) / 20_000 + 1e-9);
    expect(20_000 * pngZoom(20_000, 100)).toBeLessThanOrEqual(8192 + 1e-6);
    expect(100_000 * pngZoom(500, 100_000)).toBeLessThanOrEqual(16384 + 1e-6);
    const z = pngZoom(8000, 16000);
    expect(8000 * z * 16000 * z).toBeLessThanOrEqual(64 * 1024 * 1024 + 1);
  });
});

describe('font lookup', () => {
  it('prefers SFLOW_FONT_FILE when it names an existing file, and ignores it otherwise', () => {
    const someFile = new URL(import.meta.url).pathname;
    expect(findFontFiles({ SFLOW_FONT_FILE: someFile })).toEqual([someFile]);
    expect(findFontFiles({ SFLOW_FONT_FILE: '/nonexistent/font.ttf' })).toEqual(findFontFiles({}));
  });

  it('returns font files only', () => {
    for (const f of findFontFiles({})) expect(f).toMatch(/\.(ttf|otf|ttc)$/i);
  });
});
