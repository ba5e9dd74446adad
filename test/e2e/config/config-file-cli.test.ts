// DESIGN §2 through the `canon` command: canon.config.json in the working directory configures the server, the environment and --versioning win over it, and a bad file or flag is one line on stderr and exit 1.
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { after, before, describe, it } from 'node:test';
import { startCanon, type CanonProcess } from '../../support/processes.js';

const CLI = fileURLToPath(new URL('../../../src/cli/main.js', import.meta.url));
const ADMIN = 'ck_config_file_admin_key_0123456789';

describe('canon with a configuration file', () => {
  let dir = '';
  const running: CanonProcess[] = [];

  /** `canon serve` in `cwd` with `args` and this environment; it must fail at once. */
  const failing = (cwd: string, args: string[], env: NodeJS.ProcessEnv = {}): { status: number | null; stderr: string } => {
    const result = spawnSync(process.execPath, [CLI, 'serve', '--port', '0', ...args], {
      cwd,
      encoding: 'utf8',
      timeout: 20_000,
      env: { ...process.env, CANON_LOG_LEVEL: 'warn', ...env },
    });
    assert.equal(result.error, undefined);
    return { status: result.status, stderr: result.stderr };
  };

  before(() => {
    dir = mkdtempSync(join(tmpdir(), 'canon-config-cli-'));
    writeFileSync(join(dir, 'canon.config.json'), JSON.stringify({ databaseUrl: 'sqlite::memory:', adminApiKey: ADMIN, versioning: 'query', seed: false }));
  });
  after(async () => {
    await Promise.all(running.map((p) => p.stop()));
    if (dir) rmSync(dir, { recursive: true, force: true });
  });

  it('serves as the file in its working directory says: its database, its admin key, query versioning', async () => {
    const canon = await startCanon({}, [], { cwd: dir });
    running.push(canon);
    const unversioned = await fetch(`${canon.url}/products?version=1`, { headers: { 'x-api-key': ADMIN } });
    assert.equal(unversioned.status, 200, await unversioned.text());
    assert.ok(unversioned.headers.get('deprecation'), 'version 1 chosen by the query');
    const pathStyle = await fetch(`${canon.url}/v2/products`, { headers: { 'x-api-key': ADMIN } });
    assert.equal(pathStyle.status, 404, 'under query versioning the path names no version');
  });

  it('--versioning wins over the environment, which wins over the file', async () => {
    const canon = await startCanon({ CANON_VERSIONING: 'media-type' }, ['--versioning', 'header'], { cwd: dir });
    running.push(canon);
    const v1 = await fetch(`${canon.url}/products`, { headers: { 'x-api-key': ADMIN, 'x-api-version': '1' } });
    assert.equal(v1.status, 200, await v1.text());
    assert.match(v1.headers.get('vary') ?? '', /X-API-Version/i);
    assert.ok(v1.headers.get('deprecation'), 'version 1 chosen by the header');
  });

  it('an unknown key or a bad value in the file: one line naming the file and the key, exit 1, no stack trace', () => {
    const bad = mkdtempSync(join(dir, 'bad-'));
    writeFileSync(join(bad, 'canon.config.json'), '{"prot": 8080}');
    assert.deepEqual(failing(bad, []), { status: 1, stderr: 'canon: canon.config.json: unknown setting "prot" (did you mean "port"?) (docs/configuration.md lists them)\n' });
    writeFileSync(join(bad, 'canon.config.json'), '{"versioning": "cookie"}');
    assert.deepEqual(failing(bad, []), { status: 1, stderr: 'canon: canon.config.json: "versioning" must be one of path, query, header, media-type, date, got "cookie"\n' });
  });

  it('--config-file and CANON_CONFIG_FILE name another file; a missing one is an error', () => {
    assert.deepEqual(failing(dir, ['--config-file', 'missing.json']), { status: 1, stderr: 'canon: configuration file missing.json: no such file\n' });
    assert.deepEqual(failing(dir, [], { CANON_CONFIG_FILE: 'other.json' }), { status: 1, stderr: 'canon: configuration file other.json: no such file\n' });
  });

  it('a bad --versioning is one line and exit 1', () => {
    assert.deepEqual(failing(dir, ['--versioning', 'cookie']), { status: 1, stderr: 'canon: --versioning must be one of path, query, header, media-type, date, got "cookie"\n' });
  });
});
