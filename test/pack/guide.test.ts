// Issue 14.7: docs/guide.md proved from outside: the packed package installed into an empty folder, the guide's files written there as it shows them, the server started with its command, every request of its walk answered as it says.
import assert from 'node:assert/strict';
import SwaggerParser from '@apidevtools/swagger-parser';
import { spawn, spawnSync, type ChildProcess, type SpawnSyncReturns } from 'node:child_process';
import { copyFileSync, existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { after, before, describe, it } from 'node:test';
import { reapOnExit } from '../support/reaper.js';

/** The project root (this file runs as dist/test/pack/guide.test.js). */
const ROOT = fileURLToPath(new URL('../../../', import.meta.url));
const GUIDE = readFileSync(join(ROOT, 'docs/guide.md'), 'utf8');
const PKG = JSON.parse(readFileSync(join(ROOT, 'package.json'), 'utf8')) as { name: string; exports: Record<string, { types?: string }> };
/** The walk: the guide's sh blocks from this marker to the next heading run in order. */
const WALK_MARKER = '<!-- test/pack/guide.test.ts runs every command';

interface Block {
  lang: string;
  /** The file the block is, from its info string (```js app.js). */
  file: string | undefined;
  body: string;
  offset: number;
}

function blocksOf(markdown: string): Block[] {
  const re = /^```([\w-]*)(?:[ \t]+(\S+))?[ \t]*\n([\s\S]*?)^```[ \t]*$/gm;
  return [...markdown.matchAll(re)].map((m) => ({ lang: m[1]!, file: m[2], body: m[3]!, offset: m.index }));
}

/** npm's own lifecycle variables (npm test sets them) would point a child npm at this project: they are left out. */
function cleanEnv(drop: RegExp): NodeJS.ProcessEnv {
  return Object.fromEntries(Object.entries(process.env).filter(([k]) => !drop.test(k) && !/^npm_/i.test(k)));
}

function run(command: string, args: string[], cwd: string, timeout: number): SpawnSyncReturns<string> {
  const result = spawnSync(command, args, { cwd, encoding: 'utf8', timeout, env: cleanEnv(/^$/), maxBuffer: 64 * 1024 * 1024 });
  if (result.error) throw new Error(`${command} ${args.join(' ')}: ${result.error.message}`);
  if (result.status !== 0) throw new Error(`${command} ${args.join(' ')} exited with ${result.status}:\n${result.stdout}\n${result.stderr}`);
  return result;
}

// ---- A small interpreter for the walk's shell: assignments, `$(cat FILE)`, `curl … [| field NAME]`, and answers in `# → STATUS JSON [without a, b]` comments.

interface Expectation {
  status: number;
  body: unknown;
  without: string[];
  text: string;
}

interface Entry {
  line: string;
  expect: Expectation | undefined;
}

const PIPE = Symbol('|');
type Word = string | typeof PIPE;

/** Logical lines (`\` continuations joined), each with the answer comment that follows it. */
function entriesOf(script: string): Entry[] {
  const entries: Entry[] = [];
  for (const line of script
    .replace(/\\\n\s*/g, ' ')
    .split('\n')
    .map((l) => l.trim())) {
    if (line === '') continue;
    const answer = /^# → (\d{3})(?:\s+([{[].*[}\]]))?(?:\s+without\s+(.+))?$/.exec(line);
    if (answer) {
      const last = entries.at(-1);
      assert.ok(last && !last.expect, `an answer comment follows no command: ${line}`);
      last.expect = { status: Number(answer[1]), body: answer[2] === undefined ? undefined : JSON.parse(answer[2]), without: answer[3]?.split(/,\s*/) ?? [], text: line };
    } else if (!line.startsWith('#')) {
      entries.push({ line, expect: undefined });
    }
  }
  return entries;
}

/** The index just past the `)` that closes the `(` at `open`, skipping quoted text. */
function closingParen(text: string, open: number): number {
  let depth = 0;
  for (let i = open; i < text.length; i++) {
    const c = text[i];
    if (c === "'") i = text.indexOf("'", i + 1);
    else if (c === '"') {
      for (i++; i < text.length && text[i] !== '"'; i++) if (text[i] === '\\') i++;
    } else if (c === '(') depth++;
    else if (c === ')' && --depth === 0) return i + 1;
    if (i < 0) break;
  }
  throw new Error(`unclosed $( in ${text}`);
}

class Walk {
  readonly vars = new Map<string, string>();
  private pending: Expectation | undefined;
  private requests = 0;
  /** The JavaScript of the guide's `field` shell function, run as the reader's shell would run it. */
  private fieldScript: string | undefined;

  constructor(private readonly dir: string) {}

  async entry(entry: Entry): Promise<void> {
    this.pending = entry.expect;
    const before = this.requests;
    const fn = /^field\(\) \{ node -e '([^']*)' "\$1"; \}$/.exec(entry.line);
    const assignment = /^([A-Za-z_]\w*)=(.*)$/.exec(entry.line);
    if (fn) this.fieldScript = fn[1];
    else if (assignment) {
      const value = await this.words(assignment[2]!);
      assert.equal(value.length, 1, `one word is assigned: ${entry.line}`);
      this.vars.set(assignment[1]!, value[0] as string);
    } else if (entry.line.startsWith('curl ')) await this.pipeline(await this.words(entry.line));
    else throw new Error(`the walk has a command this test does not run: ${entry.line}`);
    assert.equal(this.requests - before, entry.expect ? 1 : 0, `each request of the walk has its answer comment, and each answer its request: ${entry.line}`);
  }

  /** Shell words: '…' literal, "…" with \ escapes, $NAME, ${NAME} and $( … ) expanded; an unquoted | is a pipe. */
  private async words(text: string): Promise<Word[]> {
    const out: Word[] = [];
    let word = '';
    let inWord = false;
    const end = (): void => {
      if (inWord) out.push(word);
      word = '';
      inWord = false;
    };
    for (let i = 0; i < text.length;) {
      const c = text[i]!;
      if (c === ' ' || c === '\t') {
        end();
        i++;
      } else if (c === '|') {
        end();
        out.push(PIPE);
        i++;
      } else if (c === "'") {
        const close = text.indexOf("'", i + 1);
        if (close < 0) throw new Error(`unclosed ' in ${text}`);
        word += text.slice(i + 1, close);
        inWord = true;
        i = close + 1;
      } else if (c === '"') {
        inWord = true;
        for (i++; text[i] !== '"';) {
          if (i >= text.length) throw new Error(`unclosed " in ${text}`);
          if (text[i] === '\\' && '"\\$`'.includes(text[i + 1] ?? '')) {
            word += text[i + 1];
            i += 2;
          } else if (text[i] === '$') {
            const [value, next] = await this.dollar(text, i);
            word += value;
            i = next;
          } else word += text[i++];
        }
        i++;
      } else if (c === '$') {
        const [value, next] = await this.dollar(text, i);
        word += value;
        inWord = true;
        i = next;
      } else {
        word += c;
        inWord = true;
        i++;
      }
    }
    end();
    return out;
  }

  private async dollar(text: string, i: number): Promise<[string, number]> {
    if (text[i + 1] === '(') {
      const close = closingParen(text, i + 1);
      return [(await this.pipeline(await this.words(text.slice(i + 2, close - 1)))).replace(/\n+$/, ''), close];
    }
    const m = /^\$(?:\{([A-Za-z_]\w*)\}|([A-Za-z_]\w*))/.exec(text.slice(i));
    if (!m) throw new Error(`a $ the test does not expand in ${text}`);
    const name = (m[1] ?? m[2])!;
    const value = this.vars.get(name);
    if (value === undefined) throw new Error(`$${name} is used before the walk sets it`);
    return [value, i + m[0].length];
  }

  /** `cat FILE`, or `curl …` optionally piped into `field NAME`; returns what it prints. */
  private async pipeline(words: Word[]): Promise<string> {
    const stages: string[][] = [[]];
    for (const w of words) {
      if (w === PIPE) stages.push([]);
      else stages.at(-1)!.push(w);
    }
    const [first, second, ...rest] = stages;
    assert.equal(rest.length, 0, 'at most one pipe');
    let output: string;
    if (first![0] === 'cat' && first!.length === 2) output = readFileSync(join(this.dir, first![1]!), 'utf8');
    else if (first![0] === 'curl') output = await this.curl(first!.slice(1));
    else throw new Error(`a command the test does not run: ${first!.join(' ')}`);
    if (!second) return output;
    assert.ok(second[0] === 'field' && second.length === 2, `only | field NAME: ${second.join(' ')}`);
    assert.ok(this.fieldScript, 'the walk defines field() before using it');
    const shown = spawnSync(process.execPath, ['-e', this.fieldScript, second[1]!], { input: output, encoding: 'utf8', timeout: 10_000 });
    assert.equal(shown.status, 0, `field ${second[1]}: ${shown.stderr}`);
    return shown.stdout;
  }

  private async curl(args: string[]): Promise<string> {
    let method: string | undefined;
    let data: string | undefined;
    let url: string | undefined;
    const headers = new Headers();
    for (let k = 0; k < args.length; k++) {
      const a = args[k]!;
      // -g (no URL globbing: brackets are literal) is what fetch does anyway.
      if (a === '-s' || a === '-g' || a === '-sg') continue;
      if (a === '-X') method = args[++k];
      else if (a === '-H') {
        const header = args[++k]!;
        const colon = header.indexOf(':');
        headers.append(header.slice(0, colon).trim(), header.slice(colon + 1).trim());
      } else if (a === '-d') data = args[++k];
      else if (/^https?:\/\//.test(a)) url = a;
      else throw new Error(`a curl option the test does not know: ${a}`);
    }
    assert.ok(url, 'curl names a URL');
    // curl -d without a Content-Type sends a form; the guide always says what it sends.
    if (data !== undefined) assert.ok(headers.has('content-type'), `a body with its Content-Type: ${args.join(' ')}`);
    const response = await fetch(url, { method: method ?? (data === undefined ? 'GET' : 'POST'), headers, body: data ?? null, signal: AbortSignal.timeout(10_000) });
    const text = await response.text();
    this.requests++;
    const expected = this.pending;
    assert.ok(expected, `${method ?? 'GET'} ${url} has no answer comment in the guide`);
    const where = `${method ?? (data === undefined ? 'GET' : 'POST')} ${url} (guide: ${expected.text})\nanswer: ${response.status} ${text}`;
    assert.equal(response.status, expected.status, where);
    if (expected.body !== undefined || expected.without.length > 0) {
      const body = JSON.parse(text) as Record<string, unknown>;
      if (expected.body !== undefined) this.match(body, this.substitute(expected.body), '', where);
      for (const field of expected.without) assert.ok(!(field in body), `${where}\nhas ${field}`);
    } else {
      assert.equal(text, '', where);
    }
    return text;
  }

  /** $NAME in the answer's strings is the walk's variable. */
  private substitute(value: unknown): unknown {
    if (typeof value === 'string') {
      return value.replace(/\$([A-Za-z_]\w*)/g, (_m, name: string) => {
        const v = this.vars.get(name);
        if (v === undefined) throw new Error(`the answer uses $${name} before the walk sets it`);
        return v;
      });
    }
    if (Array.isArray(value)) return value.map((v) => this.substitute(v));
    if (value && typeof value === 'object') return Object.fromEntries(Object.entries(value).map(([k, v]) => [k, this.substitute(v)]));
    return value;
  }

  /** The answer has every field the guide shows, with its value ("…": any value); lists have exactly the objects shown. */
  private match(actual: unknown, expected: unknown, path: string, where: string): void {
    if (expected === '…') {
      assert.ok(actual !== null && actual !== undefined, `${where}\n${path || '(body)'} should have a value`);
    } else if (Array.isArray(expected)) {
      assert.ok(Array.isArray(actual) && actual.length === expected.length, `${where}\n${path} should have ${expected.length} entries`);
      expected.forEach((e, k) => this.match(actual[k], e, `${path}[${k}]`, where));
    } else if (expected && typeof expected === 'object') {
      assert.ok(actual && typeof actual === 'object' && !Array.isArray(actual), `${where}\n${path || '(body)'} should be an object`);
      for (const [k, v] of Object.entries(expected)) this.match((actual as Record<string, unknown>)[k], v, path ? `${path}.${k}` : k, where);
    } else {
      assert.deepEqual(actual, expected, `${where}\n${path}`);
    }
  }
}

// ---- The test.

describe('docs/guide.md, from an empty folder with the packed package', () => {
  let root = '';
  let app = '';
  let packed: { filename: string; files: Array<{ path: string }> } | undefined;
  let server: ChildProcess | undefined;
  let output = '';
  const timings: string[] = [];
  const timed = <T>(label: string, fn: () => T): T => {
    const start = Date.now();
    const value = fn();
    timings.push(`${label} ${((Date.now() - start) / 1000).toFixed(1)} s`);
    return value;
  };

  before(
    () => {
      root = mkdtempSync(join(tmpdir(), 'canon-guide-'));
      app = join(root, 'todo-api');
      mkdirSync(app);
      // --ignore-scripts: `prepare` would rebuild dist/, which npm test has just built.
      const pack = timed('npm pack', () => run('npm', ['pack', '--ignore-scripts', '--json', '--pack-destination', root], ROOT, 60_000));
      packed = (JSON.parse(pack.stdout) as Array<{ filename: string; files: Array<{ path: string }> }>)[0];
      for (const block of blocksOf(GUIDE)) if (block.file) writeFileSync(join(app, block.file), block.body);
      // The guide's `npm install canon-api-server`, from the tarball. Every dependency is one this project has
      // installed, so npm takes them from its cache (the registry only for metadata it lacks); no install scripts run.
      timed('npm install', () => run('npm', ['install', '--prefer-offline', '--ignore-scripts', '--no-audit', '--no-fund', join(root, packed!.filename)], app, 90_000));
      // better-sqlite3's install script would download a prebuilt binding (a host this machine cannot reach) or
      // compile one (about a minute). This project's copy has a binding built for the Node running this test (CI
      // rebuilds it before its Node 24 run), so the fresh install uses that package, linked whole: a copied
      // .node file would be paired with whatever release the fresh install resolved, which may differ.
      const sqlite = join(app, 'node_modules', 'better-sqlite3');
      rmSync(sqlite, { recursive: true, force: true });
      symlinkSync(join(ROOT, 'node_modules', 'better-sqlite3'), sqlite, 'dir');
    },
    { timeout: 150_000 },
  );

  after(async () => {
    if (server && server.exitCode === null && server.signalCode === null) {
      const child = server;
      await new Promise<void>((resolve) => {
        const kill = setTimeout(() => child.kill('SIGKILL'), 5000);
        const giveUp = setTimeout(resolve, 8000);
        child.once('exit', () => {
          clearTimeout(kill);
          clearTimeout(giveUp);
          resolve();
        });
        child.kill('SIGTERM');
      });
    }
    if (root) rmSync(root, { recursive: true, force: true });
  });

  it('the tarball ships the public entry with its declarations and the canon command, and no tests', (t) => {
    const files = new Set(packed!.files.map((f) => f.path));
    assert.ok(files.has('dist/src/index.d.ts'), `the tarball lacks dist/src/index.d.ts (is "declaration" on in tsconfig.json, and "dist/src" in package.json "files"?)`);
    for (const f of ['dist/src/index.js', 'dist/src/cli/main.js', 'dist/src/model/types.d.ts', 'package.json']) assert.ok(files.has(f), `the tarball lacks ${f}`);
    assert.deepEqual(
      [...files].filter((f) => /^(dist\/)?test\//.test(f)),
      [],
      'tests are not shipped',
    );
    assert.equal(PKG.exports['.']?.types, './dist/src/index.d.ts');
    assert.ok(existsSync(join(app, 'node_modules', '.bin', 'canon')), 'npm installs the canon command');
    t.diagnostic(timings.join(', '));
  });

  it('the guide installs the package by its name, and its package.json says "type": "module"', () => {
    assert.match(GUIDE, new RegExp(`^npm install ${PKG.name}$`, 'm'));
    assert.equal((JSON.parse(readFileSync(join(app, 'package.json'), 'utf8')) as { type?: string }).type, 'module');
    assert.doesNotMatch(GUIDE, /canon\/dist\//, 'no deep imports');
  });

  it('the installed package exports the public entry, and only it', () => {
    const probe = `const m = await import('${PKG.name}'); console.log(JSON.stringify(Object.keys(m).sort()));
      try { await import('${PKG.name}/dist/src/model/define.js'); console.log('deep import allowed'); } catch (e) { console.log(e.code); }`;
    const result = run(process.execPath, ['--input-type=module', '-e', probe], app, 20_000);
    assert.deepEqual(result.stdout.trim().split('\n'), [
      JSON.stringify(['AppError', 'MAX_AMOUNT', 'defineApp', 'defineResource', 'f', 'isAppError']),
      'ERR_PACKAGE_PATH_NOT_EXPORTED',
    ]);
  });

  it("the guide's TypeScript (app.js as app.ts, and the other snippets) compiles against the shipped declarations", () => {
    copyFileSync(join(app, 'app.js'), join(app, 'app.ts'));
    const config = JSON.parse(readFileSync(join(app, 'tsconfig.json'), 'utf8')) as { include: string[] };
    assert.deepEqual(config.include, ['app.ts']);
    const snippets = blocksOf(GUIDE)
      .filter((b) => b.lang === 'ts' && b.file)
      .map((b) => b.file!);
    assert.ok(snippets.length > 0);
    writeFileSync(join(app, 'tsconfig.check.json'), JSON.stringify({ extends: './tsconfig.json', include: ['app.ts', ...snippets] }));
    // The guide's compiler options, with this project's TypeScript; skipLibCheck stays off, so the package's .d.ts files are checked too.
    timed('tsc', () => run(process.execPath, [join(ROOT, 'node_modules', 'typescript', 'bin', 'tsc'), '-p', 'tsconfig.check.json', '--noEmit'], app, 60_000));
  });

  it("the guide's command serves its app, and every request of its walk gets the answer the guide shows", async () => {
    const serve = blocksOf(GUIDE)
      .flatMap((b) => (b.lang === 'sh' ? b.body.split('\n') : []))
      .filter((l) => /^(\w+=\S+ )*npx canon serve$/.test(l));
    assert.equal(serve.length, 1, 'the guide has one command that starts the server');
    const env = cleanEnv(/^(CANON_|DATABASE_URL$|REDIS_URL$|PORT$|HOST$|NODE_ENV$)/);
    for (const [, name, value] of serve[0]!.matchAll(/(\w+)=(\S+) /g)) env[name!] = value;
    // The one setting the guide does not give: a loaded test machine must not turn its requests into overload
    // 503s (test/support/harness.ts, TEST_PROCESS_ENV; not imported here, this suite runs the packed tarball).
    env.CANON_MAX_EVENT_LOOP_DELAY_MS = '0';
    // As the guide runs it (npx canon serve: the package's bin), on a free port instead of 3000.
    server = reapOnExit(spawn(process.execPath, [join(app, 'node_modules', '.bin', 'canon'), 'serve', '--port', '0'], { cwd: app, env, stdio: ['ignore', 'pipe', 'pipe'] }));
    const child = server;
    const origin = await new Promise<string>((resolve, reject) => {
      const timer = setTimeout(() => reject(new Error(`the server did not start (and print its admin key) in 30 s:\n${output}`)), 30_000);
      child.stdout!.on('data', (d: Buffer) => {
        output += d.toString();
        // Ready once it has printed where it serves and the development admin key the guide reads.
        const m = /Canon is serving (http:\/\/[^/\s]+)\/v2[\s\S]*development admin API key: ck_\S+\n/.exec(output);
        if (m) {
          clearTimeout(timer);
          resolve(m[1]!);
        }
      });
      child.stderr!.on('data', (d: Buffer) => (output += d.toString()));
      child.once('exit', (code) => {
        clearTimeout(timer);
        reject(new Error(`the server exited with ${code}:\n${output}`));
      });
    });

    const start = GUIDE.indexOf(WALK_MARKER);
    assert.ok(start > 0, 'the guide marks its walk');
    const next = GUIDE.indexOf('\n## ', start);
    const walk = blocksOf(GUIDE).filter((b) => b.lang === 'sh' && b.offset > start && (next < 0 || b.offset < next));
    // The walk names the port once (PORT=3000, as the serve command does); it is the test server's here.
    const script = walk.map((b) => b.body).join('\n');
    assert.equal(script.match(/^PORT=3000$/gm)?.length, 1, 'the walk sets PORT=3000 once');
    assert.ok(!script.includes(':3000'), 'the walk spells the port only as $PORT');
    const entries = entriesOf(script.replace(/^PORT=3000$/m, `PORT=${new URL(origin).port}`));
    assert.ok(entries.filter((e) => e.expect).length >= 15, 'the walk is all there');
    const shell = new Walk(app);
    for (const entry of entries) await shell.entry(entry);
    assert.ok(shell.vars.has('ANA') && shell.vars.has('TASK'));

    // The guide's app describes itself too (issue 27): its own OpenAPI document, valid, with its own resources.
    const doc = await fetch(`${origin}/v2/openapi.json`, { signal: AbortSignal.timeout(10_000) });
    assert.equal(doc.status, 200);
    const document = (await doc.json()) as { paths: Record<string, unknown> };
    await SwaggerParser.validate(structuredClone(document) as never);
    assert.ok(
      Object.keys(document.paths).some((p) => p.startsWith('/v2/') && !p.startsWith('/v2/users') && !p.startsWith('/v2/api-keys')),
      'the app’s own collections',
    );
  });
});
