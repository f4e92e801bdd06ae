// `npm run token -- <userId>`: a quick-start bearer token signed with the data folder's key, for
// a user the configured store holds (embedded in DATA_DIR, or MONGODB_URL). No options: an
// argument starting with "-" is a mistake (`--help` would otherwise mint a token for "--help").
// What it says goes to stderr; stdout carries the token alone, for `$(npm run -s token -- id)`.
import { createLocalTokenSigner } from '../auth/tokens.ts';
import { loadConfig } from '../config.ts';
import { redactUrl } from '../start-errors.ts';
import { userInMongo, userInSqlite } from '../store/user-lookup.ts';

const USAGE = `usage: npm run token -- <userId>
  Prints a bearer token (valid 24 h) for the user <userId> of the store this configuration
  names (the embedded one in DATA_DIR, or MONGODB_URL), signed with DATA_DIR's key.
  Not with JWKS_URL: the tokens then come from the real issuer.
`;

const say = (line: string) => process.stderr.write(`${line}\n`);

async function main(args: string[]): Promise<number> {
  const userId = args[0];
  if (!userId || args.length > 1 || args.some((a) => a.startsWith('-'))) {
    process.stderr.write(USAGE);
    return 2;
  }
  const config = loadConfig();
  if (config.jwksUrl) {
    say('JWKS_URL is set: tokens come from the real issuer, not from this command.');
    return 1;
  }
  const store = config.mongodbUrl
    ? `MongoDB at ${redactUrl(config.mongodbUrl)} (database ${config.mongodbDb})`
    : `the embedded store in ${config.dataDir}`;
  const lookup = config.mongodbUrl
    ? await userInMongo(config.mongodbUrl, config.mongodbDb, userId)
    : await userInSqlite(config.dataDir, userId);
  if ('found' in lookup && !lookup.found) {
    say(`no user ${userId} in ${store}`);
    return 1;
  }
  // Held by a running gateway (the quick start's case) or unreachable: the token is still useful,
  // and the gateway decides what an unknown user may do; the person is told it was not checked.
  if ('unknown' in lookup) say(`cannot check that user ${userId} exists in ${store}: ${lookup.unknown}; token issued unchecked`);
  process.stdout.write(`${await createLocalTokenSigner(config).sign(userId)}\n`);
  return 0;
}

process.exitCode = await main(process.argv.slice(2));
