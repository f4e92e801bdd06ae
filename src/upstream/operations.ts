// Upstream mode's Operations (src/operations.ts): the GraphQL face's operations served by calls to
// ZITADEL's API (or anything that speaks its wire contract, this gateway's own included), with the
// commands' input rules first. No event store and no code store here: ZITADEL persists, sends the
// codes and verifies WebAuthn.
import type { Config } from '../config.ts';
import type { Operations } from '../operations.ts';
import type { UpstreamContext } from './context.ts';
import { entities } from './entities.ts';
import { history, historyFromSequence } from './history.ts';
import { inputRules } from './inputs.ts';
import * as reads from './reads.ts';
import { accountMutations, resourceMutations } from './resources.ts';
import { searchUsers } from './user-search.ts';
import { userMutations } from './users.ts';

export function upstreamOperations(config: Config): Operations<UpstreamContext> {
  const rules = inputRules(config);
  return {
    ...userMutations(rules),
    ...resourceMutations(rules),
    ...accountMutations(rules),
    me: reads.me,
    userPart: reads.userPart,
    projectApps: reads.projectApps,
    user: reads.user,
    readUser: reads.readUser,
    users: searchUsers,
    organization: reads.organization,
    identityProvider: reads.identityProvider,
    project: reads.project,
    entities,
    history,
    historyFromSequence,
  };
}
