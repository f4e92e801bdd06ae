// google.rpc.BadRequest (googleapis google/rpc/error_details.proto) as a descriptor built
// in code: no installed package carries it, and only these two messages are needed.
import { create, createFileRegistry, type DescMessage } from '@bufbuild/protobuf';
import { FieldDescriptorProto_Label, FieldDescriptorProto_Type, FileDescriptorProtoSchema } from '@bufbuild/protobuf/wkt';

const { OPTIONAL, REPEATED } = FieldDescriptorProto_Label;
const { STRING, MESSAGE } = FieldDescriptorProto_Type;

const file = create(FileDescriptorProtoSchema, {
  name: 'google/rpc/error_details.proto',
  package: 'google.rpc',
  syntax: 'proto3',
  messageType: [
    {
      name: 'BadRequest',
      field: [{ name: 'field_violations', jsonName: 'fieldViolations', number: 1, label: REPEATED, type: MESSAGE, typeName: '.google.rpc.BadRequest.FieldViolation' }],
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

const registry = createFileRegistry(file, () => undefined);

/** google.rpc.BadRequest: `{ fieldViolations: [{ field, description }] }`. */
export const BadRequestSchema: DescMessage = registry.getMessage('google.rpc.BadRequest')!;
export const FieldViolationSchema: DescMessage = registry.getMessage('google.rpc.BadRequest.FieldViolation')!;

export interface BadRequest {
  fieldViolations: { field: string; description: string }[];
}
