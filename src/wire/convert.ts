// Small conversions between the wire messages and the command inputs / results:
// Details, timestamps, enums by name, proto3 defaults, bytes as base64; and the refusal of
// request fields the commands have no place for.
import { create, isFieldSet, type DescEnum, type DescField, type DescMessage, type MessageShape } from '@bufbuild/protobuf';
import { timestampFromDate, type Timestamp } from '@bufbuild/protobuf/wkt';
import { DetailsSchema, type Details as DetailsV2 } from '@zitadel/proto/zitadel/object/v2/object_pb.js';
import { ObjectDetailsSchema, type ObjectDetails } from '@zitadel/proto/zitadel/object_pb.js';
import type { Details } from '../operations.ts';
import { invalidArgument } from '../errors.ts';
import type { Snapshot } from '../store/port.ts';

/** zitadel.v1.ObjectDetails; creation_date only where the command's Details has it. */
export const detailsV1 = (d: Details): ObjectDetails =>
  create(ObjectDetailsSchema, {
    sequence: BigInt(d.sequence),
    creationDate: d.creationDate ? timestampFromDate(d.creationDate) : undefined,
    changeDate: timestampFromDate(d.changeDate),
    resourceOwner: d.resourceOwner,
  });

/** zitadel.object.v2.Details; creation_date only where the command's Details has it. */
export const detailsV2 = (d: Details): DetailsV2 =>
  create(DetailsSchema, {
    sequence: BigInt(d.sequence),
    changeDate: timestampFromDate(d.changeDate),
    resourceOwner: d.resourceOwner,
    creationDate: d.creationDate ? timestampFromDate(d.creationDate) : undefined,
  });

/** An ISO time kept in a state (a password's time) as a google.protobuf.Timestamp; undefined stays unset. */
export const timestampOfIso = (iso: string | undefined): Timestamp | undefined =>
  iso === undefined ? undefined : timestampFromDate(new Date(iso));

/** The Details of a read aggregate, with its creation date. */
export const snapshotDetails = (s: Snapshot<unknown>): Details => ({
  sequence: s.sequence,
  creationDate: s.creationDate,
  changeDate: s.changeDate,
  resourceOwner: s.resourceOwner,
});

/** A proto3 string left at its default is "not given" for an optional command field. */
export const opt = (s: string | undefined): string | undefined => (s === '' ? undefined : s);

/** The name of an enum number (GENDER_FEMALE), as the command inputs use; unknown numbers pass as they are so the command refuses them. */
export const enumName = (desc: DescEnum, n: number): string | number => desc.value[n]?.name ?? n;

/**
 * A value as the client sent it, handed to the operation in the place of its typed input (an
 * enum number the descriptor does not name, an absent message): the operation's rules refuse
 * what is not a T with INVALID_ARGUMENT, as they do for the other face, so the wire does not
 * check it twice.
 */
export const asSent = <T>(value: unknown): T => value as T;

/** enumName, typed as the operation's enum (asSent: a name it does not know is refused by its rules). */
export const sentEnum = <T>(desc: DescEnum, n: number): T => asSent<T>(enumName(desc, n));

/** The number of an enum value name; 0 (UNSPECIFIED) when the enum has no such name. */
export const enumNumber = (desc: DescEnum, name: string | null | undefined): number =>
  name ? (desc.values.find((v) => v.name === name)?.number ?? 0) : 0;

export const base64 = (bytes: Uint8Array): string => Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength).toString('base64');

/** The zero value of a scalar or enum: proto3 cannot tell it from absent, and ZITADEL reads it as "not given". */
const isZero = (v: unknown) =>
  v === undefined || v === '' || v === 0 || v === 0n || v === false || (v instanceof Uint8Array && v.length === 0);

/** The field carries something: a non-zero scalar or enum, a set oneof case, a non-empty list or map, a present message. */
function carries(message: Record<string, unknown>, field: DescField): boolean {
  if (!isFieldSet(message as never, field)) return false;
  // A proto3 `optional` scalar set to its zero value ("" for totp_secret) is as good as absent.
  if ((field.fieldKind === 'scalar' || field.fieldKind === 'enum') && !field.oneof) return !isZero(message[field.localName]);
  return true;
}

export const UNSUPPORTED = 'is not supported by this gateway';

/**
 * A check for request fields the commands have no place for, by their proto names
 * (`totp_secret`, `admins`): a request that sets any of them is refused with INVALID_ARGUMENT
 * and a google.rpc.BadRequest violation per field (`totp_secret`, a list by its first entry
 * `admins[0]`), before anything is written, rather than dropped silently. Unknown names throw
 * when the check is made (at start).
 */
export function refuseUnsupported<Desc extends DescMessage>(schema: Desc, fieldNames: string[]): (message: MessageShape<Desc>) => void {
  const fields = fieldNames.map((name) => {
    const field = schema.fields.find((f) => f.name === name);
    if (!field) throw new Error(`${schema.typeName} has no field ${name}`);
    return field;
  });
  return (message) => {
    const set = fields.filter((f) => carries(message as unknown as Record<string, unknown>, f));
    if (set.length === 0) return;
    throw invalidArgument(set.map((f) => ({ field: f.fieldKind === 'list' ? `${f.name}[0]` : f.name, description: UNSUPPORTED })));
  };
}
