// Variables are coerced by graphql-js before graphql-jit runs the operation. graphql-jit's own
// coercion has no error limit (one error per bad list element: a 64 KB body without a token made
// 32,000 errors, 1.3 s of event loop and a 6.4 MB answer), and its messages name its internal
// variables ("$value") with no path. graphql-js stops after 50 errors and names the path
// ('Variable "$input" got invalid value … at "input.metadata[0].value"').
import { getOperationAST, getVariableValues, type GraphQLError } from 'graphql';
import type { Plugin } from 'graphql-yoga';

/** graphql-js's own default for execute(): after this many, one "error limit reached" and no more. */
export const MAX_VARIABLE_ERRORS = 50;

/**
 * `classify` turns graphql-js's errors into the gateway's (code, no echoed values): an answer set
 * here does not go through the execution result's masking.
 */
export function useVariableCoercion(classify: (error: GraphQLError) => GraphQLError, maxErrors = MAX_VARIABLE_ERRORS): Plugin {
  return {
    onExecute({ args, setResultAndStopExecution }) {
      const operation = getOperationAST(args.document, args.operationName);
      const definitions = operation?.variableDefinitions;
      if (!definitions?.length) return;
      const coerced = getVariableValues(args.schema, definitions, args.variableValues ?? {}, { maxErrors });
      if (coerced.errors) setResultAndStopExecution({ errors: coerced.errors.map(classify) });
    },
  };
}
