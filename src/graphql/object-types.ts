// Object, connection and input types of every resource the schema serves (DESIGN §7): v2 fields in camelCase, relations both ways, Relay connections.
import {
  GraphQLBoolean,
  GraphQLID,
  GraphQLInputObjectType,
  GraphQLInt,
  GraphQLList,
  GraphQLNonNull,
  GraphQLObjectType,
  GraphQLString,
  type GraphQLFieldConfigArgumentMap,
  type GraphQLFieldConfigMap,
  type GraphQLInputFieldConfigMap,
} from 'graphql';
import { pascalCase } from '../lib/names.js';
import type { CompiledResource } from '../model/compile.js';
import type { FieldDef } from '../model/types.js';
import { DEFAULT_LIMIT, MAX_LIMIT } from '../query/list-parameters.js';
import { etagOf } from '../services/etags.js';
import { actionFields, OperationStatus } from './action-fields.js';
import type { ObjectSource } from './object-source.js';
import { edgesOf, type ConnectionSource, type Edge } from './connections.js';
import type { Context } from './context.js';
import { EnumTypes, inputType, outputType } from './field-types.js';
import { FilterTypes } from './filter-types.js';
import { fieldName, typeName } from './names.js';
import { DateTime } from './scalars.js';
import { toManyConnection, toManyList, toOne } from './relation-fields.js';

/** An object as resolvers hand it on: the record, what the caller may do with it, and secrets a create or action shows once. */
export type { ObjectSource };

/** Relay's PageInfo (https://relay.dev/graphql/connections.htm §5): hasPreviousPage is true only after a cursor (it is not counted). */
export const PageInfo = new GraphQLObjectType<ConnectionSource, Context>({
  name: 'PageInfo',
  description: 'Where a page of a connection stands: whether more follow, and the cursors of its first and last edges.',
  fields: {
    hasNextPage: { type: new GraphQLNonNull(GraphQLBoolean), resolve: (s) => s.hasNextPage },
    hasPreviousPage: { type: new GraphQLNonNull(GraphQLBoolean), description: 'True when the page starts after a cursor.', resolve: (s) => s.hasPreviousPage },
    startCursor: { type: GraphQLString, resolve: (s) => (s.rows.length ? s.cursorAt(0) : null) },
    endCursor: { type: GraphQLString, description: 'Pass it as `after` for the next page.', resolve: (s) => (s.rows.length ? s.cursorAt(s.rows.length - 1) : null) },
  },
});

/** The answer of an asynchronous action (REST's 202 body, `{"status":"processing"}`): its outcome follows later. */
export const AcceptedOperation = new GraphQLObjectType({
  name: 'AcceptedOperation',
  description: 'An asynchronous action was accepted (REST answers 202): a worker performs it; the object shows the outcome.',
  fields: {
    status: {
      type: new GraphQLNonNull(OperationStatus),
    },
  },
});

const FIRST = { type: GraphQLInt, defaultValue: DEFAULT_LIMIT, description: `How many (at most ${MAX_LIMIT}).` };

/** The arguments of a collection: the first, after a cursor, filtered, sorted by REST's sort strings, searched where the resource is. */
export function listArgs(filters: FilterTypes, r: CompiledResource, paged: boolean): GraphQLFieldConfigArgumentMap {
  return {
    first: FIRST,
    ...(paged ? { after: { type: GraphQLString, description: 'The endCursor of the page before.' } } : {}),
    filter: { type: filters.of(r) },
    sort: {
      type: GraphQLString,
      description: `REST's sort strings, comma-separated, \`-\` for descending: ${[...r.paths.values()]
        .filter((p) => p.sortable)
        .map((p) => fieldName(p.path))
        .join(', ')}; ties broken by id.`,
    },
    ...(paged && r.searchable.length > 0 ? { q: { type: GraphQLString, description: `Free text over ${r.searchable.map(fieldName).join(', ')}, best match first.` } } : {}),
  };
}

export class ObjectTypes {
  readonly enums = new EnumTypes();
  readonly filters = new FilterTypes(this.enums);
  private readonly objects = new Map<string, GraphQLObjectType>();
  private readonly connections = new Map<string, GraphQLObjectType>();

  /**
   * `served`: the resources the schema has (routed ones); relations to others are left out. `version`: the API
   * version the schema speaks (its ETags are REST's in it). `has`: whether REST serves an action's GET.
   */
  constructor(
    private readonly served: ReadonlyMap<string, CompiledResource>,
    private readonly version: string,
    private readonly has: (r: CompiledResource, action: string, asynchronous: boolean) => boolean,
  ) {}

  object(r: CompiledResource): GraphQLObjectType {
    let made = this.objects.get(r.name);
    if (!made) {
      made = new GraphQLObjectType<ObjectSource, Context>({
        name: typeName(r),
        ...(r.def.description ? { description: r.def.description } : {}),
        fields: () => this.fieldsOf(r),
      });
      this.objects.set(r.name, made);
    }
    return made;
  }

  private fieldsOf(r: CompiledResource): GraphQLFieldConfigMap<ObjectSource, Context> {
    const fields: GraphQLFieldConfigMap<ObjectSource, Context> = { id: { type: new GraphQLNonNull(GraphQLID), resolve: (s) => s.record.id } };
    for (const name of r.rendered) {
      if (name === 'id' || name === 'created_at' || name === 'updated_at') continue;
      const field = r.fields[name]!;
      fields[fieldName(name)] = {
        type: outputType(this.enums, r, name, field),
        ...(field.description ? { description: field.description } : {}),
        resolve: (s) => s.record[name] ?? null,
      };
    }
    fields.createdAt = { type: new GraphQLNonNull(DateTime), resolve: (s) => s.record.created_at };
    fields.updatedAt = { type: new GraphQLNonNull(DateTime), resolve: (s) => s.record.updated_at };
    // REST's ETag of the object for this caller (src/services/etags.ts): what `ifMatch` takes, and If-Match too.
    fields.etag = {
      type: new GraphQLNonNull(GraphQLString),
      description: 'The strong ETag REST sends for this object to this caller: pass it as `ifMatch` (or If-Match) to change it only as seen.',
      resolve: (s) => etagOf(s.record, s.access, this.version),
    };
    for (const [name, config] of Object.entries(actionFields(r, (action, asynchronous) => this.has(r, action, asynchronous)))) {
      if (name in fields) throw new Error(`${r.name}: the GET action ${name} has the name of a field`);
      fields[name] = config;
    }
    for (const [name, { description }] of Object.entries(r.def.revealed ?? {})) {
      fields[fieldName(name)] = {
        type: GraphQLString,
        description: `${description} Null except in that response.`,
        resolve: (s) => (s.reveal?.[name] as string | undefined) ?? null,
      };
    }
    for (const relation of r.relations) {
      const other = this.served.get(relation.resource);
      if (!other) continue;
      if (relation.kind === 'one') {
        fields[relation.name] = {
          type: this.object(other),
          description: `The ${other.singular.replace(/_/g, ' ')} named by ${fieldName(relation.field)}.`,
          resolve: toOne(relation),
        };
      } else {
        fields[relation.name] = {
          type: new GraphQLNonNull(new GraphQLList(new GraphQLNonNull(this.object(other)))),
          description: `The first ${other.name} whose ${fieldName(relation.field)} names this one (\`${relation.name}Connection\` pages them all).`,
          args: listArgs(this.filters, other, false),
          resolve: toManyList(r, other, relation),
        };
        fields[`${relation.name}Connection`] = {
          type: new GraphQLNonNull(this.connection(other)),
          description: `The ${other.name} whose ${fieldName(relation.field)} names this one, a page at a time.`,
          args: listArgs(this.filters, other, true),
          resolve: toManyConnection(r, other, relation),
        };
      }
    }
    return fields;
  }

  /** `ProductConnection` with `ProductEdge` (Relay connections); totalCount where it costs no query of its own, or when asked. */
  connection(r: CompiledResource): GraphQLObjectType {
    let made = this.connections.get(r.name);
    if (!made) {
      const edge = new GraphQLObjectType<Edge, Context>({
        name: `${typeName(r)}Edge`,
        fields: () => ({
          cursor: { type: new GraphQLNonNull(GraphQLString), resolve: (e) => e.cursor() },
          node: { type: new GraphQLNonNull(this.object(r)), resolve: (e) => e.node },
        }),
      });
      made = new GraphQLObjectType<ConnectionSource, Context>({
        name: `${typeName(r)}Connection`,
        description: `A page of ${r.name}.`,
        fields: () => ({
          edges: { type: new GraphQLNonNull(new GraphQLList(new GraphQLNonNull(edge))), resolve: edgesOf },
          pageInfo: { type: new GraphQLNonNull(PageInfo), resolve: (s) => s },
          totalCount: {
            type: GraphQLInt,
            description: 'How many there are in all: counted only when asked (a relation’s comes with its rows).',
            resolve: (s) => s.totalCount(),
          },
        }),
      });
      this.connections.set(r.name, made);
    }
    return made;
  }

  /** `ProductCreateInput` / `ProductUpdateInput` / `ProductReplaceInput`: the fields a body may carry for the operation, in camelCase; undefined when none. */
  input(r: CompiledResource, op: 'create' | 'update' | 'replace'): GraphQLInputObjectType | undefined {
    const fields: GraphQLInputFieldConfigMap = {};
    for (const [name, field] of Object.entries(r.fields)) {
      if (field.readOnly || field.hidden || (op !== 'create' && field.createOnly)) continue;
      fields[fieldName(name)] = { type: inputType(this.enums, r, name, field), ...describeInput(field, op === 'update' ? 'update' : 'create') };
    }
    if (Object.keys(fields).length === 0) return undefined;
    const what = { create: 'A new', update: 'Changes to a', replace: 'The whole new content of a' }[op];
    const how = {
      create: '',
      update: ' (a JSON Merge Patch: fields left out stay, null removes)',
      replace: ' (as REST’s PUT: fields left out take their defaults or are removed)',
    }[op];
    return new GraphQLInputObjectType({ name: `${typeName(r)}${pascalCase(op)}Input`, description: `${what} ${r.singular.replace(/_/g, ' ')}${how}.`, fields });
  }

  /** The input of an action that declares one (`ActionDef.input`): `RotateSecretWebhookEndpointInput`. */
  actionInput(r: CompiledResource, action: string, operation: string): GraphQLInputObjectType | undefined {
    const declared = r.def.actions?.[action]?.input;
    if (!declared || Object.keys(declared).length === 0) return undefined;
    const fields: GraphQLInputFieldConfigMap = {};
    for (const [name, field] of Object.entries(declared))
      fields[fieldName(name)] = { type: inputType(this.enums, r, `${action}_${name}`, field), ...describeInput(field, 'create') };
    return new GraphQLInputObjectType({ name: `${pascalCase(operation)}Input`, fields });
  }
}

function describeInput(field: FieldDef, op: 'create' | 'update'): { description?: string } {
  const notes = [
    field.description,
    op === 'create' && field.required ? 'Required.' : undefined,
    field.writableBy ? `Only ${field.writableBy.join(', ')} may set it.` : undefined,
  ].filter(Boolean);
  return notes.length ? { description: notes.join(' ') } : {};
}
