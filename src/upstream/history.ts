// History over ZITADEL's change lists. PLACEHOLDER: being written.
import { AppError } from '../errors.ts';
import type { HistoryKind, HistoryPage } from '../operations.ts';
import type { UpstreamContext } from './context.ts';

export async function history(_ctx: UpstreamContext, _kind: HistoryKind, _id: string, _page: unknown): Promise<HistoryPage> {
  throw new AppError('FAILED_PRECONDITION', 'history is not served in upstream mode yet');
}

export async function historyFromSequence(
  _ctx: UpstreamContext,
  _kind: HistoryKind,
  _id: string | null,
  _query: unknown,
): Promise<HistoryPage> {
  throw new AppError('FAILED_PRECONDITION', 'history is not served in upstream mode yet');
}
