// The input rules of the organization operations (addOrganization, addOrgMember): run by the
// commands (orgs.ts) and, before any call, by upstream mode (src/upstream).
import type { Config } from '../config.ts';
import { isOrgRole } from '../auth/permissions.ts';
import { z } from 'zod';
import { text } from './rules.ts';

export function orgInputRules(_config?: Config) {
  return {
    addOrganization: z.object({ name: text(200, { required: true, name: true }) }),
    addOrgMember: z.object({
      userId: text(200, { required: true }),
      roles: z
        .array(z.string().refine(isOrgRole, { message: 'is not an organization role' }))
        .min(1, { message: 'give at least one role' }),
    }),
  };
}
