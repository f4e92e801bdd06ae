// Small conversions between the wire messages and the command inputs / results:
// Details, timestamps, enums by name, proto3 defaults, bytes as base64.
import { create, type DescEnum } from '@bufbuild/protobuf';
import { timestampFromDate } from '@bufbuild/protobuf/wkt';
import { DetailsSchema, type Details as DetailsV2 } from '@zitadel/proto/zitadel/object/v2/object_pb.js';
import { ObjectDetailsSchema, type ObjectDetails } from '@zitadel/proto/zitadel/object_pb.js';
import type { Details } from '../commands/context.ts';
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

/** The number of an enum value name; 0 (UNSPECIFIED) when the enum has no such name. */
export const enumNumber = (desc: DescEnum, name: string | null | undefined): number => (name ? (desc.values.find((v) => v.name === name)?.number ?? 0) : 0);

export const base64 = (bytes: Uint8Array): string => Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength).toString('base64');
