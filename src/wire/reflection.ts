// gRPC server reflection (grpc/grpc-proto grpc/reflection/v1/reflection.proto, and v1alpha with
// the same messages) as descriptors built in code, as src/proto/error-details.ts does: no npm package serves
// reflection for connect-node. ServerReflectionInfo is a bidi stream (gRPC over HTTP/2 only) that
// answers each request in turn from the services' own descriptors (DescFile.proto, as embedded
// in @zitadel/proto): list_services; file_by_filename and file_containing_symbol with the file
// and its transitive dependencies, each file sent once per stream as grpc-go does;
// file_containing_extension and all_extension_numbers_of_type; an error_response (NOT_FOUND,
// INVALID_ARGUMENT) for what is not known.
//
// A stream is one request at the edge, but each of its requests costs an answer: a 100-byte
// file_by_filename of zitadel/management.proto brings 300 KB back, and 1,000 of them on one
// unauthenticated stream brought 303 MB in 3 s. So each request after the first counts against
// the caller's rate limit as a request of its own (StreamLimits.countAnother: the edge's
// limiter, one window with every other request), and a stream's answers may carry at most
// STREAM_ANSWER_FACTOR times the bytes of every file it knows (about 2 MB: a client that reads
// them all, each once, needs a quarter of it), which also holds when the rate limit is off or
// its Redis is down. Past either the stream ends with RESOURCE_EXHAUSTED.
import type { HandlerContext } from '@connectrpc/connect';
import {
  create,
  createFileRegistry,
  createRegistry,
  toBinary,
  type DescFile,
  type DescMessage,
  type DescService,
  type Registry,
} from '@bufbuild/protobuf';
import { Code, ConnectError } from '@connectrpc/connect';
import {
  FieldDescriptorProto_Label,
  FieldDescriptorProto_Type,
  FileDescriptorProtoSchema,
  type FileDescriptorProto,
} from '@bufbuild/protobuf/wkt';

const { OPTIONAL, REPEATED } = FieldDescriptorProto_Label;
const { STRING, MESSAGE, BYTES, INT32 } = FieldDescriptorProto_Type;

type Field = {
  name: string;
  jsonName: string;
  number: number;
  label: FieldDescriptorProto_Label;
  type: FieldDescriptorProto_Type;
  typeName?: string;
  oneofIndex?: number;
};
const jsonName = (name: string) => name.replace(/_([a-z0-9])/g, (_, c: string) => c.toUpperCase());
const field = (name: string, number: number, type: FieldDescriptorProto_Type, more: Partial<Field> = {}): Field => ({
  name,
  jsonName: jsonName(name),
  number,
  label: OPTIONAL,
  type,
  ...more,
});

/** reflection.proto for one package (grpc.reflection.v1 or grpc.reflection.v1alpha). */
function reflectionFile(version: 'v1' | 'v1alpha'): FileDescriptorProto {
  const pkg = `grpc.reflection.${version}`;
  const t = (name: string) => `.${pkg}.${name}`;
  return create(FileDescriptorProtoSchema, {
    name: `grpc/reflection/${version}/reflection.proto`,
    package: pkg,
    syntax: 'proto3',
    messageType: [
      {
        name: 'ServerReflectionRequest',
        field: [
          field('host', 1, STRING),
          field('file_by_filename', 3, STRING, { oneofIndex: 0 }),
          field('file_containing_symbol', 4, STRING, { oneofIndex: 0 }),
          field('file_containing_extension', 5, MESSAGE, { oneofIndex: 0, typeName: t('ExtensionRequest') }),
          field('all_extension_numbers_of_type', 6, STRING, { oneofIndex: 0 }),
          field('list_services', 7, STRING, { oneofIndex: 0 }),
        ],
        oneofDecl: [{ name: 'message_request' }],
      },
      { name: 'ExtensionRequest', field: [field('containing_type', 1, STRING), field('extension_number', 2, INT32)] },
      {
        name: 'ServerReflectionResponse',
        field: [
          field('valid_host', 1, STRING),
          field('original_request', 2, MESSAGE, { typeName: t('ServerReflectionRequest') }),
          field('file_descriptor_response', 4, MESSAGE, { oneofIndex: 0, typeName: t('FileDescriptorResponse') }),
          field('all_extension_numbers_response', 5, MESSAGE, { oneofIndex: 0, typeName: t('ExtensionNumberResponse') }),
          field('list_services_response', 6, MESSAGE, { oneofIndex: 0, typeName: t('ListServiceResponse') }),
          field('error_response', 7, MESSAGE, { oneofIndex: 0, typeName: t('ErrorResponse') }),
        ],
        oneofDecl: [{ name: 'message_response' }],
      },
      { name: 'FileDescriptorResponse', field: [field('file_descriptor_proto', 1, BYTES, { label: REPEATED })] },
      {
        name: 'ExtensionNumberResponse',
        field: [field('base_type_name', 1, STRING), field('extension_number', 2, INT32, { label: REPEATED })],
      },
      { name: 'ListServiceResponse', field: [field('service', 1, MESSAGE, { label: REPEATED, typeName: t('ServiceResponse') })] },
      { name: 'ServiceResponse', field: [field('name', 1, STRING)] },
      { name: 'ErrorResponse', field: [field('error_code', 1, INT32), field('error_message', 2, STRING)] },
    ],
    service: [
      {
        name: 'ServerReflection',
        method: [
          {
            name: 'ServerReflectionInfo',
            inputType: t('ServerReflectionRequest'),
            outputType: t('ServerReflectionResponse'),
            clientStreaming: true,
            serverStreaming: true,
          },
        ],
      },
    ],
    options:
      version === 'v1'
        ? {
            goPackage: 'google.golang.org/grpc/reflection/grpc_reflection_v1',
            javaMultipleFiles: true,
            javaPackage: 'io.grpc.reflection.v1',
            javaOuterClassname: 'ServerReflectionProto',
          }
        : {
            goPackage: 'google.golang.org/grpc/reflection/grpc_reflection_v1alpha',
            javaMultipleFiles: true,
            javaPackage: 'io.grpc.reflection.v1alpha',
            javaOuterClassname: 'ServerReflectionProto',
          },
  });
}

function reflectionVersion(version: 'v1' | 'v1alpha') {
  const file = reflectionFile(version);
  const registry = createFileRegistry(file, () => undefined);
  const pkg = `grpc.reflection.${version}`;
  return {
    file: registry.getFile(file.name)!,
    service: registry.getService(`${pkg}.ServerReflection`)!,
    response: registry.getMessage(`${pkg}.ServerReflectionResponse`)!,
  };
}

const v1 = reflectionVersion('v1');
const v1alpha = reflectionVersion('v1alpha');

export const ServerReflectionV1Service: DescService = v1.service;
export const ServerReflectionV1AlphaService: DescService = v1alpha.service;
export const REFLECTION_SERVICES = [v1.service, v1alpha.service] as const;

/** ServerReflectionRequest as protobuf-es gives it (the oneof `message_request`). */
export interface ReflectionRequest {
  host: string;
  messageRequest:
    | { case: 'fileByFilename' | 'fileContainingSymbol' | 'allExtensionNumbersOfType' | 'listServices'; value: string }
    | { case: 'fileContainingExtension'; value: { containingType: string; extensionNumber: number } }
    | { case: undefined; value?: undefined };
}

type ResponseBody =
  | { case: 'fileDescriptorResponse'; value: { fileDescriptorProto: Uint8Array[] } }
  | { case: 'allExtensionNumbersResponse'; value: { baseTypeName: string; extensionNumber: number[] } }
  | { case: 'listServicesResponse'; value: { service: { name: string }[] } }
  | { case: 'errorResponse'; value: { errorCode: number; errorMessage: string } };

/** A stream's answers carry at most this many times the bytes of all the files it knows. */
export const STREAM_ANSWER_FACTOR = 4;

export interface StreamLimits {
  /** Counts one more request of the stream's caller against its rate limit: the refusal, or undefined. */
  countAnother?: (context: HandlerContext) => Promise<ConnectError | undefined>;
  /** Told of a stream ended for its answers' bytes (for the request's log line and metrics). */
  onTooMuch?: (context: HandlerContext, error: ConnectError) => void;
}

/** The file that defines a symbol: a type, a service, an extension, a method or a field / enum value / nested name. */
function fileDefining(types: Registry, symbol: string): DescFile | undefined {
  const name = symbol.replace(/^\./, '');
  const found = types.get(name);
  if (found) return found.file;
  const parent = name.slice(0, Math.max(0, name.lastIndexOf('.')));
  const owner = parent ? types.get(parent) : undefined;
  if (!owner) return undefined;
  const member = name.slice(parent.length + 1);
  switch (owner.kind) {
    case 'service':
      return owner.methods.some((m) => m.name === member) ? owner.file : undefined;
    case 'message':
      return owner.fields.some((f) => f.name === member) || owner.oneofs.some((o) => o.name === member) ? owner.file : undefined;
    case 'enum':
      return owner.values.some((v) => v.name === member) ? owner.file : undefined;
    default:
      return undefined;
  }
}

/**
 * The ServerReflection implementation (for both v1 and v1alpha) over `services`: the files of
 * every service and all their dependencies are what it knows.
 */
export function reflectionService(services: readonly DescService[], version: 'v1' | 'v1alpha', limits: StreamLimits = {}) {
  const responseSchema: DescMessage = (version === 'v1' ? v1 : v1alpha).response;
  const files = new Map<string, DescFile>();
  const addFile = (file: DescFile) => {
    if (files.has(file.proto.name)) return;
    files.set(file.proto.name, file);
    file.dependencies.forEach(addFile);
  };
  for (const s of services) addFile(s.file);
  const types = createRegistry(...files.values());
  const encoded = new Map<string, Uint8Array>();
  const bytesOf = (file: DescFile) => {
    let bytes = encoded.get(file.proto.name);
    if (!bytes) encoded.set(file.proto.name, (bytes = toBinary(FileDescriptorProtoSchema, file.proto)));
    return bytes;
  };

  const fileOfSymbol = (symbol: string) => fileDefining(types, symbol);

  const extensionsOf = (typeName: string) => {
    const out = [];
    for (const t of types) if (t.kind === 'extension' && t.extendee.typeName === typeName) out.push(t);
    return out;
  };

  /** The file first, then its dependencies not sent on this stream yet (grpc-go's fileDescWithDependencies). */
  const withDependencies = (file: DescFile, sent: Set<string>): Uint8Array[] => {
    const out: Uint8Array[] = [];
    const queue = [file];
    const seen = new Set<string>();
    for (let f = queue.shift(); f; f = queue.shift()) {
      if (seen.has(f.proto.name)) continue;
      seen.add(f.proto.name);
      if (out.length === 0 || !sent.has(f.proto.name)) {
        sent.add(f.proto.name);
        out.push(bytesOf(f));
      }
      queue.push(...f.dependencies);
    }
    return out;
  };

  const notFound = (what: string): ResponseBody => ({
    case: 'errorResponse',
    value: { errorCode: Code.NotFound, errorMessage: `${what} not found` },
  });
  const filesBody = (file: DescFile | undefined, what: string, sent: Set<string>): ResponseBody =>
    file ? { case: 'fileDescriptorResponse', value: { fileDescriptorProto: withDependencies(file, sent) } } : notFound(what);

  function answer(req: ReflectionRequest, sent: Set<string>): ResponseBody {
    const r = req.messageRequest;
    switch (r.case) {
      case 'listServices':
        return { case: 'listServicesResponse', value: { service: services.map((s) => ({ name: s.typeName })) } };
      case 'fileByFilename':
        return filesBody(files.get(r.value), `file ${JSON.stringify(r.value)}`, sent);
      case 'fileContainingSymbol':
        return filesBody(fileOfSymbol(r.value), `symbol ${JSON.stringify(r.value)}`, sent);
      case 'fileContainingExtension': {
        const ext = extensionsOf(r.value.containingType.replace(/^\./, '')).find((e) => e.number === r.value.extensionNumber);
        return filesBody(ext?.file, `extension ${r.value.extensionNumber} of ${JSON.stringify(r.value.containingType)}`, sent);
      }
      case 'allExtensionNumbersOfType': {
        const typeName = r.value.replace(/^\./, '');
        if (types.getMessage(typeName) === undefined) return notFound(`type ${JSON.stringify(r.value)}`);
        return {
          case: 'allExtensionNumbersResponse',
          value: { baseTypeName: typeName, extensionNumber: extensionsOf(typeName).map((e) => e.number) },
        };
      }
      default:
        return { case: 'errorResponse', value: { errorCode: Code.InvalidArgument, errorMessage: 'empty or unknown message_request' } };
    }
  }

  let maxStreamBytes: number | undefined;
  /** The descriptor bytes one stream's answers may carry: STREAM_ANSWER_FACTOR times every file's (encoded once, at the first stream). */
  const streamCap = () =>
    (maxStreamBytes ??= STREAM_ANSWER_FACTOR * [...files.values()].reduce((sum, f) => sum + bytesOf(f).byteLength, 0));
  const sizeOf = (body: ResponseBody) =>
    body.case === 'fileDescriptorResponse' ? body.value.fileDescriptorProto.reduce((sum, b) => sum + b.byteLength, 0) : 0;

  return {
    async *serverReflectionInfo(requests: AsyncIterable<ReflectionRequest>, context: HandlerContext) {
      const sent = new Set<string>();
      let bytes = 0;
      let first = true;
      for await (const req of requests) {
        // The first was counted by the edge with the stream.
        if (!first) {
          const refused = await limits.countAnother?.(context);
          if (refused) throw refused;
        }
        first = false;
        const body = answer(req, sent);
        bytes += sizeOf(body);
        if (bytes > streamCap()) {
          const error = new ConnectError(
            `reflection: the answers on one stream may carry at most ${streamCap()} bytes; open a new stream`,
            Code.ResourceExhausted,
          );
          limits.onTooMuch?.(context, error);
          throw error;
        }
        yield create(responseSchema, { validHost: req.host, originalRequest: req, messageResponse: body } as never);
      }
    },
  };
}
