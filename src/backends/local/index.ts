export { LocalBackend, localNodes } from './local-backend.js';
export { localKind } from './kind.js';
