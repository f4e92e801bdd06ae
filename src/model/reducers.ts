import type { Reducer, Reducers, StoredEvent } from '../store/port.ts';
import { reduceIdp } from './idps.ts';
import { reduceInstance, reduceOrg } from './orgs.ts';
import { reduceProject } from './projects.ts';
import { reduceUser } from './users.ts';

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
