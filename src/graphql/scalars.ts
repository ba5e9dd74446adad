// The custom scalars of the schema: DateTime (RFC 3339 text, as REST shows it), SafeInt (integers JSON numbers hold exactly) and JSON (free-form objects).
import { GraphQLError, GraphQLScalarType, Kind, valueFromASTUntyped, type ValueNode } from 'graphql';

/**
 * Timestamps as REST shows them: ISO 8601 UTC with milliseconds (DESIGN §3). Input is taken as text and checked
 * where REST checks it (filters, bodies), so a bad date gets the same INVALID_QUERY or VALIDATION_ERROR detail.
 */
export const DateTime = new GraphQLScalarType<string, string>({
  name: 'DateTime',
  description: 'An instant as RFC 3339 text in UTC with milliseconds (`2026-11-21T10:00:00.000Z`), as REST shows it.',
  specifiedByURL: 'https://www.rfc-editor.org/rfc/rfc3339',
  serialize: (value) => {
    if (typeof value !== 'string') throw new GraphQLError('DateTime holds RFC 3339 text.');
    return value;
  },
  parseValue: (value) => {
    if (typeof value !== 'string') throw new GraphQLError('DateTime takes RFC 3339 text, such as "2026-11-21T10:00:00.000Z".');
    return value;
  },
  parseLiteral: (ast) => {
    if (ast.kind !== Kind.STRING) throw new GraphQLError('DateTime takes RFC 3339 text, such as "2026-11-21T10:00:00.000Z".', { nodes: ast });
    return ast.value;
  },
});

function safeInteger(value: unknown): number {
  if (typeof value !== 'number' || !Number.isSafeInteger(value)) throw new GraphQLError(`SafeInt takes an integer from -(2^53 - 1) to 2^53 - 1, not ${String(value)}.`);
  return value;
}

/**
 * Money amounts reach 999,999,999,999,999 minor units (src/model/money.ts), past GraphQL's 32-bit Int: an integer
 * a JSON number holds exactly (IEEE 754 doubles, RFC 8259 §6) is what REST sends.
 */
export const SafeInt = new GraphQLScalarType<number, number>({
  name: 'SafeInt',
  description: 'An integer from -(2^53 - 1) to 2^53 - 1: what a JSON number holds exactly (money amounts in minor units).',
  serialize: safeInteger,
  parseValue: safeInteger,
  parseLiteral: (ast) => {
    if (ast.kind !== Kind.INT) throw new GraphQLError('SafeInt takes an integer.', { nodes: ast });
    return safeInteger(Number(ast.value));
  },
});

/** Free-form JSON, for the model's `object` fields (a delivery's attempts): the same value REST shows. */
export const JSONValue = new GraphQLScalarType<unknown, unknown>({
  name: 'JSON',
  description: 'Any JSON value, as REST shows it (free-form `object` fields).',
  specifiedByURL: 'https://www.rfc-editor.org/rfc/rfc8259',
  serialize: (value) => value,
  parseValue: (value) => value,
  parseLiteral: (ast: ValueNode, variables?: { [name: string]: unknown } | null) => valueFromASTUntyped(ast, variables ?? undefined),
});
