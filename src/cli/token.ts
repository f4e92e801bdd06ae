// `npm run token -- <userId>`: a quick-start bearer token signed with the data folder's key.
import { loadConfig } from '../config.ts';
import { createLocalTokenSigner } from '../auth/tokens.ts';

async function main(args: string[]): Promise<number> {
  const userId = args[0];
  if (!userId || args.length > 1) {
    console.error('usage: npm run token -- <userId>');
    return 2;
  }
  const config = loadConfig();
  if (config.jwksUrl) {
    console.error('JWKS_URL is set: tokens come from the real issuer, not from this command.');
    return 1;
  }
  process.stdout.write(`${await createLocalTokenSigner(config).sign(userId)}\n`);
  return 0;
}

process.exitCode = await main(process.argv.slice(2));
