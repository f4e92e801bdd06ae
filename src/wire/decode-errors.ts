// A JSON decode error of @bufbuild/protobuf quotes the value it could not take ("cannot decode
// field ….password from JSON: expected string, got 123456789012"): a password or secret sent
// with the wrong type would come back in the answer. The value is cut; the field and the
// expected type stay.
export function withoutValue(message: string): string {
  return message.replace(/,? got [\s\S]*$/, '');
}
