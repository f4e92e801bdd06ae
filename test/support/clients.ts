// What the tests of real GraphQL clients (Apollo Client, urql, a Hive gateway) share: a fetch
// that remembers what went over the wire, which the clients themselves hide from their callers.
import { randomBytes } from 'node:crypto';
import { parse } from 'graphql';

export interface Exchange {
  /** The Accept header the client sent. */
  accept: string | null;
  /** The HTTP status of the answer, which a client turns into data, errors or a network error. */
  status: number;
  contentType: string | null;
}

/** Global fetch, recording each request's Accept and its answer's status; `last()` is the latest. */
export function recordingFetch() {
  const seen: Exchange[] = [];
  const recorded = async (input: RequestInfo | URL, init?: RequestInit): Promise<Response> => {
    const res = await fetch(input, init);
    const headers = input instanceof Request ? input.headers : new Headers(init?.headers);
    seen.push({ accept: headers.get('accept'), status: res.status, contentType: res.headers.get('content-type') });
    return res;
  };
  return {
    fetch: recorded as typeof fetch,
    seen,
    last(): Exchange {
      const exchange = seen.at(-1);
      if (!exchange) throw new Error('no request was sent');
      return exchange;
    },
  };
}

/** A name no earlier run of a test used: the suites share one store per gateway and may rerun against a kept one. */
export const unique = (prefix: string) => `${prefix}${Date.now().toString(36)}${randomBytes(3).toString('hex')}`;

/** An addHumanUser input every rule accepts; `extra` replaces or adds fields. */
export const humanInput = (extra: Record<string, unknown> = {}) => ({
  profile: { firstName: 'Client', lastName: 'Test' },
  email: { email: `${unique('client')}@example.com`, isVerified: true },
  ...extra,
});

/** Three user creations in one request: the middle one is made to fail (both clients' several-mutations tests). */
export const THREE_USERS = parse(`
  mutation ThreeUsers($a: AddHumanUserInput!, $b: AddHumanUserInput!, $c: AddHumanUserInput!) {
    a: addHumanUser(input: $a) {
      userId
    }
    b: addHumanUser(input: $b) {
      userId
    }
    c: addHumanUser(input: $c) {
      userId
    }
  }
`);

/** A document that fails validation: it is read, not executed. */
export const NO_SUCH_FIELD = parse(`
  query NoSuchField {
    me {
      id
      noSuchField
    }
  }
`);
