// An OpenAPI document as served (compact JSON text) and as committed (docs/openapi, indented).
import { buildCatalog, type Catalog } from '../catalog/catalog.js';
import type { CompiledModel } from '../model/compile.js';
import { openApiDocument, type VersionStrategy } from './document.js';

export interface RenderInput {
  model: CompiledModel;
  /** The catalog the routes were registered from; built from the model when absent (the CLI). */
  catalog?: Catalog;
  /** `v2`, `2` or `v1`. */
  version: string;
  strategy: VersionStrategy;
  sessionCookie: string;
}

/** The served version named `version` (`2` or `v2`); an error naming the served ones otherwise. */
export function versionNamed(model: CompiledModel, version: string): string {
  const name = /^v/.test(version) ? version : `v${version}`;
  if (!model.versions.some((v) => v.name === name)) throw new Error(`no version ${version}: this API serves ${model.versions.map((v) => v.name).join(', ')}`);
  return name;
}

/** The document as served: compact JSON text (src/http/rendering/precompressed.ts gives each coding its ETag). */
export function renderOpenApi(input: RenderInput): string {
  const name = versionNamed(input.model, input.version);
  const version = input.model.versions.find((v) => v.name === name)!;
  const catalog = input.catalog ?? buildCatalog(input.model);
  const doc = openApiDocument({ catalog, model: input.model, version, strategy: input.strategy, sessionCookie: input.sessionCookie });
  // Served compact (the committed copy in docs/openapi is indented: the drift check compares the JSON, not the bytes).
  return JSON.stringify(doc);
}

/** The committed form of a served document: the same JSON, two-space indented, newline-terminated. */
export function committedForm(body: string): string {
  return `${JSON.stringify(JSON.parse(body), null, 2)}\n`;
}
