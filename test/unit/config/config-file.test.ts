// DESIGN §2: the configuration file (canon.config.ts|js|json): found in the working directory, every environment setting under its key, checked with the file and key named, beneath the environment and flags.
import assert from 'node:assert/strict';
import { mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { after, before, describe, it } from 'node:test';
import { DEFAULTS, fromEnv, resolveConfig, type Config } from '../../../src/config/config.js';
import { fileKey, fileKeys, loadConfigFile, withFile } from '../../../src/config/config-file.js';

const ROOT = fileURLToPath(new URL('../../../../', import.meta.url));

describe('the configuration file', () => {
  let root = '';
  let n = 0;
  /** A fresh working directory holding `files`. */
  const folder = (files: Record<string, string>): string => {
    const dir = join(root, `d${n++}`);
    mkdirSync(dir);
    for (const [name, text] of Object.entries(files)) writeFileSync(join(dir, name), text);
    return dir;
  };
  /** The config `canon` would run with in `dir`, given the environment and flags. */
  const configIn = async (dir: string, env: NodeJS.ProcessEnv = {}, flags: Partial<Config> = {}, explicit?: string): Promise<Config> =>
    resolveConfig(fromEnv(withFile(await loadConfigFile(dir, explicit), env)), flags);
  const refused = async (dir: string, message: RegExp, explicit?: string): Promise<void> => {
    await assert.rejects(loadConfigFile(dir, explicit), (err: Error) => {
      assert.match(err.message, message);
      return true;
    });
  };

  before(() => {
    root = mkdtempSync(join(tmpdir(), 'canon-config-file-'));
  });
  after(() => {
    if (root) rmSync(root, { recursive: true, force: true });
  });

  it('with no file in the directory, the defaults and the environment hold as before', async () => {
    const dir = folder({});
    assert.equal(await loadConfigFile(dir, undefined), undefined);
    const config = await configIn(dir, { PORT: '4000' });
    assert.equal(config.port, 4000);
    assert.equal(config.versioning, DEFAULTS.versioning);
  });

  it('canon.config.json sets any setting under its key: numbers, strings, switches and lists', async () => {
    const dir = folder({
      'canon.config.json': JSON.stringify({
        port: 8080,
        host: '0.0.0.0',
        databaseUrl: 'sqlite::memory:',
        app: './app.js',
        versioning: 'query',
        rateLimitPerIp: '30/60',
        rateLimit: true,
        accessLog: true,
        seed: false,
        webhookAllowPrivate: true,
        trustedOrigins: ['https://app.example.com', 'https://admin.example.com'],
        webhookRetrySchedule: [0, 5, 60],
      }),
    });
    const file = await loadConfigFile(dir, undefined);
    assert.equal(file?.path, 'canon.config.json');
    const config = await configIn(dir);
    assert.equal(config.port, 8080);
    assert.equal(config.host, '0.0.0.0');
    assert.equal(config.databaseUrl, 'sqlite::memory:');
    assert.equal(config.configModule, './app.js');
    assert.equal(config.versioning, 'query');
    assert.deepEqual(config.rateLimits.perIp, { limit: 30, periodSeconds: 60 });
    assert.equal(config.rateLimits.enabled, true);
    assert.equal(config.accessLog, true);
    assert.equal(config.seed, false);
    assert.equal(config.webhookAllowPrivate, true);
    assert.deepEqual(config.trustedOrigins, ['https://app.example.com', 'https://admin.example.com']);
    assert.equal(config.webhookRetrySchedule, '0,5,60');
  });

  it('the environment wins over the file, flags over both; an empty variable does not hide the file', async () => {
    const dir = folder({ 'canon.config.json': JSON.stringify({ port: 8080, versioning: 'query', host: '0.0.0.0', rateLimitPerIp: '30/60' }) });
    const config = await configIn(dir, { PORT: '9090', CANON_VERSIONING: 'header', HOST: '', CANON_RATE_LIMIT_PER_PRINCIPAL: '50/60' }, { versioning: 'date' });
    assert.equal(config.port, 9090, 'environment over file');
    assert.equal(config.versioning, 'date', 'flag over environment and file');
    assert.equal(config.host, '0.0.0.0', 'HOST= (empty) is unset');
    // Settings that fromEnv folds into one object (rateLimits) merge per variable, not per object.
    assert.deepEqual(config.rateLimits.perIp, { limit: 30, periodSeconds: 60 });
    assert.deepEqual(config.rateLimits.perPrincipal, { limit: 50, periodSeconds: 60 });
  });

  it('canon.config.js: an ES module default export, or CommonJS module.exports', async () => {
    const esm = folder({ 'package.json': '{"type":"module"}', 'canon.config.js': 'export default { port: 8081, versioning: "header" };\n' });
    assert.equal((await configIn(esm)).port, 8081);
    assert.equal((await configIn(esm)).versioning, 'header');
    const cjs = folder({ 'package.json': '{"type":"commonjs"}', 'canon.config.js': 'module.exports = { port: 8082, accessLog: "on" };\n' });
    assert.equal((await configIn(cjs)).port, 8082);
    assert.equal((await configIn(cjs)).accessLog, true);
    const named = folder({ 'package.json': '{"type":"module"}', 'canon.config.js': 'export const port = 1;\n' });
    await refused(named, /^canon\.config\.js: export the settings as the default export/);
    const broken = folder({ 'package.json': '{"type":"module"}', 'canon.config.js': 'export default { port: ;\n' });
    await refused(broken, /^canon\.config\.js: /);
  });

  it('canon.config.ts: loaded where Node strips types itself, else a clear error saying what to do', async () => {
    const dir = folder({ 'package.json': '{"type":"module"}', 'canon.config.ts': 'const port: number = 8083;\nexport default { port };\n' });
    const typescript = (process.features as { typescript?: string | false }).typescript;
    if (typescript) {
      assert.equal((await configIn(dir)).port, 8083);
    } else {
      await refused(
        dir,
        new RegExp(
          `^canon\\.config\\.ts: Node\\.js ${process.version.replace(/\./g, '\\.')} cannot load TypeScript files; write canon\\.config\\.js or canon\\.config\\.json instead`,
        ),
      );
    }
  });

  it('refuses an unknown key, naming the file and the key, with the key meant when it is close or written as its variable', async () => {
    await refused(folder({ 'canon.config.json': '{"prot": 8080}' }), /^canon\.config\.json: unknown setting "prot" \(did you mean "port"\?\)/);
    await refused(folder({ 'canon.config.json': '{"CANON_VERSIONING": "query"}' }), /^canon\.config\.json: unknown setting "CANON_VERSIONING" \(did you mean "versioning"\?\)/);
    await refused(folder({ 'canon.config.json': '{"database_url": "sqlite::memory:"}' }), /unknown setting "database_url" \(did you mean "databaseUrl"\?\)/);
    await refused(folder({ 'canon.config.json': '{"flux": 1}' }), /^canon\.config\.json: unknown setting "flux" \(docs\/configuration\.md lists them\)$/);
    await refused(folder({ 'canon.config.json': '{"__proto__": {"port": 1}}' }), /unknown setting "__proto__"/);
  });

  it('refuses a bad value, naming the file and the key, with the same check the environment has', async () => {
    await refused(
      folder({ 'canon.config.json': '{"versioning": "cookie"}' }),
      /^canon\.config\.json: "versioning" must be one of path, query, header, media-type, date, got "cookie"$/,
    );
    await refused(folder({ 'canon.config.json': '{"port": -1}' }), /^canon\.config\.json: "port" must be a non-negative integer, got "-1"$/);
    await refused(folder({ 'canon.config.json': '{"port": "eighty"}' }), /"port" must be a non-negative integer/);
    await refused(folder({ 'canon.config.json': '{"accessLog": "yes"}' }), /^canon\.config\.json: "accessLog" must be on or off, got "yes"$/);
    await refused(folder({ 'canon.config.json': '{"rateLimitPerIp": "lots"}' }), /^canon\.config\.json: .*"rateLimitPerIp"/);
    await refused(folder({ 'canon.config.json': '{"trustedOrigins": ["https://a.example/path"]}' }), /^canon\.config\.json: .*"trustedOrigins".*is not an origin/);
    await refused(folder({ 'canon.config.json': '{"port": null}' }), /^canon\.config\.json: "port" must be a string, a number, true or false, or a list of them$/);
    await refused(folder({ 'canon.config.json': '{"rateLimits": {"enabled": false}}' }), /unknown setting "rateLimits"/);
    await refused(folder({ 'canon.config.json': '{"host": ""}' }), /^canon\.config\.json: "host" is empty; leave it out to keep the default$/);
    // A TLS certificate alone is not this key's fault: its key may come from the environment.
    const tls = folder({ 'canon.config.json': '{"tlsCert": "cert.pem"}' });
    assert.equal((await configIn(tls, { CANON_TLS_KEY: 'key.pem' })).tls?.certFile, 'cert.pem');
  });

  it('refuses a file that is not an object of settings, or not JSON', async () => {
    await refused(folder({ 'canon.config.json': '[1, 2]' }), /^canon\.config\.json: the settings must be an object/);
    await refused(folder({ 'canon.config.json': '{"port": 80,}' }), /^canon\.config\.json: not valid JSON/);
  });

  it('two files in one directory are an error, not a silent choice', async () => {
    await refused(
      folder({ 'canon.config.js': 'export default {};', 'canon.config.json': '{}' }),
      /canon\.config\.js and canon\.config\.json are both in .*: keep one configuration file/,
    );
  });

  it('an explicit file (--config-file, CANON_CONFIG_FILE) replaces the lookup; a missing one is an error', async () => {
    const dir = folder({ 'canon.config.json': '{"port": 1111}', 'staging.json': '{"port": 2222}' });
    assert.equal((await configIn(dir, {}, {}, 'staging.json')).port, 2222);
    assert.equal((await loadConfigFile(dir, 'staging.json'))?.path, 'staging.json');
    await refused(dir, /^configuration file nope\.json: no such file$/, 'nope.json');
    await refused(folder({ 'settings.yaml': 'port: 1' }), /^settings\.yaml: a configuration file is \.json, \.js \(\.mjs, \.cjs\) or \.ts$/, 'settings.yaml');
  });

  it('every environment variable of docs/configuration.md has its key, and the keys are the variables in camelCase', () => {
    assert.equal(fileKey('PORT'), 'port');
    assert.equal(fileKey('DATABASE_URL'), 'databaseUrl');
    assert.equal(fileKey('CANON_RATE_LIMIT_IPV6_PREFIX'), 'rateLimitIpv6Prefix');
    assert.equal(fileKey('CANON_CONFIG'), 'app');
    const doc = readFileSync(join(ROOT, 'docs/configuration.md'), 'utf8');
    const documented = new Set<string>();
    for (const line of doc.split('\n').filter((l) => l.startsWith('| `'))) {
      const firstCell = line.split('|')[1]!;
      for (const [, name] of firstCell.matchAll(/`([A-Z][A-Z0-9_]+)(?:=[^`]*)?`/g)) documented.add(name!);
    }
    // Read by the reference app's payment provider at each payment, not settings of the server.
    documented.delete('CANON_PAYMENT_DELAY_MS');
    documented.delete('CANON_PAYMENT_FAILURE_RATE');
    // The file cannot name itself.
    documented.delete('CANON_CONFIG_FILE');
    // Which SQLite binary to load: the machine's, read by src/store/sqlite/native-handles.ts from the environment only.
    documented.delete('BETTER_SQLITE3_NATIVE_BINDING');
    assert.ok(documented.size > 50, `the table was read (${documented.size} variables)`);
    const variables = new Set(fileKeys().values());
    assert.deepEqual(
      [...documented].filter((name) => !variables.has(name)),
      [],
      'documented variables the file does not take',
    );
    assert.deepEqual(
      [...variables].filter((name) => !documented.has(name)),
      [],
      'file keys docs/configuration.md does not document',
    );
  });
});
