// Compiles definitions into the model every layer reads: storage columns, query paths, writable sets and routes.
import { compileVersions, type ApiVersion } from './versions.js';
import { HOLD_FIELD, holdable } from './state-rule.js';
import { actionNamesOf, relationsOf, type Relation } from './relations.js';
import type { AppDef, BelongsTo, FieldDef, FieldType, ResourceDef } from './types.js';

export type ScalarType = 'string' | 'integer' | 'boolean' | 'timestamp' | 'uuid' | 'enum';

/** A column as adapters create it: one per scalar field, two per money field. */
export interface Column {
  name: string;
  type: ScalarType | 'json';
}

/** A path the query language can name: a scalar field, `price.amount`, or a system field. */
export interface QueryPath {
  path: string;
  column: string;
  type: ScalarType;
  values?: readonly string[];
  /** Emails are stored lowercased, so filters on them are checked as emails and lowercased too. */
  email?: boolean;
  /** Values a filter on this path may take, as bodies would be validated (currencies, patterned strings). */
  pattern?: RegExp;
  filterable: boolean;
  sortable: boolean;
  /** Whether the column can hold null: keyset predicates and PostgreSQL's null ordering depend on it. */
  nullable: boolean;
}

export interface CompiledResource {
  def: ResourceDef;
  name: string;
  singular: string;
  table: string;
  fields: Record<string, FieldDef>;
  /** Fields that live in the store (every field except virtual ones, and the hold of src/model/state-rule.ts). */
  stored: Array<[string, FieldDef]>;
  /** Fields rendered to clients (not hidden, not write-only). */
  rendered: string[];
  columns: Column[];
  paths: Map<string, QueryPath>;
  searchable: string[];
  uniqueFields: string[];
  /**
   * (filter column, sort column) pairs indexed together with id: an enum filter is common and has
   * few values, so without them a filtered, sorted page sorts every matching row.
   */
  compositeIndexes: Array<[string, string]>;
  parents: BelongsTo[];
  /** Objects can be held by an operation in flight (the resource has an asynchronous action): HOLD_FIELD is stored. */
  holdable: boolean;
  /** Nested collections under this resource: `/users/{id}/orders`. */
  children: Array<{ resource: string; field: string }>;
  /** Named relations both ways (src/model/relations.ts): `order.user`, `order.items`. */
  relations: Relation[];
  /** The operation name of each POST action by the action's name: `{ cancel: 'cancelOrder', payment: 'payOrder' }`. */
  actionNames: Record<string, string>;
}

export interface CompiledModel {
  resources: Map<string, CompiledResource>;
  users: string;
  app: AppDef;
  /** Newest first; the first is the version the core speaks (src/model/versions.ts). */
  versions: ApiVersion[];
}

const SCALAR: Record<Exclude<FieldType, 'money' | 'string[]' | 'object'>, ScalarType> = {
  string: 'string',
  email: 'string',
  uuid: 'uuid',
  integer: 'integer',
  boolean: 'boolean',
  enum: 'enum',
  timestamp: 'timestamp',
};

/** ISO 4217 alphabetic codes, as money bodies are validated. */
const CURRENCY = /^[A-Z]{3}$/;

export function tableName(resource: string): string {
  return resource.replace(/-/g, '_');
}

/** The hold as a stored field: hidden (never rendered, queried or written by clients), set by the services alone. */
const HOLD: FieldDef = { type: 'uuid', hidden: true, readOnly: true };

function compileResource(def: ResourceDef, app: AppDef): CompiledResource {
  if (HOLD_FIELD in def.fields) throw new Error(`${def.name}.${HOLD_FIELD}: the name is reserved for the state rule`);
  const canHold = holdable(def);
  const stored = Object.entries(def.fields).filter(([, f]) => !f.virtual);
  if (canHold) stored.push([HOLD_FIELD, HOLD]);
  const columns: Column[] = [];
  const paths = new Map<string, QueryPath>();
  // System fields: every resource filters and sorts by id and created_at (DESIGN §3 lists them
  // per resource; allowing them on all is an additive superset); updated_at is informational only.
  paths.set('id', { path: 'id', column: 'id', type: 'uuid', filterable: true, sortable: true, nullable: false });
  // Internal bookkeeping tables are never listed by clients: no created_at index to keep up on every write.
  const queryable = !def.internal;
  paths.set('created_at', { path: 'created_at', column: 'created_at', type: 'timestamp', filterable: queryable, sortable: queryable, nullable: false });
  for (const [name, field] of stored) {
    if (field.type === 'money') {
      columns.push({ name: `${name}_amount`, type: 'integer' }, { name: `${name}_currency`, type: 'string' });
      const nullable = !field.required && field.default === undefined;
      paths.set(`${name}.amount`, { path: `${name}.amount`, column: `${name}_amount`, type: 'integer', filterable: !!field.filterable, sortable: !!field.sortable, nullable });
      paths.set(`${name}.currency`, {
        path: `${name}.currency`,
        column: `${name}_currency`,
        type: 'string',
        pattern: CURRENCY,
        filterable: !!field.filterable,
        sortable: false,
        nullable,
      });
    } else if (field.type === 'string[]' || field.type === 'object') {
      columns.push({ name, type: 'json' });
    } else {
      const type = SCALAR[field.type];
      columns.push({ name, type });
      if (!field.hidden) {
        paths.set(name, {
          path: name,
          column: name,
          type,
          ...(field.values ? { values: field.values } : {}),
          ...(field.type === 'email' ? { email: true } : {}),
          ...(field.pattern ? { pattern: new RegExp(field.pattern, 'u') } : {}),
          filterable: !!field.filterable,
          sortable: !!field.sortable,
          nullable: !field.required && field.default === undefined,
        });
      }
    }
  }

  const children: Array<{ resource: string; field: string }> = [];
  for (const other of app.resources) {
    for (const rel of other.belongsTo ?? []) {
      if (rel.resource === def.name && rel.nested) children.push({ resource: other.name, field: rel.field });
    }
  }
  return {
    def,
    name: def.name,
    singular: def.singular,
    table: tableName(def.name),
    fields: def.fields,
    stored,
    rendered: [
      'id',
      ...Object.entries(def.fields)
        .filter(([, f]) => !f.hidden && !f.writeOnly && !f.virtual)
        .map(([n]) => n),
      'created_at',
      'updated_at',
    ],
    columns,
    paths,
    searchable: stored.filter(([, f]) => f.searchable).map(([n]) => n),
    uniqueFields: stored.filter(([, f]) => f.unique).map(([n]) => n),
    compositeIndexes: [...paths.values()]
      .filter((p) => p.filterable && p.type === 'enum')
      .flatMap((f) => [...paths.values()].filter((s) => s.sortable && s.path !== 'id' && s.column !== f.column).map((s): [string, string] => [f.column, s.column])),
    parents: def.belongsTo ?? [],
    holdable: canHold,
    children,
    relations: relationsOf(def, app),
    actionNames: actionNamesOf(def),
  };
}

/** `versionsInPath`: false when requests name their version otherwise than in the path (links then have no version segment). */
export function compileModel(app: AppDef, options: { versionsInPath?: boolean } = {}): CompiledModel {
  const resources = new Map<string, CompiledResource>();
  for (const def of app.resources) resources.set(def.name, compileResource(def, app));
  const versions = compileVersions(app.versions, options.versionsInPath ?? true);
  for (const v of versions) {
    for (const change of v.changesToNext) {
      const r = resources.get(change.resource);
      if (!r) throw new Error(`version ${v.name}: a change names the unknown resource ${change.resource}`);
      for (const m of change.fields) {
        const field = 'rename' in m ? m.rename.to : 'nest' in m ? m.nest.into : undefined;
        if (field !== undefined && !(field in r.fields)) throw new Error(`version ${v.name}: ${change.resource}.${field} is not a field of the newest version`);
      }
    }
  }
  return { resources, users: app.users, app, versions };
}

/** The version named `name` (`v2`), if the app serves it. */
export function versionOf(model: CompiledModel, name: string): ApiVersion | undefined {
  return model.versions.find((v) => v.name === name);
}

/** The newest version: what the core, its events and its platform routes speak. */
export function newestVersion(model: CompiledModel): ApiVersion {
  return model.versions[0]!;
}

export function resourceOf(model: CompiledModel, name: string): CompiledResource {
  const r = model.resources.get(name);
  if (!r) throw new Error(`unknown resource ${name}`);
  return r;
}

/** Whether a resource's changes write events: not platform bookkeeping, not records about the event pipeline itself. */
export function emitsEvents(r: CompiledResource): boolean {
  return !r.def.internal && r.def.events !== false;
}
