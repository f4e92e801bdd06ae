// The one interface between the faces (GraphQL: src/schema, the wire API: src/wire) and what
// serves the operations. The command layer is its first implementation
// (src/commands/operations.ts); a face gets an Operations and calls only its named members,
// never a command module. Inputs are the shapes each operation's rules accept (the zod
// schema's input type: a face whose input drifts from it fails tsc); the operation still
// checks them at run time, since the values are the client's. Failures are AppErrors.
import type { z } from 'zod';
import type { CommandContext, Details } from './commands/context.ts';
import type { HistoryKind, HistoryPage, PageArgs, SequenceQuery } from './commands/history.ts';
import type { AddIdpResult } from './commands/idps.ts';
import type { idpInputRules } from './commands/idp-inputs.ts';
import type { orgInputRules } from './commands/orgs.ts';
import type { ProjectInputRules } from './commands/project-inputs.ts';
import type { AddSAMLAppResult } from './commands/projects.ts';
import type { EntityKind } from './commands/entities.ts';
import type { UserScope } from './commands/reads.ts';
import type { resendInputRules } from './commands/resend.ts';
import type { RegisterU2FResult } from './commands/u2f.ts';
import type { U2FInputRules } from './commands/u2f-inputs.ts';
import type { UserInputRules } from './commands/user-inputs.ts';
import type { UserPage } from './commands/user-search.ts';
import type { AddHumanUserResult } from './commands/users.ts';
import type { IdentityProvider } from './model/idps.ts';
import type { Org } from './model/orgs.ts';
import type { Project } from './model/projects.ts';
import type { User } from './model/users.ts';
import type { Snapshot } from './store/port.ts';

export type { CommandContext as OperationContext, Details, AddIdpResult, AddSAMLAppResult, RegisterU2FResult, AddHumanUserResult };

// What a face may use of the layer below besides the calls, all from here (a face never imports
// src/commands: .dependency-cruiser.cjs, faces-through-operations): the context it builds once
// per request, the types of the results, and the few rules a face applies to shape its own
// answers (page sizes; the search input's check, which the wire's ListUsers runs before it
// translates ZITADEL's queries; the read budget it names in an error).
export type { CommandContext, Deps } from './commands/context.ts';
export type { HistoryKind, HistoryPage } from './commands/history.ts';
export type { EntityKind } from './commands/entities.ts';
export type { UserPage } from './commands/user-search.ts';
export type { UserScope } from './commands/reads.ts';
export { detailsOf } from './commands/details.ts';
export { READ_BUDGET_BYTES } from './commands/read-budget.ts';
export { requestContext } from './commands/request-context.ts';
export { DEFAULT_PAGE, MAX_PAGE, parseUserSearch } from './commands/user-search-inputs.ts';

type IdpInputs = ReturnType<typeof idpInputRules>;
type OrgInputs = ReturnType<typeof orgInputRules>;
type ResendInputs = ReturnType<typeof resendInputRules>;

/** A mutation: its input as the operation's rules accept it, its result. */
type Mutation<S extends z.ZodType, R> = (ctx: CommandContext, input: z.input<S>) => Promise<R>;

export interface Operations {
  // The nine operations and the supporting mutations.
  updateMyProfile: Mutation<UserInputRules['updateMyProfile'], Details>;
  updateHumanProfile: Mutation<UserInputRules['updateHumanProfile'], Details>;
  addHumanUser: Mutation<UserInputRules['addHumanUser'], AddHumanUserResult>;
  setEmail: Mutation<UserInputRules['setEmail'], { details: Details; verificationCode: string | null }>;
  updateHumanPhone: Mutation<UserInputRules['updateHumanPhone'], Details>;
  setHumanPassword: Mutation<UserInputRules['setHumanPassword'], Details>;
  verifyEmail: Mutation<UserInputRules['verifyCode'], Details>;
  verifyPhone: Mutation<UserInputRules['verifyCode'], Details>;
  addOIDCIdentityProvider: Mutation<IdpInputs['addOIDCIdentityProvider'], AddIdpResult>;
  updateOIDCIdentityProvider: Mutation<IdpInputs['updateOIDCIdentityProvider'], Details>;
  addProject: Mutation<ProjectInputRules['addProject'], { projectId: string; details: Details }>;
  addSAMLApp: Mutation<ProjectInputRules['addSAMLApp'], AddSAMLAppResult>;
  addOrganization: Mutation<OrgInputs['addOrganization'], { orgId: string; details: Details }>;
  addOrgMember: Mutation<OrgInputs['addOrgMember'], Details>;
  registerU2F: Mutation<U2FInputRules['registerU2F'], RegisterU2FResult>;
  verifyU2FRegistration: Mutation<U2FInputRules['verifyU2FRegistration'], Details>;
  resendEmailCode: Mutation<ResendInputs['resendEmailCode'], Details>;
  resendPhoneCode: Mutation<ResendInputs['resendPhoneCode'], Details>;

  // Reads.
  me(ctx: CommandContext): Promise<Snapshot<User>>;
  /** A user of the acting organization; null when it is not there. */
  user(ctx: CommandContext, id: string): Promise<Snapshot<User> | null>;
  /** A user looked for in `scope` (reads.ts readUser). */
  readUser(ctx: CommandContext, id: string, scope: UserScope): Promise<Snapshot<User> | null>;
  /** A page of users; `search` is the client's filter and page, checked by the operation. */
  users(ctx: CommandContext, search: unknown): Promise<UserPage>;
  organization(ctx: CommandContext, id: string): Promise<Snapshot<Org> | null>;
  identityProvider(ctx: CommandContext, id: string): Promise<Snapshot<IdentityProvider> | null>;
  project(ctx: CommandContext, id: string): Promise<Snapshot<Project> | null>;
  /** The federation entity loads: those of `ids` the caller may see, by id. */
  entities<S>(ctx: CommandContext, kind: EntityKind, ids: readonly string[]): Promise<Map<string, Snapshot<S>>>;
  history(ctx: CommandContext, kind: HistoryKind, id: string, page: PageArgs): Promise<HistoryPage>;
  /** ZITADEL's change lists: history from a sequence on (`id` null: the acting organization). */
  historyFromSequence(
    ctx: CommandContext,
    kind: HistoryKind,
    id: string | null,
    query: SequenceQuery,
    userScope?: UserScope,
  ): Promise<HistoryPage>;
}
