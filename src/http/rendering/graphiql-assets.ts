// The files the GraphiQL page loads (issue 29.7), read once: React, ReactDOM and GraphiQL's browser builds with their licences (copied into dist/assets by scripts/build.mjs), and the page's own script and style.
import { fileURLToPath } from 'node:url';
import type { GraphiqlAsset } from '../../catalog/graphiql-operations.js';
import { asset, readOptional, typeOf, type Asset } from './docs-assets.js';
import { GRAPHIQL_SCRIPT, GRAPHIQL_STYLE } from './graphiql-client.js';

/** Where the build copies them: dist/assets, two levels above dist/src/http (what an installed package has). */
const BUILT_ASSETS = fileURLToPath(new URL('../../../assets/', import.meta.url));
/** A checkout built by tsc alone: the devDependencies themselves (three levels above dist/src/http). */
const NODE_MODULES = fileURLToPath(new URL('../../../../node_modules/', import.meta.url));

/**
 * Each file's name in dist/assets (the asset's) and its place under node_modules; scripts/build.mjs copies the
 * latter to the former. The UMD builds because the page loads plain scripts (no bundler, no import map): React
 * 18 is the last React with UMD builds, which is why GraphiQL 3 (its CDN build expects window.React) is used.
 */
export const GRAPHIQL_FILES: ReadonlyArray<{ asset: GraphiqlAsset; inModules: string }> = [
  { asset: 'react.production.min.js', inModules: 'react/umd/react.production.min.js' },
  { asset: 'react-dom.production.min.js', inModules: 'react-dom/umd/react-dom.production.min.js' },
  { asset: 'graphiql.min.js', inModules: 'graphiql/graphiql.min.js' },
  { asset: 'graphiql.min.css', inModules: 'graphiql/graphiql.min.css' },
  { asset: 'react.LICENSE', inModules: 'react/LICENSE' },
  { asset: 'react-dom.LICENSE', inModules: 'react-dom/LICENSE' },
  { asset: 'graphiql.LICENSE', inModules: 'graphiql/LICENSE' },
];

/**
 * A source map comment (`//# sourceMappingURL=graphiql.min.js.map`, `/*# … *\/` in CSS): the maps are not served
 * (they are 10 MB of sources), and a browser's developer tools would ask for them, a 404 each. The bundles name
 * no other host they load from by themselves (the URLs in them are licences, comments and error texts: checked
 * by test/unit/http/graphiql-assets.test.ts), so nothing else is rewritten.
 */
const SOURCE_MAP = /\n(?:\/\/# sourceMappingURL=[^\n]*|\/\*# sourceMappingURL=[^\n]*?\*\/)\s*$/;

export interface GraphiqlFiles {
  assets: Map<GraphiqlAsset, Asset>;
  /** Where the browser builds were looked for, when they were not found: the page cannot work without them. */
  missing?: string;
}

/** Every file, read once (the bundle is 3.5 MB: not read per app in a process that builds many). */
const cache = new Map<string, GraphiqlFiles>();

/** Every file of the page: from dist/assets, else from node_modules (a checkout built by tsc alone); all from the same place. */
export function readGraphiqlFiles(dirs: { built?: string; nodeModules?: string } = {}): GraphiqlFiles {
  const built = dirs.built ?? BUILT_ASSETS;
  const nodeModules = dirs.nodeModules ?? NODE_MODULES;
  const key = `${built}\0${nodeModules}`;
  const known = cache.get(key);
  if (known) return known;
  const assets = new Map<GraphiqlAsset, Asset>([
    ['graphiql-page.js', asset(GRAPHIQL_SCRIPT, typeOf('graphiql-page.js'))],
    ['graphiql-page.css', asset(GRAPHIQL_STYLE, typeOf('graphiql-page.css'))],
  ]);
  const files: GraphiqlFiles = { assets };
  const read = (at: (f: (typeof GRAPHIQL_FILES)[number]) => string): Buffer[] | undefined => {
    const found = GRAPHIQL_FILES.map((f) => readOptional(at(f)));
    return found.every((b) => b !== undefined) ? (found as Buffer[]) : undefined;
  };
  const bytes = read((f) => `${built}${f.asset}`) ?? read((f) => `${nodeModules}${f.inModules}`);
  if (bytes) {
    GRAPHIQL_FILES.forEach((f, i) => {
      const body = /\.(js|css)$/.test(f.asset) ? Buffer.from(bytes[i]!.toString('utf8').replace(SOURCE_MAP, '\n'), 'utf8') : bytes[i]!;
      assets.set(f.asset, asset(body, typeOf(f.asset)));
    });
  } else {
    files.missing = `${built}graphiql.min.js (or ${nodeModules}graphiql/graphiql.min.js)`;
  }
  cache.set(key, files);
  return files;
}
