// First start: an instance administrator and a default organization.
// Safe when several gateways start at once: the instance event is written
// first with all ids chosen, and whatever is missing after it is completed.
import { INSTANCE_ID, instanceEvent, type Instance } from '../model/orgs.ts';
import { userEvent, type User } from '../model/users.ts';
import { AppError } from '../errors.ts';
import { ConcurrencyError } from '../store/port.ts';
import type { CommandContext } from './context.ts';
import { createOrg } from './orgs.ts';

export interface BootstrapResult {
  adminUserId: string;
  defaultOrgId: string;
  created: boolean;
}

export async function bootstrap(ctx: CommandContext): Promise<BootstrapResult> {
  const { store, config, newId } = ctx.deps;
  let created = false;
  let instance = await store.load<Instance>('instance', INSTANCE_ID);
  if (!instance) {
    const adminUserId = newId();
    const defaultOrgId = newId();
    try {
      await store.append({
        aggregateType: 'instance',
        aggregateId: INSTANCE_ID,
        sequence: 1,
        ...instanceEvent.setUp(adminUserId, defaultOrgId),
        creator: 'system',
        resourceOwner: INSTANCE_ID,
      });
      created = true;
    } catch (err) {
      if (!(err instanceof ConcurrencyError)) throw err;
    }
    // Another gateway may have won with its state document not written yet: from the events.
    instance = (await store.catchUp<Instance>('instance', INSTANCE_ID, null))!;
  }
  const defaultOrgId = instance.state.defaultOrgId;
  const adminUserId = instance.state.members[0]!.userId;
  const system = { ...ctx, callerId: 'system' };

  if (!(await store.load('org', defaultOrgId))) {
    await createOrg(system, defaultOrgId, 'Default').catch(ignoreRace);
  }
  if (!(await store.load('user', adminUserId))) {
    const admin: Omit<User, 'state'> = {
      username: 'admin',
      profile: {
        firstName: 'Instance',
        lastName: 'Administrator',
        nickName: null,
        displayName: 'Administrator',
        preferredLanguage: 'en',
        gender: 'GENDER_UNSPECIFIED',
      },
      email: { email: `admin@${config.instanceDomain}`, isVerified: true },
      phone: null,
      passwordHash: null,
      passwordChangeRequired: false,
      metadata: [],
      idpLinks: [],
      u2fTokens: [],
    };
    await store
      .append(
        {
          aggregateType: 'user',
          aggregateId: adminUserId,
          sequence: 1,
          ...userEvent.added(admin),
          creator: 'system',
          resourceOwner: defaultOrgId,
        },
        { claims: ['username:admin'] },
      )
      .catch(ignoreRace);
  }
  return { adminUserId, defaultOrgId, created };
}

function ignoreRace(err: unknown) {
  if (err instanceof ConcurrencyError) return;
  if (err instanceof AppError && (err.code === 'ALREADY_EXISTS' || err.code === 'FAILED_PRECONDITION')) return;
  throw err;
}

/** The first administrator's user id, or null before the instance is set up. */
export async function instanceAdminId(ctx: Pick<CommandContext, 'deps'>): Promise<string | null> {
  const instance = await ctx.deps.store.load<Instance>('instance', INSTANCE_ID);
  return instance?.state.members[0]?.userId ?? null;
}
