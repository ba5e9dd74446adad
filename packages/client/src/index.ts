// canon-client's public entry point: what `import … from 'canon-client'` gives (DESIGN §7 "Client (contract)").
export { CanonError } from './errors.js';
export type { ErrorObject } from './errors.js';
