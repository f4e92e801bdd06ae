// Types shared by every aggregate's schema: Details, the enums, payload helpers.
import type { Details } from '../commands/context.ts';
import type { Builder } from './builder.ts';

export function addCommon(builder: Builder) {
  const DetailsRef = builder.objectRef<Details>('Details').implement({
    description:
      'What every manipulation returns. creationDate is null on the operations for which SPEC.md does not list it.',
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

  return { Details: DetailsRef, Gender, OIDCMappingField, detailsPayload };
}

export type Common = ReturnType<typeof addCommon>;
