import type { Reducers } from '../store/port.ts';
import { reduceIdp } from './idps.ts';
import { reduceInstance, reduceOrg } from './orgs.ts';
import { reduceProject } from './projects.ts';
import { reduceUser } from './users.ts';

export const reducers: Reducers = {
  instance: reduceInstance,
  org: reduceOrg,
  user: reduceUser,
  idp: reduceIdp,
  project: reduceProject,
};
