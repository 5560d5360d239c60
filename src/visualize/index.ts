export type { DagEdge, DagNode, DagView } from './dag-view.js';
export { toDot, dotQuote, type DotOptions } from './dot.js';
export { toMermaid, type MermaidOptions } from './mermaid.js';
export { toAscii, type AsciiOptions } from './ascii.js';
export { renderSvg, renderPng, type PngOptions } from './render.js';
export { resolveFontFiles } from './fonts.js';
export { collapseReplicaGroups } from './collapse.js';
