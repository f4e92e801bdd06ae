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
import type { orgInputRules } from './commands/org-inputs.ts';
import type { ProjectInputRules } from './commands/project-inputs.ts';
import type { AddSAMLAppResult } from './commands/projects.ts';
import type { EntityKind } from './commands/entities.ts';
import type { UserScope } from './commands/reads.ts';
import type { CallerFacts, HeaderSource } from './commands/request-context.ts';
import type { resendInputRules } from './commands/resend-inputs.ts';
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

export type { Details, AddIdpResult, AddSAMLAppResult, RegisterU2FResult, AddHumanUserResult };

/**
 * What every operation receives: who calls, and the organization the request names. Each
 * implementation extends it with what it needs (the command layer's CommandContext: the stores
 * and the request's view of them; upstream mode's UpstreamContext: the credentials it forwards),
 * and comes with the factory that makes it (faceBinding): a face builds one per request and only
 * hands it back.
 */
export interface OperationContext {
  /** The authenticated caller (a user id; in upstream mode a key for the caller's limits), or null. */
  callerId: string | null;
  /** Set when a token was sent but is not valid: every operation answers it. */
  authError?: Error;
  /** The x-service-orgid (or x-zitadel-orgid) header, when sent. */
  orgHeader: string | null;
}

// What a face may use of the layer below besides the calls, all from here (a face never imports
// src/commands: .dependency-cruiser.cjs, faces-through-operations): the context it builds once
// per request, the types of the results, and the few rules a face applies to shape its own
// answers (page sizes; the search input's check, which the wire's ListUsers runs before it
// translates ZITADEL's queries; the read budget it names in an error).
export type { CommandContext, Deps } from './commands/context.ts';
export type { CallerFacts, HeaderSource } from './commands/request-context.ts';
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

/** The parts of a user read on their own when asked for (Operations.userPart). */
export type UserPart = 'metadata' | 'idpLinks' | 'u2fTokens';

/** A mutation: its input as the operation's rules accept it, its result. */
type Mutation<S extends z.ZodType, R, C> = (ctx: C, input: z.input<S>) => Promise<R>;

/** The operations, over the context C their implementation needs (the command layer's by default). */
export interface Operations<C extends OperationContext = CommandContext> {
  // The nine operations and the supporting mutations.
  updateMyProfile: Mutation<UserInputRules['updateMyProfile'], Details, C>;
  updateHumanProfile: Mutation<UserInputRules['updateHumanProfile'], Details, C>;
  addHumanUser: Mutation<UserInputRules['addHumanUser'], AddHumanUserResult, C>;
  setEmail: Mutation<UserInputRules['setEmail'], { details: Details; verificationCode: string | null }, C>;
  updateHumanPhone: Mutation<UserInputRules['updateHumanPhone'], Details, C>;
  setHumanPassword: Mutation<UserInputRules['setHumanPassword'], Details, C>;
  verifyEmail: Mutation<UserInputRules['verifyCode'], Details, C>;
  verifyPhone: Mutation<UserInputRules['verifyCode'], Details, C>;
  addOIDCIdentityProvider: Mutation<IdpInputs['addOIDCIdentityProvider'], AddIdpResult, C>;
  updateOIDCIdentityProvider: Mutation<IdpInputs['updateOIDCIdentityProvider'], Details, C>;
  addProject: Mutation<ProjectInputRules['addProject'], { projectId: string; details: Details }, C>;
  addSAMLApp: Mutation<ProjectInputRules['addSAMLApp'], AddSAMLAppResult, C>;
  addOrganization: Mutation<OrgInputs['addOrganization'], { orgId: string; details: Details }, C>;
  addOrgMember: Mutation<OrgInputs['addOrgMember'], Details, C>;
  registerU2F: Mutation<U2FInputRules['registerU2F'], RegisterU2FResult, C>;
  verifyU2FRegistration: Mutation<U2FInputRules['verifyU2FRegistration'], Details, C>;
  resendEmailCode: Mutation<ResendInputs['resendEmailCode'], Details, C>;
  resendPhoneCode: Mutation<ResendInputs['resendPhoneCode'], Details, C>;

  // Reads.
  me(ctx: C): Promise<Snapshot<User>>;
  /**
   * A part of a user that a read may leave out: its metadata, identity-provider links or security
   * keys. The command layer's snapshots hold them; upstream mode asks ZITADEL for the part when a
   * query selects it (one call for the user), so reads that do not select it cost nothing more.
   */
  userPart<K extends UserPart>(ctx: C, user: Snapshot<User>, part: K): Promise<User[K]>;
  /** A project's SAML apps, likewise (upstream mode: ZITADEL's ListApps). */
  projectApps(ctx: C, project: Snapshot<Project>): Promise<Project['apps']>;
  /** A user of the acting organization; null when it is not there. */
  user(ctx: C, id: string): Promise<Snapshot<User> | null>;
  /** A user looked for in `scope` (reads.ts readUser). */
  readUser(ctx: C, id: string, scope: UserScope): Promise<Snapshot<User> | null>;
  /** A page of users; `search` is the client's filter and page, checked by the operation. */
  users(ctx: C, search: unknown): Promise<UserPage>;
  organization(ctx: C, id: string): Promise<Snapshot<Org> | null>;
  identityProvider(ctx: C, id: string): Promise<Snapshot<IdentityProvider> | null>;
  project(ctx: C, id: string): Promise<Snapshot<Project> | null>;
  /** The federation entity loads: those of `ids` the caller may see, by id. */
  entities<S>(ctx: C, kind: EntityKind, ids: readonly string[]): Promise<Map<string, Snapshot<S>>>;
  history(ctx: C, kind: HistoryKind, id: string, page: PageArgs): Promise<HistoryPage>;
  /** ZITADEL's change lists: history from a sequence on (`id` null: the acting organization). */
  historyFromSequence(ctx: C, kind: HistoryKind, id: string | null, query: SequenceQuery, userScope?: UserScope): Promise<HistoryPage>;
}

/** An implementation of the operations with the factory of its per-request context, as a face receives them. */
export interface FaceOperations {
  /** The context of one request (may throw: a header the rules refuse). */
  requestContext(headers: HeaderSource, caller: CallerFacts): OperationContext;
  ops: Operations<OperationContext>;
}

/**
 * Pairs an implementation with the factory of its context. The face hands each request's context,
 * made by `requestContext`, back to the same `ops` and to nothing else: that is why the pair may
 * forget which context type it is (the one cast, checked here by the type parameter).
 */
export const faceOperations = <C extends OperationContext>(
  requestContext: (headers: HeaderSource, caller: CallerFacts) => C,
  ops: Operations<C>,
): FaceOperations => ({ requestContext, ops: ops as unknown as Operations<OperationContext> });
