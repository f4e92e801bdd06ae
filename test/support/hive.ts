// An in-process Hive gateway whose supergraph is composed from the gateway's own subgraph SDL
// (`_service { sdl }`), as test/federation.test.ts builds it, forwarding the caller's
// Authorization header to the subgraph over HTTP.
import { createGatewayRuntime, type GatewayRuntime } from '@graphql-hive/gateway-runtime';
import { composeServices } from '@theguild/federation-composition';
import { parse } from 'graphql';
import type { TestGateway } from './gateway.ts';

export interface HiveAnswer {
  status: number;
  contentType: string | null;
  body: { data?: any; errors?: { message: string; path?: (string | number)[]; extensions?: Record<string, any> }[] };
}

export interface HiveGateway {
  runtime: GatewayRuntime;
  /** POSTs a GraphQL request to the Hive gateway as a client would. */
  post(request: { query: string; variables?: object }, headers?: Record<string, string>): Promise<HiveAnswer>;
}

export async function startHiveGateway(gw: TestGateway): Promise<HiveGateway> {
  const sdl = (await gw.raw({ query: '{ _service { sdl } }' })).data._service.sdl as string;
  const composed = composeServices([{ name: 'identity', typeDefs: parse(sdl), url: gw.url }]);
  if (composed.errors?.length) throw new Error(`composition failed: ${composed.errors.map((e) => e.message).join('; ')}`);
  const runtime = createGatewayRuntime({
    supergraph: composed.supergraphSdl!,
    logging: false,
    maskedErrors: false,
    propagateHeaders: {
      fromClientToSubgraphs: ({ request }) => ({ authorization: request.headers.get('authorization') }),
    },
  });
  return {
    runtime,
    async post(request, headers = {}) {
      const res = await runtime.fetch('http://gateway.local/graphql', {
        method: 'POST',
        headers: { 'content-type': 'application/json', ...headers },
        body: JSON.stringify(request),
      });
      const text = await res.text();
      let body: HiveAnswer['body'];
      try {
        body = JSON.parse(text);
      } catch {
        throw new Error(`the Hive gateway answered ${res.status} with no JSON: ${text.slice(0, 500)}`);
      }
      return { status: res.status, contentType: res.headers.get('content-type'), body };
    },
  };
}
