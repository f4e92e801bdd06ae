import type { Reducers, Reducer } from '../store/port.ts';
import { reduceIdp } from './idps.ts';
import { reduceInstance, reduceOrg } from './orgs.ts';
import { reduceProject } from './projects.ts';
import { reduceUser } from './users.ts';

const notYet: Reducer = (_s, e) => {
  throw new Error(`no reducer for ${e.aggregateType} events yet (${e.type})`);
};

export const reducers: Reducers = {
  instance: reduceInstance,
  org: reduceOrg,
  user: reduceUser,
  idp: reduceIdp,
  project: reduceProject,
};
