// The two functions of Node's crypto that src/webhooks/hmac-node.ts uses, declared for this package's own build (tsconfig.json: DOM types, no Node types, so nothing else Node-only compiles in).
declare module 'node:crypto' {
  export interface KeyObject {
    readonly type: 'secret' | 'public' | 'private';
  }
  interface Hmac {
    update(data: Uint8Array): Hmac;
    digest(encoding: 'base64'): string;
  }
  export function createSecretKey(key: Uint8Array): KeyObject;
  export function createHmac(algorithm: 'sha256', key: KeyObject): Hmac;
}
