// The GraphQL type of each model field, for objects and inputs: scalars, enums per field, Money, lists of text and JSON.
import {
  GraphQLBoolean,
  GraphQLEnumType,
  GraphQLID,
  GraphQLInputObjectType,
  GraphQLInt,
  GraphQLList,
  GraphQLNonNull,
  GraphQLObjectType,
  GraphQLString,
  type GraphQLEnumValueConfigMap,
  type GraphQLInputType,
  type GraphQLOutputType,
} from 'graphql';
import { pascalCase } from '../lib/names.js';
import type { CompiledResource } from '../model/compile.js';
import type { FieldDef } from '../model/types.js';
import { DateTime, JSONValue, SafeInt } from './scalars.js';
import { typeName } from './names.js';

const INT32 = { min: -2_147_483_648, max: 2_147_483_647 };
/** GraphQL names (spec §2.1.9); an enum value must be one, and not true, false or null (§3.9). */
const NAME = /^[_A-Za-z][_0-9A-Za-z]*$/;

/** Money as REST shows it (DESIGN §3): an integer amount in minor units and an ISO 4217 code. */
export const Money = new GraphQLObjectType({
  name: 'Money',
  description: 'An amount of money: an integer in minor units (cents) and its ISO 4217 currency code.',
  fields: {
    amount: { type: new GraphQLNonNull(SafeInt), description: 'In minor units (2590 is 25.90).' },
    currency: { type: new GraphQLNonNull(GraphQLString), description: 'ISO 4217 alphabetic code (`EUR`).' },
  },
});

/** Money in a body; both parts are checked as REST checks them (a merge patch may send one). */
export const MoneyInput = new GraphQLInputObjectType({
  name: 'MoneyInput',
  description: 'An amount of money: `amount` in minor units and `currency`, an ISO 4217 code; an update may send either.',
  fields: { amount: { type: SafeInt }, currency: { type: GraphQLString } },
});

/** Int where the field's bounds fit 32 bits (a rating, a quantity), SafeInt otherwise. */
export function integerType(field: FieldDef | undefined): typeof GraphQLInt | typeof SafeInt {
  const fits = field?.minimum !== undefined && field.maximum !== undefined && field.minimum >= INT32.min && field.maximum <= INT32.max;
  return fits ? GraphQLInt : SafeInt;
}

/** Enums by type and field, built once: `OrderStatus` serves the object, its inputs and its filter. */
export class EnumTypes {
  private readonly made = new Map<string, GraphQLEnumType>();

  /** The enum of `r.field`, or undefined when a value is no GraphQL name (then the field is text). */
  of(r: CompiledResource, name: string, values: readonly string[]): GraphQLEnumType | undefined {
    if (!values.every((v) => NAME.test(v) && v !== 'true' && v !== 'false' && v !== 'null')) return undefined;
    const typeNameOf = `${typeName(r)}${pascalCase(name)}`;
    let made = this.made.get(typeNameOf);
    if (!made) {
      const config: GraphQLEnumValueConfigMap = {};
      for (const v of values) config[v] = { value: v };
      made = new GraphQLEnumType({ name: typeNameOf, values: config, description: `The values of ${typeName(r)}.${name}, as REST writes them.` });
      this.made.set(typeNameOf, made);
    }
    return made;
  }
}

/** A field's type in objects (nullable unless the model says it is never null). */
export function outputType(enums: EnumTypes, r: CompiledResource, name: string, field: FieldDef): GraphQLOutputType {
  let type: GraphQLOutputType;
  switch (field.type) {
    case 'string':
    case 'email':
      type = GraphQLString;
      break;
    case 'uuid':
      type = GraphQLID;
      break;
    case 'integer':
      type = integerType(field);
      break;
    case 'boolean':
      type = GraphQLBoolean;
      break;
    case 'enum':
      type = enums.of(r, name, field.values ?? []) ?? GraphQLString;
      break;
    case 'timestamp':
      type = DateTime;
      break;
    case 'money':
      type = Money;
      break;
    case 'string[]':
      type = new GraphQLList(new GraphQLNonNull(GraphQLString));
      break;
    case 'object':
      type = JSONValue;
      break;
  }
  // Required fields, and those with a default (a merge patch removing one restores it), are never null.
  return field.required || field.default !== undefined ? new GraphQLNonNull(type) : type;
}

/**
 * A field's type in inputs: always nullable, so a missing required field or a null reaches the services and
 * comes back as REST's VALIDATION_ERROR with a detail per field, and a merge patch's null removes a value.
 */
export function inputType(enums: EnumTypes, r: CompiledResource, name: string, field: FieldDef): GraphQLInputType {
  switch (field.type) {
    case 'money':
      return MoneyInput;
    case 'string[]':
      return new GraphQLList(new GraphQLNonNull(GraphQLString));
    case 'object':
      return JSONValue;
    case 'enum':
      return enums.of(r, name, field.values ?? []) ?? GraphQLString;
    default:
      return (outputType(enums, r, name, { ...field, required: false, default: undefined }) as GraphQLInputType) ?? GraphQLString;
  }
}
