// ZITADEL's own Node client, unchanged, against this gateway over gRPC:
//   GATEWAY=http://127.0.0.1:4000 TOKEN=<the printed token> node examples/zitadel-client.mjs
import { createServerTransport } from '@zitadel/client/node';
import { createManagementServiceClient } from '@zitadel/client/v1';
import { createUserServiceClient } from '@zitadel/client/v2';

const transport = createServerTransport(process.env.TOKEN, { baseUrl: process.env.GATEWAY ?? 'http://127.0.0.1:4000' });
const users = createUserServiceClient(transport);
const management = createManagementServiceClient(transport);

const suffix = Date.now().toString(36);
const { userId, emailCode } = await users.addHumanUser({
  username: `ada-${suffix}`,
  profile: { givenName: 'Ada', familyName: 'Lovelace' },
  email: { email: `ada-${suffix}@example.com`, verification: { case: 'returnCode', value: {} } },
});
await users.verifyEmail({ userId, verificationCode: emailCode });
const { details } = await management.updateHumanProfile({ userId, firstName: 'Ada', lastName: 'King', displayName: 'Ada King' });
const { user } = await management.getUserByID({ id: userId });
console.log(JSON.stringify({ userId, sequence: String(details.sequence), displayName: user.type.value.profile.displayName }));
