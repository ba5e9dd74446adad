// The operation catalog: every operation the server serves, one entry each, built once from the model; nothing is routed outside it.
import { newestVersion, type CompiledModel } from '../model/compile.js';
import type { Operation } from './operation.js';
import { documentOperations, platformOperations } from './platform-operations.js';
import { docsOperations } from './docs-operations.js';
import { graphqlOperations } from './graphql-operations.js';
import { graphiqlOperations } from './graphiql-operations.js';
import { resourceOperations } from './resource-operations.js';

export class Catalog {
  readonly operations: readonly Operation[];
  private readonly byId = new Map<string, Operation>();
  /** Each path template with the pattern that recognises its concrete paths, and its methods. */
  private readonly paths: Array<{ template: string; pattern: RegExp; methods: Set<string> }> = [];

  constructor(operations: Operation[]) {
    this.operations = Object.freeze([...operations]);
    for (const op of operations) {
      if (this.byId.has(op.id)) throw new Error(`two operations are named ${op.id}`);
      this.byId.set(op.id, op);
      let entry = this.paths.find((p) => p.template === op.path);
      if (!entry) {
        const source = op.path
          .split('/')
          .map((seg) => (seg.startsWith(':') ? '[^/]+' : seg.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')))
          .join('/');
        entry = { template: op.path, pattern: new RegExp(`^${source}$`), methods: new Set() };
        this.paths.push(entry);
      }
      if (entry.methods.has(op.method)) throw new Error(`${op.method} ${op.path} is declared twice`);
      entry.methods.add(op.method);
    }
  }

  get(id: string): Operation | undefined {
    return this.byId.get(id);
  }

  /** The operation a concrete request reaches (HEAD reaches GET's), or undefined: no such path, or not with that method. */
  find(method: string, path: string): Operation | undefined {
    const clean = path.split('?')[0]!;
    const wanted = method.toUpperCase() === 'HEAD' ? 'GET' : method.toUpperCase();
    // Literal segments win over parameters (`/sessions/current` before `/sessions/:id`), as in the router.
    let best: Operation | undefined;
    for (const entry of this.paths) {
      if (!entry.methods.has(wanted) || !entry.pattern.test(clean)) continue;
      const op = this.operations.find((o) => o.path === entry.template && o.method === wanted)!;
      if (!best || op.path.split(':').length < best.path.split(':').length) best = op;
    }
    return best;
  }

  /**
   * The `Allow` value for a concrete path (RFC 9110 §10.2.1), or undefined when no operation has that path:
   * its methods, HEAD with GET, and OPTIONS on every path.
   */
  allow(path: string): string | undefined {
    const clean = path.split('?')[0]!;
    const entry = this.paths.find((p) => p.pattern.test(clean));
    if (!entry) return undefined;
    const methods = new Set([...entry.methods, 'OPTIONS']);
    if (methods.has('GET')) methods.add('HEAD');
    return [...methods].sort().join(', ');
  }
}

/** The catalog of an app: the platform's operations, then every resource's in every version served. */
export function buildCatalog(model: CompiledModel): Catalog {
  return new Catalog([
    ...platformOperations(model, newestVersion(model).name),
    ...documentOperations(model.versions.map((v) => v.name)),
    ...docsOperations(model.versions.map((v) => v.name)),
    ...graphqlOperations(),
    ...graphiqlOperations(),
    ...model.versions.flatMap((v) => resourceOperations(model, v)),
  ]);
}
