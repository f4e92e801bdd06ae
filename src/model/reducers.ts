import type { Reducers, Reducer } from '../store/port.ts';
import { reduceInstance, reduceOrg } from './orgs.ts';
import { reduceUser } from './users.ts';

const notYet: Reducer = (_s, e) => {
  throw new Error(`no reducer for ${e.aggregateType} events yet (${e.type})`);
};

export const reducers: Reducers = {
  instance: reduceInstance,
  org: reduceOrg,
  user: reduceUser,
  idp: notYet,
  project: notYet,
};
