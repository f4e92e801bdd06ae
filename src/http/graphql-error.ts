// The edge answers some requests itself (refused bodies, limits, idempotency
// conflicts), in the GraphQL error shape of DESIGN.md section 7.
import { GraphQLError } from 'graphql';
import { extensionsOf, type AppError } from '../errors.ts';

export const graphqlError = (err: AppError): GraphQLError =>
  new GraphQLError(err.message, { extensions: extensionsOf(err.code, err.details, err.httpStatus) });
