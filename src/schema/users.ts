// GraphQL surface of the user operations: inputs, payloads, the User type. Thin: map and call.
import { detailsOf, type AddHumanUserResult, type Details } from '../operations.ts';
import type { User } from '../model/users.ts';
import type { Snapshot } from '../store/port.ts';
import type { Builder, InputFields } from './builder.ts';
import { withDetails, type Common } from './common.ts';
import { asEntity } from './entities.ts';

export function addUsers(builder: Builder, { Details: DetailsRef, Gender, detailsPayload, commandMutation }: Common) {
  const { UpdateMyProfileInput, UpdateHumanProfileInput, AddHumanUserInput, SetEmailInput, UpdateHumanPhoneInput, SetHumanPasswordInput } =
    userInputs(builder, Gender);
  const { VerifyEmailInput, VerifyPhoneInput } = verifyInputs(builder);

  const AddHumanUserPayload = builder.objectRef<AddHumanUserResult>('AddHumanUserPayload').implement({
    fields: (t) => ({
      userId: t.exposeID('userId'),
      details: t.field({ type: DetailsRef, resolve: (p) => p.details }),
      emailCode: t.exposeString('emailCode', { nullable: true, description: 'Set only when the email code was asked to be returned.' }),
      phoneCode: t.exposeString('phoneCode', { nullable: true, description: 'Set only when the phone code was asked to be returned.' }),
    }),
  });
  const SetEmailPayload = builder.objectRef<{ details: Details; verificationCode: string | null }>('SetEmailPayload').implement({
    fields: (t) => ({
      details: t.field({ type: DetailsRef, resolve: (p) => p.details }),
      verificationCode: t.exposeString('verificationCode', { nullable: true, description: 'Set only when returnCode was true.' }),
    }),
  });

  commandMutation('updateMyProfile', {
    description: '1. Change the profile of the authenticated user.',
    input: UpdateMyProfileInput,
    payload: detailsPayload('UpdateMyProfilePayload'),
    run: withDetails((ops) => ops.updateMyProfile),
  });
  commandMutation('updateHumanProfile', {
    description: '4. Update the profile of a human user.',
    input: UpdateHumanProfileInput,
    payload: detailsPayload('UpdateHumanProfilePayload'),
    run: withDetails((ops) => ops.updateHumanProfile),
  });
  commandMutation('addHumanUser', {
    description: '5. Create or import a human user.',
    input: AddHumanUserInput,
    payload: AddHumanUserPayload,
    run: (ops) => ops.addHumanUser,
  });
  commandMutation('setEmail', {
    description: '6. Change the email of a user.',
    input: SetEmailInput,
    payload: SetEmailPayload,
    run: (ops) => ops.setEmail,
  });
  commandMutation('updateHumanPhone', {
    description: '7. Update the phone of a human user.',
    input: UpdateHumanPhoneInput,
    payload: detailsPayload('UpdateHumanPhonePayload'),
    run: withDetails((ops) => ops.updateHumanPhone),
  });
  commandMutation('setHumanPassword', {
    description: '9. Set the password of a human user.',
    input: SetHumanPasswordInput,
    payload: detailsPayload('SetHumanPasswordPayload'),
    run: withDetails((ops) => ops.setHumanPassword),
  });
  commandMutation('verifyEmail', {
    description: 'Verify the email of a user with the code that was sent or returned.',
    input: VerifyEmailInput,
    payload: detailsPayload('VerifyEmailPayload'),
    run: withDetails((ops) => ops.verifyEmail),
  });
  commandMutation('verifyPhone', {
    description: 'Verify the phone of a user with the code that was sent.',
    input: VerifyPhoneInput,
    payload: detailsPayload('VerifyPhonePayload'),
    run: withDetails((ops) => ops.verifyPhone),
  });

  addUserType(builder, DetailsRef, Gender);
}

/** The input types of the user mutations. */
function userInputs(builder: Builder, Gender: Common['Gender']) {
  const profileFields = <Required extends boolean>(t: InputFields, displayNameRequired: Required) => ({
    firstName: t.string({ required: true }),
    lastName: t.string({ required: true }),
    nickName: t.string(),
    displayName: t.string({ required: displayNameRequired }),
    preferredLanguage: t.string(),
    gender: t.field({ type: Gender, defaultValue: 'GENDER_UNSPECIFIED' }),
  });

  const UpdateMyProfileInput = builder.inputType('UpdateMyProfileInput', { fields: (t) => profileFields(t, true) });
  const UpdateHumanProfileInput = builder.inputType('UpdateHumanProfileInput', {
    fields: (t) => ({ userId: t.id({ required: true }), ...profileFields(t, false) }),
  });
  const ProfileInput = builder.inputType('ProfileInput', { fields: (t) => profileFields(t, false) });
  const OrganisationInput = builder.inputType('OrganisationInput', {
    fields: (t) => ({ orgId: t.id(), orgDomain: t.string() }),
  });
  const SendEmailCodeInput = builder.inputType('SendEmailCodeInput', {
    fields: (t) => ({
      urlTemplate: t.string({
        description:
          'Link template for the verification mail, e.g. https://app.example/verify?user={{.UserID}}&code={{.Code}}; a default is used when absent.',
      }),
    }),
  });
  const oneOf = 'At most one of sendCode, returnCode and isVerified may be given.';
  const EmailInput = builder.inputType('EmailInput', {
    description: oneOf,
    fields: (t) => ({
      email: t.string({ required: true }),
      sendCode: t.field({ type: SendEmailCodeInput }),
      returnCode: t.boolean(),
      isVerified: t.boolean(),
    }),
  });
  const PhoneInput = builder.inputType('PhoneInput', {
    description: oneOf,
    fields: (t) => ({ phone: t.string(), sendCode: t.boolean(), returnCode: t.boolean(), isVerified: t.boolean() }),
  });
  const MetadataInput = builder.inputType('MetadataInput', {
    fields: (t) => ({ key: t.string({ required: true }), value: t.field({ type: 'Base64', required: true }) }),
  });
  const PasswordInput = builder.inputType('PasswordInput', {
    fields: (t) => ({ password: t.string({ required: true }), changeRequired: t.boolean() }),
  });
  const HashedPasswordInput = builder.inputType('HashedPasswordInput', {
    fields: (t) => ({ hash: t.string({ required: true }), changeRequired: t.boolean() }),
  });
  const IDPLinkInput = builder.inputType('IDPLinkInput', {
    fields: (t) => ({ idpId: t.id({ required: true }), userId: t.string({ required: true }), userName: t.string({ required: true }) }),
  });
  const AddHumanUserInput = builder.inputType('AddHumanUserInput', {
    description: 'password and hashedPassword are mutually exclusive.',
    fields: (t) => ({
      userId: t.id(),
      username: t.string(),
      organisation: t.field({ type: OrganisationInput }),
      profile: t.field({ type: ProfileInput, required: true }),
      email: t.field({ type: EmailInput, required: true }),
      phone: t.field({ type: PhoneInput }),
      metadata: t.field({ type: [MetadataInput] }),
      password: t.field({ type: PasswordInput }),
      hashedPassword: t.field({ type: HashedPasswordInput }),
      idpLinks: t.field({ type: [IDPLinkInput] }),
    }),
  });
  const SetEmailInput = builder.inputType('SetEmailInput', {
    description: oneOf,
    fields: (t) => ({
      userId: t.id({ required: true }),
      email: t.string({ required: true }),
      sendCode: t.field({ type: SendEmailCodeInput }),
      returnCode: t.boolean(),
      isVerified: t.boolean(),
    }),
  });
  const UpdateHumanPhoneInput = builder.inputType('UpdateHumanPhoneInput', {
    fields: (t) => ({
      userId: t.id({ required: true }),
      phone: t.string({ required: true, description: 'Global number as in RFC 3966, e.g. +41791234567.' }),
      isPhoneVerified: t.boolean(),
    }),
  });
  const SetHumanPasswordInput = builder.inputType('SetHumanPasswordInput', {
    fields: (t) => ({ userId: t.id({ required: true }), password: t.string({ required: true }), noChangeRequired: t.boolean() }),
  });
  return { UpdateMyProfileInput, UpdateHumanProfileInput, AddHumanUserInput, SetEmailInput, UpdateHumanPhoneInput, SetHumanPasswordInput };
}

/** The inputs of the two verification mutations. */
function verifyInputs(builder: Builder) {
  const VerifyEmailInput = builder.inputType('VerifyEmailInput', {
    fields: (t) => ({ userId: t.id({ required: true }), verificationCode: t.string({ required: true }) }),
  });
  const VerifyPhoneInput = builder.inputType('VerifyPhoneInput', {
    fields: (t) => ({ userId: t.id({ required: true }), verificationCode: t.string({ required: true }) }),
  });
  return { VerifyEmailInput, VerifyPhoneInput };
}

function addUserType(builder: Builder, DetailsRef: Common['Details'], Gender: Common['Gender']) {
  const UserState = builder.enumType('UserState', {
    values: ['USER_STATE_ACTIVE', 'USER_STATE_INITIAL', 'USER_STATE_INACTIVE', 'USER_STATE_LOCKED'] as const,
  });
  const U2FTokenState = builder.enumType('U2FTokenState', { values: ['U2F_STATE_NOT_READY', 'U2F_STATE_READY'] as const });
  const Profile = builder.objectRef<User['profile']>('Profile').implement({
    fields: (t) => ({
      firstName: t.exposeString('firstName'),
      lastName: t.exposeString('lastName'),
      nickName: t.exposeString('nickName', { nullable: true }),
      displayName: t.exposeString('displayName', { nullable: true }),
      preferredLanguage: t.exposeString('preferredLanguage', { nullable: true }),
      gender: t.field({ type: Gender, resolve: (p) => p.gender }),
    }),
  });
  const Email = builder.objectRef<User['email']>('Email').implement({
    fields: (t) => ({ email: t.exposeString('email'), isVerified: t.exposeBoolean('isVerified') }),
  });
  const Phone = builder.objectRef<NonNullable<User['phone']>>('Phone').implement({
    fields: (t) => ({ phone: t.exposeString('phone'), isVerified: t.exposeBoolean('isVerified') }),
  });
  const Metadata = builder.objectRef<User['metadata'][number]>('Metadata').implement({
    fields: (t) => ({ key: t.exposeString('key'), value: t.field({ type: 'Base64', resolve: (m) => m.value }) }),
  });
  const IDPLink = builder.objectRef<User['idpLinks'][number]>('IDPLink').implement({
    fields: (t) => ({ idpId: t.exposeID('idpId'), userId: t.exposeString('userId'), userName: t.exposeString('userName') }),
  });
  const U2FToken = builder.objectRef<User['u2fTokens'][number]>('U2FToken').implement({
    fields: (t) => ({
      id: t.exposeID('id'),
      name: t.exposeString('name', { nullable: true }),
      state: t.field({ type: U2FTokenState, resolve: (u) => u.state }),
    }),
  });
  const UserRef = builder.objectRef<Snapshot<User>>('User').implement({
    fields: (t) => ({
      id: t.exposeID('id'),
      username: t.string({ resolve: (u) => u.state.username }),
      state: t.field({ type: UserState, resolve: (u) => u.state.state }),
      resourceOwner: t.exposeID('resourceOwner', { description: 'The organization the user belongs to.' }),
      details: t.field({
        type: DetailsRef,
        resolve: (u) => ({ ...detailsOf(u, true), creationDate: u.creationDate }),
      }),
      profile: t.field({ type: Profile, resolve: (u) => u.state.profile }),
      email: t.field({ type: Email, resolve: (u) => u.state.email }),
      phone: t.field({ type: Phone, nullable: true, resolve: (u) => u.state.phone }),
      passwordChangeRequired: t.boolean({
        description: 'True when the user must change the password at the next login. The password itself is never readable.',
        resolve: (u) => u.state.passwordChangeRequired,
      }),
      // A password set before passwordChanged was recorded has only its hash; upstream mode has only the time.
      hasPassword: t.boolean({ resolve: (u) => u.state.passwordHash !== null || u.state.passwordChanged !== undefined }),
      metadata: t.field({ type: [Metadata], resolve: (u, _a, ctx) => ctx.ops.userPart(ctx.cmd, u, 'metadata') }),
      idpLinks: t.field({ type: [IDPLink], resolve: (u, _a, ctx) => ctx.ops.userPart(ctx.cmd, u, 'idpLinks') }),
      u2fTokens: t.field({ type: [U2FToken], resolve: (u, _a, ctx) => ctx.ops.userPart(ctx.cmd, u, 'u2fTokens') }),
    }),
  });

  asEntity(builder, UserRef, 'user');

  builder.queryField('me', (t) =>
    t.field({ type: UserRef, description: 'The authenticated user.', resolve: (_r, _a, ctx) => ctx.ops.me(ctx.cmd) }),
  );
  builder.queryField('user', (t) =>
    t.field({
      type: UserRef,
      nullable: true,
      description: 'A user of the organization selected by x-service-orgid; null when it does not exist there.',
      args: { id: t.arg.id({ required: true }) },
      resolve: (_r, args, ctx) => ctx.ops.user(ctx.cmd, String(args.id)),
    }),
  );
}
