import { GraphQLDateTime, GraphQLJSONObject } from 'graphql-scalars';
import { GraphQLError, Kind } from 'graphql';
import { isStandardBase64 } from '../model/base64.ts';
import type { Builder } from './builder.ts';

export function addScalars(builder: Builder) {
  builder.addScalarType('DateTime', GraphQLDateTime, {});
  builder.addScalarType('JSONObject', GraphQLJSONObject, {});
  builder.scalarType('UInt64', {
    description: 'Unsigned 64-bit integer, serialized as a decimal string (uint64 renders as a string in JSON).',
    serialize: (v) => BigInt(v as number | bigint | string).toString(),
    parseValue: (v) => parseUInt64(v),
    parseLiteral: (ast) => parseUInt64(ast.kind === Kind.STRING || ast.kind === Kind.INT ? ast.value : undefined),
  });
  builder.scalarType('Base64', {
    description: 'Bytes, as standard base64 text.',
    serialize: (v) => v,
    parseValue: (v) => parseBase64(v),
    parseLiteral: (ast) => parseBase64(ast.kind === Kind.STRING ? ast.value : undefined),
  });
}

function parseUInt64(v: unknown): string {
  if (typeof v === 'string' && /^\d{1,20}$/.test(v) && BigInt(v) < 2n ** 64n) return v;
  throw new GraphQLError('UInt64 must be a decimal string of an unsigned 64-bit integer');
}

function parseBase64(v: unknown): string {
  if (typeof v === 'string' && isStandardBase64(v)) return v;
  throw new GraphQLError('Base64 must be standard base64 text');
}
