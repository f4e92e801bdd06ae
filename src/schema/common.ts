// Types shared by every aggregate's schema: Details, the enums, payload helpers.
import type { Details, OperationContext, Operations } from '../operations.ts';
import type { InputObjectRef, ObjectRef } from '@pothos/core';
import type { Builder, Types } from './builder.ts';

/** The operation a mutation calls, picked from the request's Operations (src/operations.ts). */
export type OperationOf<I, R> = (ops: Operations<OperationContext>) => (ctx: OperationContext, input: I) => Promise<R>;

/** An operation that answers Details, as a payload `{ details }`. */
export const withDetails =
  <I>(pick: OperationOf<I, Details>): OperationOf<I, { details: Details }> =>
  (ops) =>
  async (ctx, input) => ({ details: await pick(ops)(ctx, input) });

export function addCommon(builder: Builder) {
  const DetailsRef = builder.objectRef<Details>('Details').implement({
    description: 'What every manipulation returns. creationDate is null on the operations for which ZITADEL does not return it.',
    fields: (t) => ({
      sequence: t.field({ type: 'UInt64', resolve: (d) => d.sequence }),
      creationDate: t.field({ type: 'DateTime', nullable: true, resolve: (d) => d.creationDate }),
      changeDate: t.field({ type: 'DateTime', resolve: (d) => d.changeDate }),
      resourceOwner: t.exposeID('resourceOwner'),
    }),
  });

  const Gender = builder.enumType('Gender', {
    values: ['GENDER_UNSPECIFIED', 'GENDER_FEMALE', 'GENDER_MALE', 'GENDER_DIVERSE'] as const,
  });

  const OIDCMappingField = builder.enumType('OIDCMappingField', {
    values: ['OIDC_MAPPING_FIELD_UNSPECIFIED', 'OIDC_MAPPING_FIELD_PREFERRED_USERNAME', 'OIDC_MAPPING_FIELD_EMAIL'] as const,
  });

  /** A payload type that carries only `details: Details!`. */
  const detailsPayload = (name: string) =>
    builder.objectRef<{ details: Details }>(name).implement({
      fields: (t) => ({ details: t.field({ type: DetailsRef, resolve: (p) => p.details }) }),
    });

  builder.queryType({});
  builder.mutationType({});

  /**
   * A mutation with one required `input`; the resolver only hands it to the operation, which
   * checks it against its own rules (src/commands/command.ts). Typed end to end: the GraphQL
   * input type's shape must be one the operation accepts (its rules' input type), and the
   * operation's result the payload type's, or tsc fails.
   */
  const commandMutation = <I, R>(
    name: string,
    spec: {
      description: string;
      deprecationReason?: string;
      input: InputObjectRef<Types, I>;
      payload: ObjectRef<Types, R>;
      run: OperationOf<NoInfer<I>, NoInfer<R>>;
    },
  ) =>
    builder.mutationField(name, (t) =>
      t.field({
        description: spec.description,
        ...(spec.deprecationReason ? { deprecationReason: spec.deprecationReason } : {}),
        type: spec.payload,
        args: { input: t.arg({ type: spec.input, required: true }) },
        // Pothos' argument and result types are conditional on I and R, which tsc cannot resolve
        // inside this generic function; the call sites are checked against them instead.
        resolve: (_root, args, ctx) => spec.run(ctx.ops)(ctx.cmd, (args as { input: I }).input) as never,
      }),
    );

  return { Details: DetailsRef, Gender, OIDCMappingField, detailsPayload, commandMutation };
}

export type Common = ReturnType<typeof addCommon>;
