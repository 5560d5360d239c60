export { LocalBackend, LOCAL_CAPABILITIES, localNodes } from './local-backend.js';
