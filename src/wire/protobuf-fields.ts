// How many fields a binary request message holds, counted before it is decoded. fromBinary
// builds an object for every element of a repeated message field (and for every unknown
// field), so a 13 MB AddHumanUser of 6.7 million empty `metadata` entries (2 bytes each) cost
// 450 MB and 2.7 s of decoding before the command's rule of at most 20 could refuse it. The
// largest legal lists hold a few dozen elements (20 metadata, 20 IdP links, 50 scopes).
//
// The scan reads the message as @bufbuild/protobuf's fromBinary does (from-binary.js), with the
// same BinaryReader and the same choices: a known field is read by its kind whatever the tag's
// wire type says (a message field's payload is a length-prefixed message, a packed list is
// taken as packed only for a length-delimited tag), nested messages share one position (as the
// decoder's do), unknown fields are skipped with reader.skip. So it counts what the decoder
// would build, and cannot be led by a crafted encoding to count less. It only moves a position
// (no message, string or array is built; the few small values the reader returns are bounded by
// the field budget), visits every byte at most once, and stops at the first field over a bound.
// Whatever the decoder would throw on (a bad tag, a truncated field, too deep a nesting) ends
// the scan without a verdict: the real decoder then answers it as it always has.
import { ScalarType, type DescField, type DescMessage } from '@bufbuild/protobuf';
import { BinaryReader, WireType } from '@bufbuild/protobuf/wire';

/** Elements one repeated field (or map) of one message may hold. */
export const MAX_REPEATED_ELEMENTS = 1_000;

/** Fields a whole request message may hold, at every depth, each element of a list counted. */
export const MAX_MESSAGE_FIELDS = 10_000;

/** fromBinary's default recursion limit, which the decoder enforces (the scan stops there). */
const RECURSION_LIMIT = 100;

class Refused {
  readonly reason: string;
  constructor(reason: string) {
    this.reason = reason;
  }
}

interface Scan {
  fields: number;
  depth: number;
}

const byNumber = new WeakMap<DescMessage, Map<number, DescField>>();
function fieldsOf(desc: DescMessage): Map<number, DescField> {
  let map = byNumber.get(desc);
  if (!map) {
    map = new Map(desc.fields.map((f) => [f.number, f]));
    byNumber.set(desc, map);
  }
  return map;
}

function countField(scan: Scan): void {
  if (++scan.fields > MAX_MESSAGE_FIELDS) throw new Refused(`more than ${MAX_MESSAGE_FIELDS} fields`);
}

/** One more element of list or map `field` in the message being read (`counts`: per field number). */
function countElement(scan: Scan, counts: Map<number, number>, desc: DescMessage, field: DescField): void {
  const n = (counts.get(field.number) ?? 0) + 1;
  counts.set(field.number, n);
  if (n > MAX_REPEATED_ELEMENTS) throw new Refused(`more than ${MAX_REPEATED_ELEMENTS} elements in ${desc.typeName}.${field.name}`);
}

/** Reads a scalar as the decoder does (same reader call, so the same bytes), keeping nothing. */
function skipScalar(reader: BinaryReader, type: ScalarType): void {
  switch (type) {
    case ScalarType.STRING:
    case ScalarType.BYTES: {
      const len = reader.uint32();
      reader.pos += len;
      if (reader.pos > reader.len) throw new RangeError('premature EOF');
      return;
    }
    case ScalarType.BOOL:
      reader.bool();
      return;
    case ScalarType.DOUBLE:
      reader.double();
      return;
    case ScalarType.FLOAT:
      reader.float();
      return;
    case ScalarType.INT32:
    case ScalarType.UINT32:
    case ScalarType.SINT32:
      reader.uint32();
      return;
    case ScalarType.INT64:
      reader.int64();
      return;
    case ScalarType.UINT64:
      reader.uint64();
      return;
    case ScalarType.SINT64:
      reader.sint64();
      return;
    case ScalarType.FIXED32:
    case ScalarType.SFIXED32:
      reader.sfixed32();
      return;
    case ScalarType.FIXED64:
    case ScalarType.SFIXED64:
      reader.sfixed64();
      return;
  }
}

/** A message field's payload: a group up to its end tag (delimited encoding), else length-prefixed. */
function readChild(reader: BinaryReader, scan: Scan, field: DescField & { message: DescMessage }): void {
  if (field.delimitedEncoding) readFields(field.message, reader, scan, undefined, field.number);
  else readFields(field.message, reader, scan, reader.uint32(), undefined);
}

/** The fields of one message: `length` bytes of it, or (a group) up to the end tag of `groupNo`. */
function readFields(desc: DescMessage, reader: BinaryReader, scan: Scan, length: number | undefined, groupNo: number | undefined): void {
  if (++scan.depth > RECURSION_LIMIT) throw new Error('too deep: the decoder refuses it');
  const fields = fieldsOf(desc);
  const counts = new Map<number, number>();
  const end = length === undefined ? reader.len : reader.pos + length;
  let ended = false;
  while (reader.pos < end) {
    const [no, wireType] = reader.tag();
    if (groupNo !== undefined && wireType === WireType.EndGroup) {
      if (no !== groupNo) throw new Error('invalid end group tag');
      ended = true;
      break;
    }
    countField(scan);
    const field = fields.get(no);
    if (field === undefined) {
      reader.skip(wireType, no, RECURSION_LIMIT - scan.depth);
      continue;
    }
    switch (field.fieldKind) {
      case 'scalar':
        skipScalar(reader, field.scalar);
        break;
      case 'enum':
        reader.int32();
        break;
      case 'message':
        readChild(reader, scan, field);
        break;
      case 'list':
        if (field.listKind === 'message') {
          countElement(scan, counts, desc, field);
          readChild(reader, scan, field);
          break;
        }
        {
          const type = field.listKind === 'enum' ? ScalarType.INT32 : field.scalar;
          if (wireType === WireType.LengthDelimited && type !== ScalarType.STRING && type !== ScalarType.BYTES) {
            const packedEnd = reader.uint32() + reader.pos;
            while (reader.pos < packedEnd) {
              countField(scan);
              countElement(scan, counts, desc, field);
              skipScalar(reader, type);
            }
          } else {
            countElement(scan, counts, desc, field);
            skipScalar(reader, type);
          }
        }
        break;
      case 'map': {
        countElement(scan, counts, desc, field);
        const entryEnd = reader.uint32() + reader.pos;
        while (reader.pos < entryEnd) {
          const [entryNo, entryWireType] = reader.tag();
          countField(scan);
          if (entryNo === 1) skipScalar(reader, field.mapKey);
          else if (entryNo === 2) {
            if (field.mapKind === 'message') readFields(field.message, reader, scan, reader.uint32(), undefined);
            else if (field.mapKind === 'enum') reader.int32();
            else skipScalar(reader, field.scalar);
          } else reader.skip(entryWireType, entryNo, RECURSION_LIMIT - scan.depth);
        }
        break;
      }
    }
  }
  if (groupNo !== undefined && !ended) throw new Error('invalid end group tag');
  scan.depth--;
}

/**
 * Why a binary message of type `desc` is refused before decoding: a repeated field (or map) of
 * one message with more than MAX_REPEATED_ELEMENTS elements, or more than MAX_MESSAGE_FIELDS
 * fields in all; undefined when it is within both, or malformed (left to the decoder).
 */
export function protobufFieldsRefusal(desc: DescMessage, bytes: Uint8Array): string | undefined {
  try {
    readFields(desc, new BinaryReader(bytes), { fields: 0, depth: 0 }, bytes.byteLength, undefined);
  } catch (err) {
    if (err instanceof Refused) return err.reason;
  }
  return undefined;
}
