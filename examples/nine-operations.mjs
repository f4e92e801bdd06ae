// The nine operations of the identity API with ZITADEL's own Node client (@zitadel/client), unchanged,
// over gRPC, gRPC-web or Connect; each is followed by a read-back where the API has one.
//
//   GATEWAY=http://127.0.0.1:4000 TOKEN='<the printed token>' TRANSPORT=grpc node examples/nine-operations.mjs
//
// TRANSPORT: grpc (default; HTTP/2), grpc-web or connect (binary; both over HTTP/1.1).
// ORIGIN: the origin the software authenticator reports for the U2F registration; one of the
// gateway's WEBAUTHN_ORIGINS (default http://localhost:4000 on both sides).
// The token's user needs the rights of an instance administrator (the bootstrap admin has them):
// the run adds an organization and works inside it with the x-zitadel-orgid header.
// One JSON line per operation ({op, sequence, ...}), then one summary line; a failed call or a
// read-back that disagrees ends the run with exit code 1 and the reason on stderr.
import { Code, ConnectError } from '@connectrpc/connect';
import { createConnectTransport, createGrpcWebTransport } from '@connectrpc/connect-node';
import { createServerTransport } from '@zitadel/client/node';
import { createAuthServiceClient, createManagementServiceClient } from '@zitadel/client/v1';
import { createOrganizationServiceClient, createUserServiceClient } from '@zitadel/client/v2';
import { OIDCMappingField } from '@zitadel/proto/zitadel/idp_pb.js';
import { Gender } from '@zitadel/proto/zitadel/user/v2/user_pb.js';
import { createCredential, DEFAULT_ORIGIN } from './soft-authenticator.mjs';

const baseUrl = process.env.GATEWAY ?? 'http://127.0.0.1:4000';
const token = process.env.TOKEN;
const kind = process.env.TRANSPORT || 'grpc';
const origin = process.env.ORIGIN || DEFAULT_ORIGIN;
if (!token) {
  console.error('TOKEN is not set');
  process.exit(2);
}

const bearer = (next) => async (req) => {
  req.header.set('authorization', `Bearer ${token}`);
  return next(req);
};
const transports = {
  // @zitadel/client's own: connect-node's gRPC transport (HTTP/2) with the bearer token.
  grpc: () => createServerTransport(token, { baseUrl }),
  'grpc-web': () => createGrpcWebTransport({ baseUrl, httpVersion: '1.1', interceptors: [bearer] }),
  connect: () => createConnectTransport({ baseUrl, httpVersion: '1.1', interceptors: [bearer] }),
};
if (!transports[kind]) {
  console.error(`TRANSPORT must be one of ${Object.keys(transports).join(', ')}, not ${kind}`);
  process.exit(2);
}
const transport = transports[kind]();
const auth = createAuthServiceClient(transport);
const management = createManagementServiceClient(transport);
const users = createUserServiceClient(transport);
const organizations = createOrganizationServiceClient(transport);

const run = Date.now().toString(36) + Math.random().toString(36).slice(2, 6);
const seq = (details) => String(details.sequence);
function same(what, actual, expected) {
  if (JSON.stringify(actual) !== JSON.stringify(expected)) {
    throw new Error(`read back ${what} ${JSON.stringify(actual)}, expected ${JSON.stringify(expected)}`);
  }
}
const done = [];
const print = (line) => {
  done.push(line.op);
  console.log(JSON.stringify(line));
};
let current = 'AddOrganization';

try {
  // A fresh organization for this run; the v1 management calls name it in x-zitadel-orgid.
  const { organizationId: orgId } = await organizations.addOrganization({ name: `Nine operations ${run}` });
  const inOrg = { headers: { 'x-zitadel-orgid': orgId } };

  // 1. UpdateMyProfile (auth v1), read back with GetMyUser.
  current = 'UpdateMyProfile';
  const myName = `Admin ${run}`;
  const mine = await auth.updateMyProfile({ firstName: 'Grace', lastName: 'Hopper', displayName: myName, gender: Gender.FEMALE });
  const me = (await auth.getMyUser({})).user;
  same('display name', me.type.value.profile.displayName, myName);
  same('sequence', seq(me.details), seq(mine.details));
  print({ op: current, sequence: seq(mine.details), userId: me.id, displayName: me.type.value.profile.displayName });

  // 2. AddHumanUser (user v2) with the email code returned, read back with GetUserByID.
  current = 'AddHumanUser';
  const username = `ada-${run}`;
  const added = await users.addHumanUser({
    username,
    organization: { org: { case: 'orgId', value: orgId } },
    profile: { givenName: 'Ada', familyName: 'Lovelace', gender: Gender.FEMALE },
    email: { email: `${username}@example.com`, verification: { case: 'returnCode', value: {} } },
    passwordType: { case: 'password', value: { password: 'Secr3t!pass', changeRequired: true } },
  });
  const { userId } = added;
  let user = (await users.getUserByID({ userId })).user;
  same('username', user.username, username);
  same('sequence', seq(user.details), seq(added.details));
  print({
    op: current,
    sequence: seq(added.details),
    userId,
    orgId: user.details.resourceOwner,
    username: user.username,
    emailCode: added.emailCode !== '',
  });

  // 3. UpdateHumanProfile (management v1), read back with GetUserByID (v1).
  current = 'UpdateHumanProfile';
  const profile = await management.updateHumanProfile(
    { userId, firstName: 'Augusta Ada', lastName: 'King', displayName: 'Ada King' },
    inOrg,
  );
  let human = (await management.getUserByID({ id: userId }, inOrg)).user.type.value;
  same('profile', [human.profile.firstName, human.profile.lastName, human.profile.displayName], ['Augusta Ada', 'King', 'Ada King']);
  print({
    op: current,
    sequence: seq(profile.details),
    userId,
    firstName: human.profile.firstName,
    lastName: human.profile.lastName,
    displayName: human.profile.displayName,
  });

  // 4. SetEmail (user v2) with the code returned, then VerifyEmail with it; read back with GetUserByID.
  current = 'SetEmail';
  const email = `countess-${run}@example.com`;
  const changed = await users.setEmail({ userId, email, verification: { case: 'returnCode', value: {} } });
  const verified = await users.verifyEmail({ userId, verificationCode: changed.verificationCode });
  user = (await users.getUserByID({ userId })).user;
  same('email', [user.type.value.email.email, user.type.value.email.isVerified], [email, true]);
  print({
    op: current,
    sequence: seq(changed.details),
    userId,
    email: user.type.value.email.email,
    verifiedSequence: seq(verified.details),
    isVerified: user.type.value.email.isVerified,
  });

  // 5. UpdateHumanPhone (management v1), read back with GetUserByID (v1).
  current = 'UpdateHumanPhone';
  const phone = await management.updateHumanPhone({ userId, phone: '+41791234567', isPhoneVerified: true }, inOrg);
  human = (await management.getUserByID({ id: userId }, inOrg)).user.type.value;
  same('phone', [human.phone.phone, human.phone.isPhoneVerified], ['+41791234567', true]);
  print({ op: current, sequence: seq(phone.details), userId, phone: human.phone.phone, isPhoneVerified: human.phone.isPhoneVerified });

  // 6. SetHumanPassword (management v1), read back with GetUserByID (v2): no change required any more.
  current = 'SetHumanPassword';
  const password = await management.setHumanPassword({ userId, password: `N3w!${run}`, noChangeRequired: true }, inOrg);
  user = (await users.getUserByID({ userId })).user;
  same('passwordChangeRequired', user.type.value.passwordChangeRequired, false);
  print({ op: current, sequence: seq(password.details), userId, passwordChangeRequired: user.type.value.passwordChangeRequired });

  // 7. RegisterU2F, a software authenticator answers the creation options, VerifyU2FRegistration.
  current = 'VerifyU2FRegistration';
  const registered = await users.registerU2F({ userId });
  const credential = createCredential(registered.publicKeyCredentialCreationOptions, { origin });
  const u2f = await users.verifyU2FRegistration({
    userId,
    u2fId: registered.u2fId,
    publicKeyCredential: credential,
    tokenName: `Soft key ${run}`,
  });
  user = (await users.getUserByID({ userId })).user;
  same('user sequence', seq(user.details), seq(u2f.details));
  print({
    op: current,
    sequence: seq(u2f.details),
    userId,
    u2fId: registered.u2fId,
    tokenName: `Soft key ${run}`,
    userSequence: seq(user.details),
  });

  // 8. UpdateOrgIDPOIDCConfig (deprecated) on an IdP added with AddOrgOIDCIDP, read back with GetOrgIDPByID.
  current = 'UpdateOrgIDPOIDCConfig';
  const { idpId } = await management.addOrgOIDCIDP(
    {
      name: `IdP ${run}`,
      issuer: 'https://accounts.example.com',
      clientId: 'client-1',
      clientSecret: 's3cret',
      scopes: ['openid', 'email'],
    },
    inOrg,
  );
  const config = { issuer: 'https://login.example.org', clientId: `client-${run}`, scopes: ['openid', 'profile'] };
  const idpUpdate = await management.updateOrgIDPOIDCConfig(
    {
      idpId,
      ...config,
      displayNameMapping: OIDCMappingField.OIDC_MAPPING_FIELD_PREFERRED_USERNAME,
      usernameMapping: OIDCMappingField.OIDC_MAPPING_FIELD_EMAIL,
    },
    inOrg,
  );
  const idp = (await management.getOrgIDPByID({ id: idpId }, inOrg)).idp;
  same(
    'OIDC config',
    [idp.config.value.issuer, idp.config.value.clientId, idp.config.value.scopes],
    [config.issuer, config.clientId, config.scopes],
  );
  print({
    op: current,
    sequence: seq(idpUpdate.details),
    idpId,
    issuer: idp.config.value.issuer,
    clientId: idp.config.value.clientId,
    scopes: idp.config.value.scopes,
  });

  // 9. AddSAMLApp with the SP's metadata XML in a project added with AddProject, read back with GetProjectByID.
  current = 'AddSAMLApp';
  const project = await management.addProject({ name: `Project ${run}` }, inOrg);
  const app = await management.addSAMLApp(
    {
      projectId: project.id,
      name: `SP ${run}`,
      metadata: { case: 'metadataXml', value: new TextEncoder().encode(spMetadata(`https://sp-${run}.example.com/saml/metadata`)) },
    },
    inOrg,
  );
  const read = (await management.getProjectByID({ id: project.id }, inOrg)).project;
  same('project sequence', seq(read.details), seq(app.details));
  print({ op: current, sequence: seq(app.details), projectId: project.id, appId: app.appId, projectName: read.name });

  console.log(
    JSON.stringify({
      summary: true,
      transport: kind,
      operations: done.length,
      done,
      orgId,
      userId,
      idpId,
      projectId: project.id,
      appId: app.appId,
    }),
  );
} catch (err) {
  const e = err instanceof ConnectError ? { code: Code[err.code], message: err.rawMessage } : { message: String(err?.message ?? err) };
  console.error(JSON.stringify({ op: current, transport: kind, error: e }));
  process.exit(1);
}

/** A minimal SAML 2.0 SP EntityDescriptor: an entityID and where the assertions go. */
function spMetadata(entityID) {
  return `<?xml version="1.0" encoding="UTF-8"?>
<md:EntityDescriptor xmlns:md="urn:oasis:names:tc:SAML:2.0:metadata" entityID="${entityID}">
  <md:SPSSODescriptor protocolSupportEnumeration="urn:oasis:names:tc:SAML:2.0:protocol">
    <md:NameIDFormat>urn:oasis:names:tc:SAML:1.1:nameid-format:emailAddress</md:NameIDFormat>
    <md:AssertionConsumerService Binding="urn:oasis:names:tc:SAML:2.0:bindings:HTTP-POST" Location="${new URL('acs', entityID)}" index="0" isDefault="true"/>
  </md:SPSSODescriptor>
</md:EntityDescriptor>
`;
}
