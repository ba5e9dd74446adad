// canon-client as shipped (issue 28.1, 28.2): the generated types match the committed documents (drift check), `npm pack` carries what it should and nothing else, and a browser bundle of it imports no Node built-in.
import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import { cpSync, mkdirSync, mkdtempSync, readFileSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import { builtinModules } from 'node:module';
import { tmpdir } from 'node:os';
import { dirname, join, posix, resolve } from 'node:path';
import { promisify } from 'node:util';
import { describe, it } from 'node:test';
import * as esbuild from 'esbuild';

const run = promisify(execFile);
const CLIENT = 'packages/client';
const GENERATOR = `${CLIENT}/scripts/generate-types.mjs`;

/** Node's built-in modules by every name they can be imported under. */
const BUILTINS = new Set([...builtinModules, ...builtinModules.map((m) => `node:${m}`)]);

/** Bundles `entry` for browsers with esbuild; the Node built-ins it imports (esbuild also refuses to resolve them). */
async function nodeImportsOfBrowserBundle(entry: string): Promise<{ builtins: string[]; errors: string[]; bytes: number }> {
  const result = await esbuild
    .build({ entryPoints: [entry], bundle: true, platform: 'browser', format: 'esm', write: false, metafile: true, logLevel: 'silent' })
    .catch((err: esbuild.BuildFailure) => err);
  if ('errors' in result && !('metafile' in result)) {
    const errors = result.errors.map((e) => e.text);
    return { builtins: errors.flatMap((e) => [...e.matchAll(/"([^"]+)"/g)].map((m) => m[1]!)).filter((name) => BUILTINS.has(name)), errors, bytes: 0 };
  }
  const built = result as esbuild.BuildResult & { metafile: esbuild.Metafile; outputFiles: esbuild.OutputFile[] };
  const imports = Object.values(built.metafile.inputs).flatMap((input) => input.imports.map((i) => i.path));
  const external = Object.values(built.metafile.outputs).flatMap((output) => output.imports.map((i) => i.path));
  return { builtins: [...imports, ...external].filter((name) => BUILTINS.has(name)), errors: [], bytes: built.outputFiles[0]!.contents.byteLength };
}

/**
 * The module specifiers a built file imports: declarations as tsc emits them, one per line start (a comment may
 * quote an import too, so nothing else counts), side-effect imports, and inline type imports (`import("./x.js")`).
 */
function importsOf(text: string): string[] {
  const patterns = [/^(?:import|export)\s[^'"\n]*?\sfrom\s*'([^']+)'/gm, /^import\s*'([^']+)'/gm, /\bimport\(["']([^"']+)["']\)/g];
  return patterns.flatMap((pattern) => [...text.matchAll(pattern)].map((m) => m[1]!));
}

describe('canon-client package', () => {
  it('src/generated/v1.ts and v2.ts are what openapi-typescript makes of the committed documents; a changed document fails the check', async () => {
    // The drift check: after a catalog change, `canon openapi … --out docs/openapi/vN.json`, then this script without --check.
    await run(process.execPath, [GENERATOR, '--check'], { timeout: 120_000 }).catch((err: { stderr?: string }) => {
      throw new Error(`the generated client types drifted: ${err.stderr ?? ''}`);
    });
    const docs = mkdtempSync(join(tmpdir(), 'canon-client-docs-'));
    try {
      cpSync('docs/openapi/v1.json', join(docs, 'v1.json'));
      const v2 = JSON.parse(readFileSync('docs/openapi/v2.json', 'utf8')) as { components: { schemas: { Product: { properties: Record<string, unknown> } } } };
      v2.components.schemas.Product.properties.weight = { type: 'integer' };
      writeFileSync(join(docs, 'v2.json'), JSON.stringify(v2));
      await assert.rejects(run(process.execPath, [GENERATOR, '--check', '--docs', docs], { timeout: 120_000 }), (err: { code?: number; stderr?: string }) => {
        assert.equal(err.code, 1);
        assert.match(err.stderr ?? '', /packages\/client\/src\/generated\/v2\.ts differ/);
        assert.doesNotMatch(err.stderr ?? '', /v1\.ts/);
        return true;
      });
    } finally {
      rmSync(docs, { recursive: true, force: true });
    }
  });

  it('npm pack: package.json, README.md, the sources and the build; every export and every import of the build resolves inside the package', async () => {
    const { stdout } = await run('npm', ['pack', '--dry-run', '--json', '--ignore-scripts'], { cwd: CLIENT, timeout: 120_000 });
    const [pack] = JSON.parse(stdout) as Array<{ name: string; files: Array<{ path: string }>; size: number; unpackedSize: number }>;
    assert.equal(pack!.name, 'canon-client');
    const files = new Set(pack!.files.map((f) => f.path));
    const manifest = JSON.parse(readFileSync(`${CLIENT}/package.json`, 'utf8')) as {
      exports: Record<string, Record<string, string> | string>;
      dependencies: Record<string, string>;
      private?: boolean;
    };
    assert.equal(manifest.private, undefined, 'publishable');
    assert.ok(files.has('package.json') && files.has('README.md'));
    const stray = [...files].filter((f) => !/^(package\.json|README(-[a-z]+)?\.md|LICENSE|dist\/.+\.(js|d\.ts|js\.map|d\.ts\.map)|src\/.+\.ts)$/.test(f));
    assert.deepEqual(stray, [], 'nothing but the build, its sources and the manifest (no .tsbuildinfo, no scripts, no tests)');
    // Declaration-only sources (src/node-crypto.d.ts: types for node:crypto, which the DOM-only tsconfig lacks) emit nothing.
    const sources = [...files].filter((f) => f.startsWith('src/') && !f.endsWith('.d.ts')).map((f) => f.slice(4, -3));
    const built = [...files].filter((f) => f.startsWith('dist/') && f.endsWith('.js')).map((f) => f.slice(5, -3));
    assert.deepEqual(built.sort(), sources.sort(), 'each source built, and nothing built from a source that is gone');
    for (const name of sources) assert.ok(files.has(`dist/${name}.d.ts`), `dist/${name}.d.ts`);
    for (const target of Object.values(manifest.exports).flatMap((e) => (typeof e === 'string' ? [e] : Object.values(e)))) {
      assert.ok(files.has(posix.normalize(target)), `the export ${target} is packed`);
    }
    let checked = 0;
    for (const file of [...files].filter((f) => f.endsWith('.js') || f.endsWith('.d.ts'))) {
      const text = readFileSync(join(CLIENT, file), 'utf8');
      for (const spec of importsOf(text)) {
        checked++;
        if (spec.startsWith('.')) {
          const resolved = posix.normalize(posix.join(dirname(file), spec));
          assert.ok(files.has(resolved) || files.has(resolved.replace(/\.js$/, '.d.ts')), `${file} imports ${spec}, which is not packed`);
        } else {
          // Node built-ins only behind the "node" export condition (dist/node.js); the browser bundle below proves the portable entry has none.
          assert.ok(spec in manifest.dependencies || BUILTINS.has(spec), `${file} imports ${spec}, which is not a dependency`);
        }
      }
    }
    assert.ok(checked > 40, `only ${checked} imports found: the pattern no longer reads tsc's output`);
    console.log(`npm pack: ${files.size} files, ${pack!.size} bytes packed, ${pack!.unpackedSize} unpacked`);
  });

  it('Node resolves canon-client to its "node" entry, which verifies webhooks with node:crypto and exports what the portable entry does', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'canon-client-node-'));
    try {
      mkdirSync(join(dir, 'node_modules'));
      symlinkSync(resolve(CLIENT), join(dir, 'node_modules/canon-client'), 'dir');
      writeFileSync(
        join(dir, 'probe.mjs'),
        [
          "const url = import.meta.resolve('canon-client');",
          "const entry = await import('canon-client');",
          "const portable = await import(new URL('./index.js', url).href);",
          "const { hmac } = await import(new URL('./webhooks/hmac.js', url).href);",
          "const { nodeHmac } = await import(new URL('./webhooks/hmac-node.js', url).href);",
          'console.log(JSON.stringify({ url, node: hmac() === nodeHmac, exports: Object.keys(entry).sort(), portable: Object.keys(portable).sort() }));',
        ].join('\n'),
      );
      const { stdout } = await run(process.execPath, ['probe.mjs'], { cwd: dir, timeout: 30_000 });
      const probe = JSON.parse(stdout) as { url: string; node: boolean; exports: string[]; portable: string[] };
      assert.match(probe.url, /\/packages\/client\/dist\/node\.js$/);
      assert.equal(probe.node, true, 'the node entry installed the node:crypto HMAC');
      assert.deepEqual(probe.exports, probe.portable);
      for (const name of ['createClient', 'verifyWebhook', 'createWebhookHandler', 'CanonError', 'openEventStream']) assert.ok(probe.exports.includes(name), name);
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });

  it('bundled for browsers (esbuild, platform browser) it imports no Node built-in; a module that does is caught', async () => {
    const bundle = await nodeImportsOfBrowserBundle(`${CLIENT}/src/index.ts`);
    assert.deepEqual(bundle.errors, []);
    assert.deepEqual(bundle.builtins, [], 'Node built-ins on the browser path');
    assert.ok(bundle.bytes > 1000);
    console.log(`browser bundle: ${bundle.bytes} bytes (unminified)`);
    // The check can fail: the same build of a module importing node:crypto names it.
    const dir = mkdtempSync(join(tmpdir(), 'canon-client-bundle-'));
    try {
      writeFileSync(join(dir, 'bad.ts'), "import { randomUUID } from 'node:crypto';\nexport const id = randomUUID();\n");
      const bad = await nodeImportsOfBrowserBundle(join(dir, 'bad.ts'));
      assert.deepEqual(bad.builtins, ['node:crypto']);
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });
});
