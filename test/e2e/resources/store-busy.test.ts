// A write whose SQLite file another process holds locked past the busy timeout: 503 SERVICE_UNAVAILABLE with Retry-After in the uniform error body, and nothing written.
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { after, before, describe, it } from 'node:test';
import type Database from 'better-sqlite3';
import { openDatabase } from '../../../src/store/sqlite/native-handles.js';
import { BUSY_TIMEOUT_MS } from '../../../src/store/sqlite/sqlite-store.js';
import { errorShape, startServer, type TestServer } from '../../support/harness.js';

describe('a write while another process holds the SQLite file’s write lock (listen)', () => {
  let dir = '';
  let server: TestServer;
  let other: Database.Database;
  before(async () => {
    dir = mkdtempSync(path.join(tmpdir(), 'canon-store-busy-'));
    const file = path.join(dir, 'canon.sqlite');
    server = await startServer('listen', { databaseUrl: `sqlite:${file}` });
    other = openDatabase(file);
  });
  after(async () => {
    other?.close();
    await server?.close();
    if (dir) rmSync(dir, { recursive: true, force: true });
  });

  it(`is 503 SERVICE_UNAVAILABLE with Retry-After after the busy timeout (${BUSY_TIMEOUT_MS} ms), not a 500; the next write after the lock is let go is 201`, async () => {
    other.exec('BEGIN IMMEDIATE');
    let refused;
    let health;
    const started = performance.now();
    try {
      const posted = server.request('POST', '/v2/products', { body: { name: 'Locked out', price: { amount: 100, currency: 'EUR' } } });
      // The wait is timers, not SQLite's busy handler sleeping in the event loop: the process answers meanwhile.
      await new Promise((resolve) => setTimeout(resolve, 200));
      health = await server.request('GET', '/healthz', { key: null });
      health = { status: health.status, at: performance.now() - started };
      refused = await posted;
    } finally {
      other.exec('COMMIT');
    }
    const waited = performance.now() - started;
    assert.equal(health.status, 200);
    assert.ok(health.at < BUSY_TIMEOUT_MS - 1_000, `/healthz answered after ${Math.round(health.at)} ms, while the write waited`);
    // From the write's arrival: not once per group queued before it (the embedded worker's polls write too).
    assert.ok(waited < BUSY_TIMEOUT_MS + 2_000, `refused after ${Math.round(waited)} ms`);
    assert.equal(refused.status, 503, refused.text);
    assert.equal(errorShape(refused).code, 'SERVICE_UNAVAILABLE');
    assert.equal(refused.headers['retry-after'], '1');
    const list = await server.request('GET', '/v2/products?limit=100');
    assert.equal(list.status, 200, list.text);
    assert.ok(!list.body.data.some((p: { name: string }) => p.name === 'Locked out'), 'nothing was written');
    const created = await server.request('POST', '/v2/products', { body: { name: 'Let in', price: { amount: 100, currency: 'EUR' } } });
    assert.equal(created.status, 201, created.text);
  });
});
