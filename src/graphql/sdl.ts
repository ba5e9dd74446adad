// The schema as SDL, as committed in docs/schema.graphql and printed by `canon graphql-schema` (CI fails when the two differ).
import { printSchema } from 'graphql';
import type { Catalog } from '../catalog/catalog.js';
import type { CompiledModel } from '../model/compile.js';
import { buildSchema } from './schema.js';

const HEADER = '# The GraphQL schema of Canon (docs/graphql.md), generated from the model: `canon graphql-schema --out docs/schema.graphql`.\n\n';

export function printSdl(model: CompiledModel, catalog: Catalog): string {
  return `${HEADER}${printSchema(buildSchema(model, catalog))}\n`;
}
