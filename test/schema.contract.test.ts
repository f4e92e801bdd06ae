// schema.graphql is what the code prints, and holds everything of CONTRACT.graphql.
import { existsSync, readdirSync, readFileSync } from 'node:fs';
import path from 'node:path';
import { generate } from '@graphql-codegen/cli';
import {
  buildSchema as buildFromSdl,
  isEnumType,
  isInputObjectType,
  isInterfaceType,
  isObjectType,
  isScalarType,
  isSpecifiedScalarType,
  type GraphQLNamedType,
  type GraphQLSchema,
} from 'graphql';
import { describe, expect, it } from 'vitest';
import codegenConfig, { generatedDir } from '../codegen.ts';
import { printSchemaFromCode, printSubgraphFromCode, schemaPath, subgraphPath } from '../scripts/print-schema.ts';

const contractPath = 'test/contract/CONTRACT.graphql';
const sharedContract = '../shared/CONTRACT.graphql';

/** Every difference between the contract and the schema, as readable lines. */
export function contractGaps(contract: GraphQLSchema, schema: GraphQLSchema): string[] {
  const gaps: string[] = [];
  for (const type of Object.values(contract.getTypeMap())) {
    if (type.name.startsWith('__') || isSpecifiedScalarType(type)) continue;
    const actual = schema.getType(type.name);
    if (!actual) {
      gaps.push(`type ${type.name} is missing`);
      continue;
    }
    gaps.push(...typeGaps(type, actual));
  }
  return gaps;
}

function typeGaps(expected: GraphQLNamedType, actual: GraphQLNamedType): string[] {
  const kind = (t: GraphQLNamedType) =>
    isObjectType(t)
      ? 'object'
      : isInputObjectType(t)
        ? 'input'
        : isEnumType(t)
          ? 'enum'
          : isScalarType(t)
            ? 'scalar'
            : isInterfaceType(t)
              ? 'interface'
              : 'union';
  if (kind(expected) !== kind(actual)) return [`${expected.name} is a ${kind(actual)}, not a ${kind(expected)}`];
  const gaps: string[] = [];
  if (isEnumType(expected) && isEnumType(actual)) {
    for (const v of expected.getValues()) if (!actual.getValue(v.name)) gaps.push(`enum value ${expected.name}.${v.name} is missing`);
  }
  if (isObjectType(expected) && isObjectType(actual)) {
    const fields = actual.getFields();
    for (const f of Object.values(expected.getFields())) {
      const name = `${expected.name}.${f.name}`;
      const a = fields[f.name];
      if (!a) {
        gaps.push(`field ${name} is missing`);
        continue;
      }
      if (String(a.type) !== String(f.type)) gaps.push(`field ${name} is ${a.type}, contract says ${f.type}`);
      if (f.deprecationReason && a.deprecationReason !== f.deprecationReason)
        gaps.push(`field ${name} lacks @deprecated(reason: "${f.deprecationReason}")`);
      for (const arg of f.args) {
        const b = a.args.find((x) => x.name === arg.name);
        if (!b) gaps.push(`argument ${name}(${arg.name}) is missing`);
        else if (String(b.type) !== String(arg.type)) gaps.push(`argument ${name}(${arg.name}) is ${b.type}, contract says ${arg.type}`);
      }
      for (const b of a.args) {
        if (!f.args.some((x) => x.name === b.name) && String(b.type).endsWith('!'))
          gaps.push(`argument ${name}(${b.name}) is required but not in the contract`);
      }
    }
  }
  if (isInputObjectType(expected) && isInputObjectType(actual)) {
    const fields = actual.getFields();
    for (const f of Object.values(expected.getFields())) {
      const name = `${expected.name}.${f.name}`;
      const a = fields[f.name];
      if (!a) {
        gaps.push(`input field ${name} is missing`);
        continue;
      }
      if (String(a.type) !== String(f.type)) gaps.push(`input field ${name} is ${a.type}, contract says ${f.type}`);
      if (JSON.stringify(a.defaultValue) !== JSON.stringify(f.defaultValue)) {
        gaps.push(`input field ${name} defaults to ${JSON.stringify(a.defaultValue)}, contract says ${JSON.stringify(f.defaultValue)}`);
      }
    }
    for (const a of Object.values(fields)) {
      if (!expected.getFields()[a.name] && String(a.type).endsWith('!'))
        gaps.push(`input field ${expected.name}.${a.name} is required but not in the contract`);
    }
  }
  return gaps;
}

describe('schema.graphql', () => {
  const printed = printSchemaFromCode();

  it('is what the code prints (run `npm run schema` when this fails)', () => {
    expect(readFileSync(schemaPath, 'utf8')).toBe(printed);
  });

  it(`${subgraphPath} is the subgraph SDL that _service { sdl } answers (run \`npm run schema\` when this fails)`, () => {
    expect(readFileSync(subgraphPath, 'utf8')).toBe(printSubgraphFromCode());
  });

  it('holds every type, field, argument, enum value and nullability of CONTRACT.graphql', () => {
    const gaps = contractGaps(buildFromSdl(readFileSync(contractPath, 'utf8')), buildFromSdl(printed));
    expect(gaps).toEqual([]);
  });

  it('notices a dropped field, a changed nullability and a renamed enum value', () => {
    const contract = buildFromSdl('type Query { a(x: ID!): String! b: Int } enum E { ONE TWO }');
    const schema = buildFromSdl('type Query { a(x: ID): String } enum E { ONE }');
    expect(contractGaps(contract, schema)).toEqual([
      'field Query.a is String, contract says String!',
      'argument Query.a(x) is ID, contract says ID!',
      'field Query.b is missing',
      'enum value E.TWO is missing',
    ]);
  });

  // CI always has ../shared beside the clone; elsewhere (a clone on its own) say loudly what is not checked.
  const haveShared = existsSync(sharedContract) || !!process.env.CI;
  if (!haveShared) console.warn(`\n!!! SKIPPED: ${sharedContract} not found: the copy in ${contractPath} is not compared with it\n`);
  it.skipIf(!haveShared)('keeps its copy of the contract equal to shared/CONTRACT.graphql', () => {
    expect(readFileSync(contractPath, 'utf8')).toBe(readFileSync(sharedContract, 'utf8'));
  });
});

describe('typed documents', () => {
  it(`${generatedDir} is what codegen.ts generates, and nothing else (run \`npm run codegen\` when this fails)`, async () => {
    // generate's type is `FileOutput[] | any` (watch mode never returns): said here.
    const files: { filename: string; content: string }[] = await generate({ ...codegenConfig, silent: true }, false);
    const expected = Object.fromEntries(files.map((f) => [path.relative(generatedDir, f.filename), f.content]));
    const onDisk = Object.fromEntries(readdirSync(generatedDir).map((name) => [name, readFileSync(path.join(generatedDir, name), 'utf8')]));
    expect(Object.keys(onDisk).sort()).toEqual(Object.keys(expected).sort());
    for (const [name, content] of Object.entries(expected)) expect(onDisk[name], name).toBe(content);
  });
});
