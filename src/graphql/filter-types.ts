// Filter input types (DESIGN §7): REST's filterable paths of each resource, each with `eq ne gt gte lt lte in`, money parts nested (`price { amount { gte } }`).
import { GraphQLBoolean, GraphQLID, GraphQLInputObjectType, GraphQLList, GraphQLNonNull, GraphQLString, type GraphQLInputFieldConfigMap, type GraphQLInputType } from 'graphql';
import { pascalCase } from '../lib/names.js';
import type { CompiledResource, QueryPath } from '../model/compile.js';
import { MAX_IN } from '../query/list-parameters.js';
import { integerType, type EnumTypes } from './field-types.js';
import { filterPath, OPERATORS } from './list-args.js';
import { typeName } from './names.js';
import { DateTime, SafeInt } from './scalars.js';

const MEANING: Record<(typeof OPERATORS)[number], string> = {
  eq: 'equal to',
  ne: 'not equal to (null values included)',
  gt: 'greater than',
  gte: 'greater than or equal to',
  lt: 'less than',
  lte: 'less than or equal to',
  in: `one of these (at most ${MAX_IN})`,
};

export class FilterTypes {
  /** Operator inputs by value type (`StringFilter`, `OrderStatusFilter`): one per type, shared by every field of it. */
  private readonly operators = new Map<string, GraphQLInputObjectType>();
  private readonly filters = new Map<string, GraphQLInputObjectType>();

  constructor(private readonly enums: EnumTypes) {}

  private operatorsOf(value: GraphQLInputType & { name: string }): GraphQLInputObjectType {
    const name = `${value.name}Filter`;
    let made = this.operators.get(name);
    if (!made) {
      const fields: GraphQLInputFieldConfigMap = {};
      for (const op of OPERATORS) fields[op] = { type: op === 'in' ? new GraphQLList(new GraphQLNonNull(value)) : value, description: MEANING[op] };
      made = new GraphQLInputObjectType({ name, description: `Conditions on a ${value.name} value; all given must hold.`, fields });
      this.operators.set(name, made);
    }
    return made;
  }

  /** The value type of a filterable path: what REST's filter on it parses (src/query/values.ts). */
  private valueOf(r: CompiledResource, p: QueryPath): GraphQLInputType & { name: string } {
    const field = r.fields[p.path];
    switch (p.type) {
      case 'uuid':
        return GraphQLID;
      case 'integer':
        // A money amount, or an integer field by its bounds.
        return p.path.includes('.') ? SafeInt : integerType(field);
      case 'boolean':
        return GraphQLBoolean;
      case 'timestamp':
        return DateTime;
      case 'enum':
        return this.enums.of(r, p.path, p.values ?? []) ?? GraphQLString;
      default:
        return GraphQLString;
    }
  }

  /** `ProductFilter`: every filterable path of `r` (id and createdAt included, as REST has them), all given must hold. */
  of(r: CompiledResource): GraphQLInputObjectType {
    let made = this.filters.get(r.name);
    if (made) return made;
    const fields: GraphQLInputFieldConfigMap = {};
    const nested = new Map<string, GraphQLInputFieldConfigMap>();
    for (const p of r.paths.values()) {
      if (!p.filterable) continue;
      const [outer, inner] = filterPath(p.path);
      const operators = this.operatorsOf(this.valueOf(r, p));
      if (inner === undefined) fields[outer] = { type: operators };
      else {
        if (!nested.has(outer)) nested.set(outer, {});
        nested.get(outer)![inner] = { type: operators };
      }
    }
    for (const [outer, parts] of nested) {
      fields[outer] = {
        type: new GraphQLInputObjectType({ name: `${typeName(r)}${pascalCase(outer)}Filter`, description: `Conditions on the parts of ${outer}.`, fields: parts }),
      };
    }
    made = new GraphQLInputObjectType({ name: `${typeName(r)}Filter`, description: `Conditions on ${r.name}, as REST's filters: all given must hold.`, fields });
    this.filters.set(r.name, made);
    return made;
  }
}
