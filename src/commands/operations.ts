// The command layer as the faces' Operations (src/operations.ts): each member is the command
// or read of the same name, which checks its input and answers AppErrors.
import type { Operations } from '../operations.ts';
import { visibleMany, organization } from './entities.ts';
import { history, historyFromSequence } from './history.ts';
import * as idps from './idps.ts';
import * as orgs from './orgs.ts';
import * as projects from './projects.ts';
import * as reads from './reads.ts';
import * as resend from './resend.ts';
import * as u2f from './u2f.ts';
import { searchUsers } from './user-search.ts';
import * as users from './users.ts';

export const commandOperations: Operations = {
  updateMyProfile: users.updateMyProfile,
  updateHumanProfile: users.updateHumanProfile,
  addHumanUser: users.addHumanUser,
  setEmail: users.setEmail,
  updateHumanPhone: users.updateHumanPhone,
  setHumanPassword: users.setHumanPassword,
  verifyEmail: users.verifyEmail,
  verifyPhone: users.verifyPhone,
  addOIDCIdentityProvider: idps.addOIDCIdentityProvider,
  updateOIDCIdentityProvider: idps.updateOIDCIdentityProvider,
  addProject: projects.addProject,
  addSAMLApp: projects.addSAMLApp,
  addOrganization: orgs.addOrganization,
  addOrgMember: orgs.addOrgMember,
  registerU2F: u2f.registerU2F,
  verifyU2FRegistration: u2f.verifyU2FRegistration,
  resendEmailCode: resend.resendEmailCode,
  resendPhoneCode: resend.resendPhoneCode,

  me: reads.me,
  userPart: async (_ctx, user, part) => user.state[part],
  projectApps: async (_ctx, project) => project.state.apps,
  user: reads.user,
  readUser: reads.readUser,
  users: searchUsers,
  organization,
  identityProvider: idps.identityProvider,
  project: projects.project,
  entities: visibleMany,
  history,
  historyFromSequence,
};
