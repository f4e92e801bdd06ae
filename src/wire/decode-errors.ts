// What a request whose bytes do not decode is told. The decoders' own texts are not for
// clients: @bufbuild/protobuf's JSON errors quote the value they could not take ("cannot decode
// field ….password from JSON: expected string, got 123456789012"), so a password or secret sent
// with the wrong type would come back in the answer; its binary errors name internals ("invalid
// varint", "maximum recursion depth of 100 reached", "The encoded data was not valid for encoding
// utf-8"), and connect answers them INTERNAL ("parse binary: …"), as if the gateway had failed.
import { fromBinary, type DescMessage } from '@bufbuild/protobuf';
import { Code, ConnectError } from '@connectrpc/connect';

/** A JSON decode error without the value it quotes: the field and the expected type stay. */
export function withoutValue(message: string): string {
  return message.replace(/,? got [\s\S]*$/, '');
}

/**
 * INVALID_ARGUMENT in the gateway's words for a binary message that is not a valid `input`
 * (decoded here as connect's router will decode it, with the same decoder and options, so
 * exactly what it would refuse is refused); undefined when it decodes. Run after the field
 * scan (protobuf-fields.ts), so a message reaching the decoder here is bounded in what it builds.
 */
export function binaryDecodeRefusal(input: DescMessage, bytes: Uint8Array): ConnectError | undefined {
  try {
    fromBinary(input, bytes);
    return undefined;
  } catch {
    return notBinaryMessage(input);
  }
}

/** INVALID_ARGUMENT for bytes that do not decode as a message of type `input`. */
export const notBinaryMessage = (input: DescMessage): ConnectError =>
  new ConnectError(`request message: not a valid ${input.typeName} in protobuf binary encoding`, Code.InvalidArgument);

/**
 * A message whose compressed flag is set on a request that names no compression (no
 * grpc-encoding, or identity). gRPC's protocol says the flag must then be 0; grpc-go answers it
 * INTERNAL ("grpc: compressed flag set with identity or empty encoding"), and so does the gateway,
 * in its own words.
 */
export const compressedWithoutEncoding = () =>
  new ConnectError('request message: compressed flag set, but the request names no grpc-encoding', Code.Internal);

/** The message encodings the RPC paths decompress (connect-node's gzip and brotli). */
export const ACCEPTED_MESSAGE_ENCODINGS = ['gzip', 'br'] as const;

/**
 * UNIMPLEMENTED for a gRPC or gRPC-web request whose grpc-encoding is none of them, answered
 * with grpc-accept-encoding listing them, as gRPC's compression.md says a server does.
 */
export const unknownMessageEncoding = () =>
  new ConnectError(
    `the request's grpc-encoding is not supported: send ${ACCEPTED_MESSAGE_ENCODINGS.join(', ')} or identity`,
    Code.Unimplemented,
  );
