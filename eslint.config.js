// ESLint flat config: typescript-eslint's recommended type-aware rules over src, examples and test, and the one-way layers of src.
import js from '@eslint/js';
import tseslint from 'typescript-eslint';

/**
 * What each folder of src may import besides itself (docs/architecture.md, "Layers"). Lower layers never
 * import higher ones, so the import graph has no cycles and no upward arrows; a new arrow fails lint.
 */
const LAYERS = {
  lib: [],
  errors: ['lib'],
  model: ['lib', 'errors'],
  query: ['lib', 'errors', 'model'],
  catalog: ['lib', 'errors', 'model', 'query', 'platform'],
  openapi: ['lib', 'errors', 'model', 'query', 'catalog', 'platform'],
  store: ['lib', 'errors', 'model'],
  counters: ['lib', 'errors'],
  fanout: ['lib', 'errors', 'model', 'store'],
  platform: ['lib', 'errors', 'model'],
  auth: ['lib', 'errors', 'model', 'store', 'platform'],
  limits: ['lib', 'errors', 'model', 'counters'],
  services: ['lib', 'errors', 'model', 'query', 'store', 'platform', 'auth'],
  events: ['lib', 'errors', 'model', 'store', 'services'],
  webhooks: ['lib', 'errors', 'model', 'store', 'services', 'events'],
  graphql: ['lib', 'errors', 'model', 'query', 'catalog', 'store', 'platform', 'services'],
  config: ['lib', 'errors', 'auth', 'limits'],
  http: ['lib', 'errors', 'model', 'query', 'catalog', 'openapi', 'store', 'platform', 'auth', 'limits', 'services', 'config', 'webhooks', 'events', 'graphql'],
  runtime: [
    'lib',
    'errors',
    'model',
    'query',
    'catalog',
    'openapi',
    'store',
    'counters',
    'fanout',
    'platform',
    'auth',
    'limits',
    'services',
    'config',
    'http',
    'webhooks',
    'events',
    'graphql',
  ],
  check: [],
  cli: ['lib', 'errors', 'model', 'catalog', 'openapi', 'store', 'platform', 'auth', 'services', 'config', 'runtime', 'webhooks', 'events', 'examples', 'check', 'graphql'],
};
const FOLDERS = [...Object.keys(LAYERS), 'examples'];
const FASTIFY = { name: 'fastify', message: 'Only src/http imports Fastify.' };

const layerRules = Object.entries(LAYERS).map(([folder, allowed]) => {
  const forbidden = FOLDERS.filter((f) => f !== folder && !allowed.includes(f));
  const may = `src/${folder} may import only ${allowed.length ? allowed.map((a) => `src/${a}`).join(', ') : 'nothing outside itself'} (eslint.config.js LAYERS).`;
  return {
    files: [`src/${folder}/**/*.ts`],
    rules: {
      // no-restricted-imports does not see `await import(…)` (a module loaded when needed): the same layers, by selector.
      // esquery regexes cannot hold a slash: \x2F is one.
      'no-restricted-syntax': [
        'error',
        { selector: `ImportExpression[source.value=/^(\\.\\.\\x2F)+(${forbidden.join('|')})\\x2F/]`, message: may },
        ...(folder === 'http' ? [] : [{ selector: "ImportExpression[source.value='fastify']", message: FASTIFY.message }]),
      ],
      'no-restricted-imports': [
        'error',
        {
          ...(folder === 'http' ? {} : { paths: [FASTIFY] }),
          patterns: [
            {
              regex: `^(\\.\\./)+(${forbidden.join('|')})/`,
              message: may,
            },
          ],
        },
      ],
    },
  };
});

export default tseslint.config(
  { ignores: ['dist/**', 'node_modules/**', 'data/**', 'packages/*/dist/**'] },
  js.configs.recommended,
  ...tseslint.configs.recommended,
  {
    files: ['**/*.ts'],
    rules: {
      '@typescript-eslint/no-unused-vars': ['error', { argsIgnorePattern: '^_', varsIgnorePattern: '^_' }],
      '@typescript-eslint/consistent-type-imports': 'error',
      'no-restricted-imports': ['error', { paths: [{ name: 'fastify', message: 'Only src/http imports Fastify.' }] }],
    },
  },
  ...layerRules,
  {
    files: ['test/**/*.ts', 'bench/**'],
    rules: { 'no-restricted-imports': 'off' },
  },
  {
    files: ['**/*.mjs', '**/*.js'],
    languageOptions: { globals: { process: 'readonly', console: 'readonly', setTimeout: 'readonly', clearTimeout: 'readonly', URL: 'readonly', fetch: 'readonly' } },
  },
);
