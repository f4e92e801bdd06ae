import type { Reducer, Reducers, StoredEvent } from './events.ts';
import { reduceIdp, type IdentityProvider, type IdpEvent } from './idps.ts';
import { reduceInstance, reduceOrg, type Instance, type InstanceEvent, type Org, type OrgEvent } from './orgs.ts';
import { reduceProject, type Project, type ProjectEvent } from './projects.ts';
import { reduceUser, type User, type UserEvent } from './users.ts';

/**
 * The one place that trusts the store: an event read back is of its aggregate's union, as
 * events are only made by the aggregates' constructors (userEvent, orgEvent, ...) and written
 * through the command runner. A type the reducer does not know leaves the state as it was.
 */
const fromStore =
  <S, E>(reduce: (state: S | undefined, event: StoredEvent & E) => S): Reducer<S> =>
  (state, event) =>
    reduce(state, event as StoredEvent & E);

export const reducers: Reducers = {
  instance: fromStore(reduceInstance),
  org: fromStore(reduceOrg),
  user: fromStore(reduceUser),
  idp: fromStore(reduceIdp),
  project: fromStore(reduceProject),
};

/** Each aggregate's state and events, for code that is generic over the aggregate type. */
export interface Aggregates {
  instance: { state: Instance; event: InstanceEvent };
  org: { state: Org; event: OrgEvent };
  user: { state: User; event: UserEvent };
  idp: { state: IdentityProvider; event: IdpEvent };
  project: { state: Project; event: ProjectEvent };
}
