// One HTTP request over a socket with its answer as it came: every header (lower-case, one value each) and the body's bytes, undecoded (node:http sends exactly the headers given and decodes nothing).
import { request } from 'node:http';

export interface RawAnswer {
  status: number;
  headers: Record<string, string>;
  /** The bytes as sent, not decoded. */
  bytes: Buffer;
}

/** `url` asked with `method` and exactly `headers` (and `payload`); fails when no answer comes within `timeoutMs`. */
export function rawRequest(url: string, method: string, headers: Record<string, string>, payload?: string, timeoutMs = 10_000): Promise<RawAnswer> {
  return new Promise((resolve, reject) => {
    const req = request(url, { method, headers }, (res) => {
      const chunks: Buffer[] = [];
      res.on('data', (c: Buffer) => chunks.push(c));
      res.on('end', () => {
        const flat: Record<string, string> = {};
        for (const [k, v] of Object.entries(res.headers)) if (v !== undefined) flat[k] = Array.isArray(v) ? v.join(', ') : v;
        resolve({ status: res.statusCode!, headers: flat, bytes: Buffer.concat(chunks) });
      });
      res.on('error', reject);
    });
    req.on('error', reject);
    req.setTimeout(timeoutMs, () => req.destroy(new Error(`${method} ${url}: no answer in ${timeoutMs / 1000} s`)));
    req.end(payload);
  });
}
