// Use cases of the user aggregate: create, profile, email, phone, password, verification.
import { alreadyExists, failedPrecondition, invalid, notFound, permissionDenied } from '../errors.ts';
import { normalizePhone } from '../model/phone.ts';
import { humanUserClaims, sameProfile, userEvent, type Profile, type User } from '../model/users.ts';
import { INSTANCE_ID, type Org } from '../model/orgs.ts';
import type { Snapshot } from '../store/port.ts';
import {
  actingOrg,
  authenticate,
  permissionReads,
  requireIn,
  requireMayChange,
  userForSelfOrPermission,
  userInOrg,
  userReads,
  type Caller,
} from './access.ts';
import { detailsOf, load, orgHint, prefetch, type CommandContext, type Details } from './context.ts';
import { write } from './runner.ts';
import type {
  AddHumanUserInput,
  SetEmailInput,
  SetHumanPasswordInput,
  UpdateHumanPhoneInput,
  UpdateMyProfileInput,
  UpdateProfileInput,
  VerifyCodeInput,
} from './user-inputs.ts';
import { command } from './command.ts';
import { undoIfThrows } from '../codes/codes.ts';
import { userInputRules } from './user-inputs.ts';

type ProfileInput = Omit<UpdateMyProfileInput, never> | UpdateProfileInput | AddHumanUserInput['profile'];

function toProfile(p: ProfileInput): Profile {
  return {
    firstName: p.firstName.trim(),
    lastName: p.lastName.trim(),
    nickName: p.nickName?.trim() || null,
    displayName: p.displayName?.trim() || null,
    preferredLanguage: p.preferredLanguage?.trim() || null,
    gender: p.gender ?? 'GENDER_UNSPECIFIED',
  };
}

async function changeProfile(ctx: CommandContext, user: Snapshot<User>, input: ProfileInput): Promise<Details> {
  const profile = toProfile(input);
  const { snapshot } = await write(ctx, 'user', user.id, (current) => {
    if (!current) throw notFound('User');
    if (sameProfile(current.state.profile, profile)) throw failedPrecondition('The profile has not changed');
    return { ...userEvent.profileChanged(profile), resourceOwner: current.resourceOwner };
  });
  return detailsOf(snapshot, true);
}

export const updateMyProfile = command(
  (c) => userInputRules(c).updateMyProfile,
  async function updateMyProfile(ctx, input: UpdateMyProfileInput): Promise<Details> {
    const caller = await authenticate(ctx);
    return changeProfile(ctx, caller.user, input);
  },
);

/** The x-service-orgid operations: caller, acting organization, permission, target user there. */
async function orgScopedUser(ctx: CommandContext, userId: string) {
  // One round trip for the caller, the target, the instance and (header or hint) the
  // acting organization; a second only for organizations that guess did not cover.
  const caller = await authenticate(ctx, { ...permissionReads(ctx), user: [userId] });
  const target = await load<User>(ctx, 'user', userId);
  await prefetch(ctx, { org: [ctx.orgHeader ?? caller.user.resourceOwner, ...(target?.state.memberOf ?? [])] });
  const org = await actingOrg(ctx, caller);
  await requireIn(ctx, caller, org, 'user.write');
  const user = await userInOrg(ctx, org, userId);
  await requireMayChange(ctx, caller, user);
  return { caller, org, user };
}

export const updateHumanProfile = command(
  (c) => userInputRules(c).updateHumanProfile,
  async function updateHumanProfile(ctx, input: UpdateProfileInput): Promise<Details> {
    const { user } = await orgScopedUser(ctx, input.userId);
    return changeProfile(ctx, user, input);
  },
);

/** Where a code goes: returned, sent, or none because the address is verified. */
type CodeChoice = 'return' | 'send' | 'none';
const codeChoice = (v: { returnCode?: boolean | null; isVerified?: boolean | null }): CodeChoice =>
  v.isVerified ? 'none' : v.returnCode ? 'return' : 'send';

async function resolveCreateOrg(ctx: CommandContext, caller: Caller, organisation: AddHumanUserInput['organisation']) {
  let explicit = organisation?.orgId ?? null;
  if (!explicit && organisation?.orgDomain) {
    const holder = await ctx.deps.store.lookup(`orgDomain:${organisation.orgDomain.trim().toLowerCase()}`);
    if (!holder) throw permissionDenied();
    explicit = holder.aggregateId;
  }
  return actingOrg(ctx, caller, explicit);
}

export interface AddHumanUserResult {
  userId: string;
  details: Details;
  emailCode: string | null;
  phoneCode: string | null;
}

export const addHumanUser = command(
  (c) => userInputRules(c).addHumanUser,
  async function addHumanUser(ctx, input: AddHumanUserInput): Promise<AddHumanUserResult> {
    const { deps } = ctx;
    const givenId = input.userId?.trim() || null;
    const idpIds = (input.idpLinks ?? []).map((l) => l.idpId);
    // One round trip: the caller, the instance, the organization (unless named by
    // domain), the identity providers linked and a given user id.
    const namedByDomain = !input.organisation?.orgId && !!input.organisation?.orgDomain;
    const caller = await authenticate(ctx, {
      ...(namedByDomain ? { instance: [INSTANCE_ID] } : permissionReads(ctx, input.organisation?.orgId)),
      idp: idpIds,
      user: [givenId],
    });
    const org = await resolveCreateOrg(ctx, caller, input.organisation);
    await requireIn(ctx, caller, org, 'user.write');

    // An organization's identity provider serves its own users only (as in ZITADEL): one of
    // another organization is NOT_FOUND, like an unknown one, so its id is not confirmed either.
    for (const idpId of idpIds) {
      const idp = await load(ctx, 'idp', idpId);
      if (!idp || (idp.resourceOwner !== org.id && idp.resourceOwner !== INSTANCE_ID)) throw notFound(`Identity provider ${idpId}`);
    }
    const userId = givenId ?? deps.newId();
    if (givenId && (await load(ctx, 'user', givenId))) throw alreadyExists(`User ${userId}`);

    const email = input.email.email.trim();
    const username = input.username?.trim() || email;
    const phoneNumber = input.phone?.phone?.trim()
      ? normalizePhone(input.phone.phone, { defaultRegion: deps.config.defaultPhoneRegion, requireGlobal: false })
      : null;
    const emailChoice = codeChoice(input.email);
    const phoneChoice = input.phone ? codeChoice(input.phone) : 'none';
    const sendSms = phoneNumber !== null && phoneChoice === 'send' && deps.notifier.canDeliver('sms');

    const passwordHash = input.password ? await deps.hasher.hash(input.password.password) : (input.hashedPassword?.hash ?? null);
    const changeRequired = input.password?.changeRequired ?? input.hashedPassword?.changeRequired ?? false;

    // Codes are stored before the user exists so that a Redis outage fails the whole
    // mutation; a failed append takes them back (a given userId may be racing with another
    // creation, whose code must stay: src/codes/port.ts).
    const emailIssued = emailChoice === 'none' ? null : await deps.codes.issueUndoable(userId, 'email', email);
    const phoneIssued =
      phoneNumber && (phoneChoice === 'return' || sendSms)
        ? await undoIfThrows([emailIssued?.undo], () => deps.codes.issueUndoable(userId, 'phone', phoneNumber))
        : null;
    const emailCode = emailIssued?.code ?? null;
    const phoneCode = phoneIssued?.code ?? null;

    const user: Omit<User, 'state'> = {
      username,
      profile: toProfile(input.profile),
      email: { email, isVerified: emailChoice === 'none' },
      phone: phoneNumber ? { phone: phoneNumber, isVerified: phoneChoice === 'none' && !!input.phone?.isVerified } : null,
      passwordHash,
      passwordChangeRequired: passwordHash ? changeRequired : false,
      metadata: (input.metadata ?? []).map((m) => ({ key: m.key, value: m.value })),
      idpLinks: (input.idpLinks ?? []).map((l) => ({ idpId: l.idpId, userId: l.userId, userName: l.userName })),
      u2fTokens: [],
    };
    const claims = humanUserClaims(user);
    const { snapshot } = await undoIfThrows([emailIssued?.undo, phoneIssued?.undo], () =>
      write(
        ctx,
        'user',
        userId,
        (current) => {
          if (current) throw alreadyExists(`User ${userId}`);
          return { ...userEvent.added(user), resourceOwner: org.id, claims };
        },
        { isNew: !givenId },
      ),
    );

    if (emailCode && emailChoice === 'send') {
      await deps.notifier.enqueue({
        kind: 'verify-email-on-create',
        userId,
        orgId: org.id,
        to: email,
        code: emailCode,
        urlTemplate: input.email.sendCode?.urlTemplate ?? undefined,
      });
    }
    if (phoneCode && sendSms) {
      await deps.notifier.enqueue({ kind: 'verify-phone', userId, orgId: org.id, to: phoneNumber!, code: phoneCode });
    }
    return {
      userId,
      details: detailsOf(snapshot, false),
      emailCode: emailChoice === 'return' ? emailCode : null,
      phoneCode: phoneChoice === 'return' ? phoneCode : null,
    };
  },
);

export const setEmail = command(
  (c) => userInputRules(c).setEmail,
  async function setEmail(ctx, input: SetEmailInput): Promise<{ details: Details; verificationCode: string | null }> {
    const { deps } = ctx;
    const self = input.userId === ctx.callerId;
    const choice = codeChoice(input);
    // The user itself may neither mark the address verified nor take the code that verifies it:
    // both would skip proving that it owns the mailbox. That needs user.write in its organization.
    const unproven = self && choice !== 'send';
    const ownOrg = { org: [orgHint(ctx, ctx.callerId)], instance: [INSTANCE_ID] };
    const caller = await authenticate(ctx, unproven ? ownOrg : userReads(ctx, input.userId));
    const { user } = await userForSelfOrPermission(ctx, caller, input.userId, 'user.write');
    if (unproven) {
      const org = await load<Org>(ctx, 'org', user.resourceOwner);
      if (!org) throw permissionDenied();
      await requireIn(ctx, caller, org, 'user.write');
    }
    const email = input.email.trim();
    if (user.state.email.email === email) throw failedPrecondition('The email has not changed');
    // Before the append, so that a Redis outage fails the mutation; taken back if the append fails.
    const issued = choice === 'none' ? null : await deps.codes.issueUndoable(user.id, 'email', email);
    const code = issued?.code ?? null;
    const undo = issued ? issued.undo : await deps.codes.clear(user.id, 'email');

    const { snapshot } = await undoIfThrows([undo], () =>
      write(ctx, 'user', user.id, (current) => {
        if (!current) throw notFound('User');
        if (current.state.email.email === email) throw failedPrecondition('The email has not changed');
        return { ...userEvent.emailChanged(email, choice === 'none'), resourceOwner: current.resourceOwner };
      }),
    );
    if (code && choice === 'send') {
      await deps.notifier.enqueue({
        kind: 'verify-email-on-change',
        userId: user.id,
        orgId: user.resourceOwner,
        to: email,
        code,
        urlTemplate: input.sendCode?.urlTemplate ?? undefined,
      });
    }
    return { details: detailsOf(snapshot, false), verificationCode: choice === 'return' ? code : null };
  },
);

export const updateHumanPhone = command(
  (c) => userInputRules(c).updateHumanPhone,
  async function updateHumanPhone(ctx, input: UpdateHumanPhoneInput): Promise<Details> {
    const { deps } = ctx;
    const { user } = await orgScopedUser(ctx, input.userId);
    const phone = normalizePhone(input.phone, { defaultRegion: deps.config.defaultPhoneRegion, requireGlobal: true });
    if (!phone) throw invalid('input.phone', 'must be a global number starting with +');
    const isVerified = !!input.isPhoneVerified;
    const unchanged = (u: User) => u.phone?.phone === phone && u.phone.isVerified === isVerified;
    if (unchanged(user.state)) throw failedPrecondition('The phone has not changed');

    const sendSms = !isVerified && deps.notifier.canDeliver('sms');
    // Before the append, so that a Redis outage fails the mutation; taken back if the append fails.
    const issued = sendSms ? await deps.codes.issueUndoable(user.id, 'phone', phone) : null;
    const code = issued?.code ?? null;
    const cleared = isVerified ? await deps.codes.clear(user.id, 'phone') : null;

    const { snapshot } = await undoIfThrows([issued?.undo, cleared], () =>
      write(ctx, 'user', user.id, (current) => {
        if (!current) throw notFound('User');
        if (unchanged(current.state)) throw failedPrecondition('The phone has not changed');
        return { ...userEvent.phoneChanged(phone, isVerified), resourceOwner: current.resourceOwner };
      }),
    );
    if (code) await deps.notifier.enqueue({ kind: 'verify-phone', userId: user.id, orgId: user.resourceOwner, to: phone, code });
    return detailsOf(snapshot, true);
  },
);

export const setHumanPassword = command(
  (c) => userInputRules(c).setHumanPassword,
  async function setHumanPassword(ctx, input: SetHumanPasswordInput): Promise<Details> {
    const { user } = await orgScopedUser(ctx, input.userId);
    const hash = await ctx.deps.hasher.hash(input.password);
    const { snapshot } = await write(ctx, 'user', user.id, (current) => {
      if (!current) throw notFound('User');
      return { ...userEvent.passwordChanged(hash, !input.noChangeRequired), resourceOwner: current.resourceOwner };
    });
    return detailsOf(snapshot, true);
  },
);

async function verifyChannel(ctx: CommandContext, input: VerifyCodeInput, channel: 'email' | 'phone'): Promise<Details> {
  const caller = await authenticate(ctx, userReads(ctx, input.userId));
  const { user } = await userForSelfOrPermission(ctx, caller, input.userId, 'user.write');
  const address = channel === 'email' ? user.state.email.email : user.state.phone?.phone;
  if (!address) throw failedPrecondition('The user has no phone');
  const { result, undo } = await ctx.deps.codes.verifyUndoable(user.id, channel, input.verificationCode, address);
  if (result === 'wrong') throw invalid('input.verificationCode', 'the code is not valid');
  if (result !== 'ok') throw failedPrecondition(`No valid ${channel} code is pending for this ${channel}`);
  // The code is consumed; when nothing is written, it is pending again so the user can try again.
  const { snapshot } = await undoIfThrows([undo], () =>
    write(ctx, 'user', user.id, (current) => {
      if (!current) throw notFound('User');
      // The code proves the address it was sent to: one changed meanwhile (a setEmail between the
      // check and this append, seen on a retry after the conflict) is not verified by it.
      const now = channel === 'email' ? current.state.email.email : current.state.phone?.phone;
      if (now !== address) throw failedPrecondition(`The ${channel} changed after the code was checked`);
      return { ...(channel === 'email' ? userEvent.emailVerified() : userEvent.phoneVerified()), resourceOwner: current.resourceOwner };
    }),
  );
  return detailsOf(snapshot, false);
}

export const verifyEmail = command(
  (c) => userInputRules(c).verifyCode,
  function verifyEmail(ctx, input) {
    return verifyChannel(ctx, input, 'email');
  },
);
export const verifyPhone = command(
  (c) => userInputRules(c).verifyCode,
  function verifyPhone(ctx, input) {
    return verifyChannel(ctx, input, 'phone');
  },
);
