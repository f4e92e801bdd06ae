// google.rpc.BadRequest and google.rpc.RetryInfo (googleapis google/rpc/error_details.proto)
// as descriptors built in code: no installed package carries them, and only these are needed.
import { create, createFileRegistry, type DescMessage } from '@bufbuild/protobuf';
import {
  FieldDescriptorProto_Label,
  FieldDescriptorProto_Type,
  FileDescriptorProtoSchema,
  file_google_protobuf_duration,
} from '@bufbuild/protobuf/wkt';

const { OPTIONAL, REPEATED } = FieldDescriptorProto_Label;
const { STRING, MESSAGE } = FieldDescriptorProto_Type;

const file = create(FileDescriptorProtoSchema, {
  name: 'google/rpc/error_details.proto',
  package: 'google.rpc',
  syntax: 'proto3',
  dependency: ['google/protobuf/duration.proto'],
  messageType: [
    {
      name: 'RetryInfo',
      field: [
        { name: 'retry_delay', jsonName: 'retryDelay', number: 1, label: OPTIONAL, type: MESSAGE, typeName: '.google.protobuf.Duration' },
      ],
    },
    {
      name: 'BadRequest',
      field: [
        {
          name: 'field_violations',
          jsonName: 'fieldViolations',
          number: 1,
          label: REPEATED,
          type: MESSAGE,
          typeName: '.google.rpc.BadRequest.FieldViolation',
        },
      ],
      nestedType: [
        {
          name: 'FieldViolation',
          field: [
            { name: 'field', jsonName: 'field', number: 1, label: OPTIONAL, type: STRING },
            { name: 'description', jsonName: 'description', number: 2, label: OPTIONAL, type: STRING },
          ],
        },
      ],
    },
  ],
});

const registry = createFileRegistry(file, (name) =>
  name === 'google/protobuf/duration.proto' ? file_google_protobuf_duration : undefined,
);

/** google.rpc.BadRequest: `{ fieldViolations: [{ field, description }] }`. */
export const BadRequestSchema: DescMessage = registry.getMessage('google.rpc.BadRequest')!;
/** google.rpc.RetryInfo: `{ retryDelay: Duration }`. */
export const RetryInfoSchema: DescMessage = registry.getMessage('google.rpc.RetryInfo')!;
export const FieldViolationSchema: DescMessage = registry.getMessage('google.rpc.BadRequest.FieldViolation')!;

export interface BadRequest {
  fieldViolations: { field: string; description: string }[];
}
