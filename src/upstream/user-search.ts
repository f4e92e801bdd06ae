// The users query over ZITADEL's ListUsers (user v2). PLACEHOLDER: being written.
import { AppError } from '../errors.ts';
import type { UserPage } from '../operations.ts';
import type { UpstreamContext } from './context.ts';

export async function searchUsers(_ctx: UpstreamContext, _search: unknown): Promise<UserPage> {
  throw new AppError('FAILED_PRECONDITION', 'users is not served in upstream mode yet');
}
