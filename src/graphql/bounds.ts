// Depth and cost of an operation, measured on the document before anything runs (DESIGN §7: depth 10, cost 10,000, a list counting `first` times its selection).
import {
  Kind,
  getNamedType,
  isCompositeType,
  isInterfaceType,
  isObjectType,
  valueFromASTUntyped,
  type DocumentNode,
  type FragmentDefinitionNode,
  type GraphQLCompositeType,
  type GraphQLField,
  type GraphQLSchema,
  type OperationDefinitionNode,
  type SelectionSetNode,
  type ValueNode,
} from 'graphql';
import { MAX_LIMIT } from '../query/list-parameters.js';

export interface Measure {
  /** The deepest nesting of fields, the root's fields at 1 (leaves count). */
  depth: number;
  /** Objects the response can hold: each object field 1, a paged field's selection `first` times. */
  cost: number;
}

/** `first` as it will be taken: given, from a variable, or the argument's default; bounded as the query layer bounds it. */
function firstOf(field: GraphQLField<unknown, unknown>, args: readonly { name: { value: string }; value: ValueNode }[], variables: Record<string, unknown>): number | undefined {
  const def = field.args.find((a) => a.name === 'first');
  if (!def) return undefined;
  const given = args.find((a) => a.name.value === 'first');
  let value: unknown = def.defaultValue;
  if (given) value = given.value.kind === Kind.VARIABLE ? (variables[given.value.name.value] ?? def.defaultValue) : valueFromASTUntyped(given.value, variables);
  // A value the query layer refuses (0, 1000, text) is refused there, by name; counted here as the largest page.
  return typeof value === 'number' && Number.isInteger(value) && value >= 1 && value <= MAX_LIMIT ? value : MAX_LIMIT;
}

/**
 * Walks the operation as it will execute: fragments in place, introspection (`__schema`, `__type`, `__typename`)
 * left out (introspection is allowed or refused as a whole, CANON_GRAPHQL_INTROSPECTION). Validation has run, so
 * every field exists and fragments do not cycle; the walk still stops past `stopAt` levels, whatever the document.
 */
export function measure(schema: GraphQLSchema, document: DocumentNode, operation: OperationDefinitionNode, variables: Record<string, unknown>, stopAt: number): Measure {
  // Variables as execution takes them: those sent, else the operation's defaults.
  const given: Record<string, unknown> = {};
  for (const v of operation.variableDefinitions ?? []) if (v.defaultValue) given[v.variable.name.value] = valueFromASTUntyped(v.defaultValue);
  Object.assign(given, variables);
  variables = given;
  const fragments = new Map<string, FragmentDefinitionNode>();
  for (const d of document.definitions) if (d.kind === Kind.FRAGMENT_DEFINITION) fragments.set(d.name.value, d);
  const root = operation.operation === 'mutation' ? schema.getMutationType() : operation.operation === 'subscription' ? schema.getSubscriptionType() : schema.getQueryType();
  if (!root) return { depth: 0, cost: 0 };

  const walk = (type: GraphQLCompositeType, set: SelectionSetNode, level: number): Measure => {
    let depth = 0;
    let cost = 0;
    if (level > stopAt) return { depth: level, cost: 0 };
    for (const selection of set.selections) {
      let inner: Measure;
      if (selection.kind === Kind.FIELD) {
        if (selection.name.value.startsWith('__')) continue;
        const field = isObjectType(type) || isInterfaceType(type) ? type.getFields()[selection.name.value] : undefined;
        if (!field) continue;
        const named = getNamedType(field.type);
        if (!selection.selectionSet || !isCompositeType(named)) {
          inner = { depth: level, cost: 0 };
        } else {
          const below = walk(named, selection.selectionSet, level + 1);
          const times = firstOf(field, selection.arguments ?? [], variables) ?? 1;
          inner = { depth: Math.max(level, below.depth), cost: 1 + times * below.cost };
        }
      } else {
        const fragment = selection.kind === Kind.INLINE_FRAGMENT ? selection : fragments.get(selection.name.value);
        if (!fragment) continue;
        const condition = fragment.typeCondition ? schema.getType(fragment.typeCondition.name.value) : type;
        inner = condition && isCompositeType(condition) ? walk(condition, fragment.selectionSet, level) : { depth: 0, cost: 0 };
      }
      depth = Math.max(depth, inner.depth);
      cost += inner.cost;
    }
    return { depth, cost };
  };
  return walk(root, operation.selectionSet, 1);
}
