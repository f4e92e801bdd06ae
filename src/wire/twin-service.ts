// A service of another API version whose messages are renamed copies of the v2 ones
// (zitadel.user.v2beta.UserService beside zitadel.user.v2.UserService): its methods are the v2
// implementation's, the request carried over into the v2 message and the answer into the
// twin's, field by field (protobuf-es `create` copies by field name, nested messages included).
// So the v2 mapping and the commands behind it stay the only ones; a twin adds no rule.
//
// That is only honest while the messages really are twins: at start every method's messages are
// compared, and a difference that would lose or garble something throws. The rule: every field
// of the twin's message has a v2 field of the same name, number, kind, type (enums with the same
// values) and oneof, recursively. Then nothing a caller sends is lost, and every field the
// twin's answer has is filled exactly as v2 fills it. Fields only v2 has are dropped from the
// twin's answers (twinDifferences lists them; e.g. v2's HumanUser.mfa_init_skipped).
import { create, type DescEnum, type DescField, type DescMessage, type DescMethod, type DescService } from '@bufbuild/protobuf';
import type { HandlerContext, ServiceImpl } from '@connectrpc/connect';

/** Adds to `problems` why `twin` is not a twin of `v2` (none added: it is), and to `onlyV2` the v2 fields it lacks, by full name. */
function compare(twin: DescMessage, v2: DescMessage, problems: string[], onlyV2: Set<string>, seen = new Set<string>()): void {
  const key = `${twin.typeName}~${v2.typeName}`;
  if (seen.has(key)) return;
  seen.add(key);
  for (const f of v2.fields) if (!twin.fields.some((t) => t.name === f.name)) onlyV2.add(`${v2.typeName}.${f.name}`);
  for (const t of twin.fields) {
    const where = `${twin.typeName}.${t.name}`;
    const f = v2.fields.find((x) => x.name === t.name);
    if (!f) {
      problems.push(`${where}: no such field in ${v2.typeName}`);
      continue;
    }
    const shape = (x: DescField) => [x.number, x.fieldKind, x.presence, x.oneof?.name ?? '', x.localName].join(' ');
    if (shape(t) !== shape(f)) {
      problems.push(`${where}: ${shape(t)} vs ${shape(f)} in ${v2.typeName}`);
      continue;
    }
    compareTypes(where, t, f, problems, onlyV2, seen);
  }
}

/** The value types of two fields of the same kind: scalar, enum (same values) or message (twins, or the same message). */
function compareTypes(where: string, t: DescField, f: DescField, problems: string[], onlyV2: Set<string>, seen: Set<string>): void {
  const valueOf = (x: DescField): { scalar?: unknown; enum?: DescEnum; message?: DescMessage; key?: unknown } => {
    switch (x.fieldKind) {
      case 'scalar':
        return { scalar: x.scalar };
      case 'enum':
        return { enum: x.enum };
      case 'message':
        return { message: x.message };
      case 'list':
        return x.listKind === 'scalar' ? { scalar: x.scalar } : x.listKind === 'enum' ? { enum: x.enum } : { message: x.message };
      case 'map':
        return {
          key: x.mapKey,
          ...(x.mapKind === 'scalar' ? { scalar: x.scalar } : x.mapKind === 'enum' ? { enum: x.enum } : { message: x.message }),
        };
    }
  };
  const a = valueOf(t);
  const b = valueOf(f);
  if (a.scalar !== b.scalar || a.key !== b.key || !a.enum !== !b.enum || !a.message !== !b.message) {
    problems.push(`${where}: another value type in the v2 field`);
    return;
  }
  if (a.enum && b.enum) {
    const values = (e: DescEnum) => e.values.map((v) => `${v.name}=${v.number}`).join(',');
    if (values(a.enum) !== values(b.enum)) problems.push(`${where}: ${a.enum.typeName} and ${b.enum.typeName} have other values`);
  }
  if (a.message && b.message && a.message !== b.message) compare(a.message, b.message, problems, onlyV2, seen);
}

/** The twin's methods that the v2 implementation has, each checked; throws (at start) when one is no twin. */
function twinMethods(v2: DescService, twin: DescService, names: string[]): { v2: DescMethod; twin: DescMethod; onlyV2: string[] }[] {
  return names.map((localName) => {
    const a = v2.methods.find((m) => m.localName === localName);
    const b = twin.methods.find((m) => m.localName === localName);
    if (!a || !b) throw new Error(`${twin.typeName} has no twin of ${v2.typeName}.${a?.name ?? localName}`);
    const problems: string[] = [];
    const onlyV2 = new Set<string>();
    if (a.methodKind !== 'unary' || b.methodKind !== 'unary') problems.push('not unary');
    compare(b.input, a.input, problems, new Set(), new Set());
    compare(b.output, a.output, problems, onlyV2, new Set());
    if (problems.length > 0)
      throw new Error(`${b.parent.typeName}.${b.name} is no twin of ${a.parent.typeName}.${a.name}: ${problems.join('; ')}`);
    return { v2: a, twin: b, onlyV2: [...onlyV2].sort() };
  });
}

const implemented = (impl: object) => Object.entries(impl).flatMap(([name, fn]) => (typeof fn === 'function' ? [name] : []));

/**
 * The fields of the v2 answers that the twin's answers have no place for (full names,
 * `zitadel.user.v2.HumanUser.mfa_init_skipped`), for every method `impl` serves; throws
 * when a method has no twin. For tests and docs: the differences, stated.
 */
export function twinDifferences(v2: DescService, twin: DescService, impl: object): string[] {
  return [...new Set(twinMethods(v2, twin, implemented(impl)).flatMap((m) => m.onlyV2))].sort();
}

/**
 * The twin service over the v2 implementation: every method `impl` serves, on the twin's
 * messages. Throws when a served method has no twin with twin messages (at start, not per call).
 */
export function twinService<V2 extends DescService, Twin extends DescService>(
  v2: V2,
  twin: Twin,
  impl: Partial<ServiceImpl<V2>>,
): Partial<ServiceImpl<Twin>> {
  const out: Record<string, (req: unknown, ctx: HandlerContext) => Promise<unknown>> = {};
  for (const m of twinMethods(v2, twin, implemented(impl))) {
    const run = (impl as Record<string, (req: unknown, ctx: HandlerContext) => unknown>)[m.v2.localName]!.bind(impl);
    out[m.twin.localName] = async (req, ctx) => create(m.twin.output, (await run(create(m.v2.input, req as never), ctx)) as never);
  }
  return out as Partial<ServiceImpl<Twin>>;
}
