// Enum values given by name in a JSON request (REST, Connect JSON, gRPC +json) must be names
// the enum has. The decoders ignore unknown fields (as grpc-gateway and connect-go do), and
// with that option @bufbuild/protobuf also drops an enum name it does not know: the field
// is then unset, which the commands read as UNSPECIFIED, so `"gender": "GENDER_FOO"` cleared
// a stored gender instead of being refused as GraphQL refuses it. This check runs on the
// parsed JSON before it is decoded, by the message's descriptor; it looks only at fields the
// message has (unknown fields stay ignored) and never inside google.protobuf types
// (Struct, Value and the like hold free JSON). A number is left to the decoder and the
// command, which refuse values the enum does not have.
import type { DescEnum, DescField, DescMessage } from '@bufbuild/protobuf';
import { Code, ConnectError } from '@connectrpc/connect';

/** The JSON path and text of the first enum name `message` does not have, or undefined. */
export function unknownEnumName(message: DescMessage, json: unknown, path = ''): string | undefined {
  if (json === null || typeof json !== 'object' || Array.isArray(json) || message.typeName.startsWith('google.protobuf.')) return undefined;
  for (const [key, value] of Object.entries(json)) {
    const field = message.fields.find((f) => f.jsonName === key || f.name === key);
    if (!field || value === null) continue;
    const at = path ? `${path}.${key}` : key;
    const found = inField(field, value, at);
    if (found) return found;
  }
  return undefined;
}

function inField(field: DescField, value: unknown, at: string): string | undefined {
  const each = (values: unknown[], check: (v: unknown, where: string) => string | undefined) => {
    for (let i = 0; i < values.length; i++) {
      const found = check(values[i], `${at}[${i}]`);
      if (found) return found;
    }
    return undefined;
  };
  switch (field.fieldKind) {
    case 'enum':
      return badName(field.enum, value, at);
    case 'message':
      return unknownEnumName(field.message, value, at);
    case 'list':
      if (!Array.isArray(value)) return undefined;
      if (field.listKind === 'enum') return each(value, (v, where) => badName(field.enum, v, where));
      if (field.listKind === 'message') return each(value, (v, where) => unknownEnumName(field.message, v, where));
      return undefined;
    case 'map':
      if (value === null || typeof value !== 'object' || Array.isArray(value)) return undefined;
      if (field.mapKind === 'enum') return each(Object.values(value), (v, where) => badName(field.enum, v, where));
      if (field.mapKind === 'message') return each(Object.values(value), (v, where) => unknownEnumName(field.message, v, where));
      return undefined;
    default:
      return undefined;
  }
}

function badName(desc: DescEnum, value: unknown, at: string): string | undefined {
  if (typeof value !== 'string' || desc.typeName.startsWith('google.protobuf.')) return undefined;
  return desc.values.some((v) => v.name === value) ? undefined : `${at}: "${value.slice(0, 60)}" is not a value of ${desc.typeName}`;
}

/** INVALID_ARGUMENT for a JSON request naming an enum value its enum does not have; undefined when it may be decoded. */
export function enumNameRefusal(message: DescMessage, json: unknown): ConnectError | undefined {
  const found = unknownEnumName(message, json);
  return found === undefined ? undefined : new ConnectError(`invalid enum value at ${found}`, Code.InvalidArgument);
}
