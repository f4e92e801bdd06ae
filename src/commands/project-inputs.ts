// Input rules of the project operations (operation 8 and the field limits, docs/graphql.md, HTTP: limits).
// Checked before any I/O; every violated field is reported. Parsing the XML
// and fetching the URL come later, in the command, after the permission check.
import { z } from 'zod';
import type { Config } from '../config.ts';
import { base64Bytes, countGiven, text } from './rules.ts';
import { MAX_METADATA_URL_LENGTH } from '../limits.ts';

const httpUrl = text(MAX_METADATA_URL_LENGTH, { required: true }).superRefine((s, ctx) => {
  let url: URL;
  try {
    url = new URL(s.trim());
  } catch {
    ctx.addIssue({ code: 'custom', message: 'must be an absolute http or https URL' });
    return;
  }
  if (url.protocol !== 'http:' && url.protocol !== 'https:') {
    ctx.addIssue({ code: 'custom', message: 'must be an http or https URL' });
  }
});

export function projectInputRules(config: Config) {
  return {
    addProject: z.object({ name: text(200, { required: true, name: true }) }),

    addSAMLApp: z
      .object({
        projectId: text(200, { required: true }),
        name: text(200, { required: true, name: true }),
        metadataXml: base64Bytes(config.samlMetadata.maxBytes).nullish(),
        metadataUrl: httpUrl.nullish(),
      })
      .superRefine((input, ctx) => {
        const given = countGiven(input.metadataXml, input.metadataUrl);
        if (given !== 1) {
          const message = given === 0 ? 'give metadataXml or metadataUrl' : 'give either metadataXml or metadataUrl, not both';
          ctx.addIssue({ code: 'custom', path: ['metadataXml'], message });
          ctx.addIssue({ code: 'custom', path: ['metadataUrl'], message });
        }
      }),
  };
}

export type ProjectInputRules = ReturnType<typeof projectInputRules>;
export type AddProjectInput = z.infer<ProjectInputRules['addProject']>;
export type AddSAMLAppInput = z.infer<ProjectInputRules['addSAMLApp']>;
