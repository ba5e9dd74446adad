// Start-up writes tried again while the store is busy (src/runtime/while-busy.ts), and a start on a SQLite file another process holds locked past the busy timeout.
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { after, before, describe, it } from 'node:test';
import { commerce } from '../../../examples/commerce/index.js';
import { resolveConfig } from '../../../src/config/config.js';
import { createRuntime } from '../../../src/runtime/compose.js';
import { whileBusy } from '../../../src/runtime/while-busy.js';
import { BUSY_TIMEOUT_MS } from '../../../src/store/sqlite/sqlite-store.js';
import { StoreBusy } from '../../../src/store/types.js';
import { ADMIN_KEY, TEST_PASSWORD_COST } from '../../support/harness.js';

describe('whileBusy', () => {
  it('tries a step refused as busy again until it succeeds', async () => {
    let tries = 0;
    const value = await whileBusy(async () => {
      if (++tries < 3) throw new StoreBusy(1, new Error('locked'));
      return 'done';
    });
    assert.equal(value, 'done');
    assert.equal(tries, 3);
  });

  it('throws any other error at once', async () => {
    let tries = 0;
    await assert.rejects(
      whileBusy(async () => {
        tries++;
        throw new Error('not busy');
      }),
      /not busy/,
    );
    assert.equal(tries, 1);
  });

  it('gives up with the last StoreBusy once its budget has passed', async () => {
    let tries = 0;
    const started = performance.now();
    await assert.rejects(
      whileBusy(async () => {
        tries++;
        throw new StoreBusy(tries, new Error('locked'));
      }, 200),
      (err: unknown) => err instanceof StoreBusy && err.attempts === tries,
    );
    const took = performance.now() - started;
    assert.ok(tries > 1 && took >= 200 && took < 2_000, `${tries} tries in ${Math.round(took)} ms`);
  });
});

describe('a start while another process holds the SQLite file’s write lock past the busy timeout', () => {
  let dir = '';
  before(() => {
    dir = mkdtempSync(path.join(tmpdir(), 'canon-start-busy-'));
  });
  after(() => {
    if (dir) rmSync(dir, { recursive: true, force: true });
  });

  it(`waits for the lock (the migration refused after ${BUSY_TIMEOUT_MS} ms is tried again) and starts, its admin key written`, async () => {
    const file = path.join(dir, 'canon.sqlite');
    const holdMs = BUSY_TIMEOUT_MS + 1_500;
    // Another process: its own connection holds the write lock, then commits.
    const holder = spawn(
      process.execPath,
      [
        '-e',
        // The binding CI's Node 24 suite loads (src/store/sqlite/native-handles.ts), when set.
        `const binding = process.env.BETTER_SQLITE3_NATIVE_BINDING || undefined;
         const db = new (require('better-sqlite3'))(process.argv[1], binding ? { nativeBinding: binding } : {});
         db.exec('PRAGMA journal_mode = WAL'); db.exec('BEGIN IMMEDIATE'); console.log('locked');
         setTimeout(() => { db.exec('COMMIT'); db.close(); }, ${holdMs});`,
        file,
      ],
      { stdio: ['ignore', 'pipe', 'inherit'] },
    );
    const exited = new Promise((resolve) => holder.on('exit', resolve));
    try {
      await new Promise<void>((resolve, reject) => {
        holder.stdout.on('data', (d: Buffer) => (String(d).includes('locked') ? resolve() : undefined));
        holder.on('exit', (code) => reject(new Error(`the holder exited (${code}) before locking`)));
      });
      const started = performance.now();
      const runtime = await createRuntime(
        resolveConfig({ databaseUrl: `sqlite:${file}`, adminApiKey: ADMIN_KEY, seed: false, secret: 'start-busy', passwordCost: TEST_PASSWORD_COST, logLevel: 'silent' }),
        { logger: false, appDef: commerce },
      );
      try {
        assert.ok(performance.now() - started >= BUSY_TIMEOUT_MS, 'the start waited past the busy timeout');
        const res = await runtime.app.inject({ method: 'GET', url: '/v2/api-keys?limit=10', headers: { 'x-api-key': ADMIN_KEY } });
        assert.equal(res.statusCode, 200, res.body);
      } finally {
        await runtime.close();
      }
    } finally {
      holder.kill();
      await exited;
    }
  });
});
