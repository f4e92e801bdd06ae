// The REST routes of the wire services: the google.api.http rules kept in the @zitadel/proto
// descriptors, compiled to path templates and matched against request paths. v1 rules are
// relative and get the prefix of the file option openapiv2_swagger's base_path (/management/v1),
// v2 rules are absolute. Path templates as google/api/http.proto defines them:
// Template = "/" Segments [ Verb ]; Segment = "*" | "**" | LITERAL | Variable;
// Variable = "{" FieldPath [ "=" Segments ] "}".
import { getOption, hasOption, type DescField, type DescMessage, type DescMethod, type DescService } from '@bufbuild/protobuf';
import type { HandlerContext, ServiceImpl } from '@connectrpc/connect';
import { http as httpRule } from '@zitadel/proto/google/api/annotations_pb.js';
import type { HttpRule } from '@zitadel/proto/google/api/http_pb.js';
import { openapiv2_swagger } from '@zitadel/proto/protoc-gen-openapiv2/options/annotations_pb.js';

export interface RestService {
  service: DescService;
  impl: Partial<ServiceImpl<any>>;
}

/** A service and its implementation, typed against each other. */
export const restService = <S extends DescService>(service: S, impl: Partial<ServiceImpl<S>>): RestService => ({
  service,
  impl: impl as Partial<ServiceImpl<any>>,
});

type Segment = { kind: 'literal'; text: string } | { kind: 'star' } | { kind: 'deep' };

export interface Variable {
  fields: DescField[];
  /** Index of its first segment. */
  start: number;
  /** Index after its last segment; -1 when it ends with "**" (takes the rest of the path). */
  end: number;
}

export interface Template {
  text: string;
  segments: Segment[];
  variables: Variable[];
  verb?: string;
  /** Literal segments: the more, the more specific (preferred when two rules match). */
  literals: number;
}

export interface Route {
  verb: string;
  template: Template;
  rule: HttpRule;
  service: DescService;
  method: DescMethod;
  impl: ((req: unknown, ctx: HandlerContext) => unknown) | undefined;
  /** The field of `body: "<field>"`; undefined for "*" and "". */
  bodyField?: DescField;
  /** The field of `response_body: "<field>"`. */
  responseField?: DescField;
}

/** A field path (`user_id`, `user.id`) of a message, by proto field names (or JSON names too). */
export function resolveFieldPath(message: DescMessage, path: string, byJsonName = false): DescField[] | undefined {
  const out: DescField[] = [];
  let current: DescMessage | undefined = message;
  for (const name of path.split('.')) {
    if (!current) return undefined;
    const field: DescField | undefined = current.fields.find((f) => f.name === name || (byJsonName && f.jsonName === name));
    if (!field) return undefined;
    out.push(field);
    current = field.fieldKind === 'message' ? field.message : undefined;
  }
  return out;
}

function compileTemplate(text: string, input: DescMessage): Template {
  if (!text.startsWith('/')) throw new Error(`path template must start with "/": ${text}`);
  let body = text.slice(1);
  let verb: string | undefined;
  // A verb is a ":" after the last "/" that is not inside a variable.
  const lastSlash = body.lastIndexOf('/');
  const colon = body.indexOf(':', lastSlash + 1);
  if (colon >= 0 && !body.slice(colon).includes('}')) {
    verb = body.slice(colon + 1);
    body = body.slice(0, colon);
  }
  const segments: Segment[] = [];
  const variables: Variable[] = [];
  const literal = (s: string): Segment => (s === '*' ? { kind: 'star' } : s === '**' ? { kind: 'deep' } : { kind: 'literal', text: s });
  let i = 0;
  while (i <= body.length) {
    if (body[i] === '{') {
      const close = body.indexOf('}', i);
      if (close < 0) throw new Error(`unclosed variable in ${text}`);
      const [fieldPath, pattern = '*'] = body.slice(i + 1, close).split('=', 2) as [string, string?];
      const fields = resolveFieldPath(input, fieldPath);
      if (!fields) throw new Error(`${text}: no field ${fieldPath} in ${input.typeName}`);
      const start = segments.length;
      for (const s of pattern.split('/')) segments.push(literal(s));
      const deep = segments[segments.length - 1]!.kind === 'deep';
      variables.push({ fields, start, end: deep ? -1 : segments.length });
      i = close + 1;
      if (i < body.length && body[i] !== '/') throw new Error(`unexpected text after a variable in ${text}`);
      i++;
    } else {
      const slash = body.indexOf('/', i);
      const end = slash < 0 ? body.length : slash;
      segments.push(literal(body.slice(i, end)));
      i = end + 1;
    }
  }
  const deepAt = segments.findIndex((s) => s.kind === 'deep');
  if (deepAt >= 0 && deepAt !== segments.length - 1) throw new Error(`"**" must be the last segment: ${text}`);
  return {
    text,
    segments,
    variables,
    verb,
    literals: segments.filter((s) => s.kind === 'literal').length,
  };
}

/** The variables' decoded values when the template matches the raw path segments, else undefined. */
function matchTemplate(t: Template, rawSegments: string[]): string[] | undefined {
  let parts = rawSegments;
  if (t.verb !== undefined) {
    const last = parts[parts.length - 1];
    if (last === undefined || !last.endsWith(`:${t.verb}`)) return undefined;
    parts = [...parts.slice(0, -1), last.slice(0, -(t.verb.length + 1))];
  }
  const deep = t.segments[t.segments.length - 1]?.kind === 'deep';
  if (deep ? parts.length < t.segments.length - 1 : parts.length !== t.segments.length) return undefined;
  for (let k = 0; k < t.segments.length; k++) {
    const s = t.segments[k]!;
    if (s.kind === 'deep') break;
    const p = parts[k]!;
    if (s.kind === 'literal' ? p !== s.text : p === '') return undefined;
  }
  const values: string[] = [];
  try {
    for (const v of t.variables) {
      const taken = v.end < 0 ? parts.slice(v.start) : parts.slice(v.start, v.end);
      values.push(taken.map((p) => decodeURIComponent(p)).join('/'));
    }
  } catch {
    return undefined; // a malformed %-escape: no match
  }
  return values;
}

/** Every rule (and additional binding) of the services' methods, in the services' order. */
function compileRoutes(services: RestService[]): Route[] {
  const routes: Route[] = [];
  for (const { service, impl } of services) {
    const basePath = hasOption(service.file, openapiv2_swagger) ? getOption(service.file, openapiv2_swagger).basePath : '';
    const prefix = basePath.replace(/\/+$/, '');
    for (const method of service.methods) {
      if (!hasOption(method, httpRule)) continue;
      const top = getOption(method, httpRule);
      for (const rule of [top, ...top.additionalBindings]) {
        const { case: kind, value } = rule.pattern;
        if (kind === undefined) continue;
        const verb = kind === 'custom' ? (value as { kind: string }).kind.toUpperCase() : kind.toUpperCase();
        const path = kind === 'custom' ? (value as { path: string }).path : (value as string);
        // v1 rules are relative to the file's base_path (/management/v1); v2 rules are absolute (base_path "/").
        const template = compileTemplate(`${prefix}${path.startsWith('/') ? '' : '/'}${path}`, method.input);
        const fn = impl[method.localName];
        let bodyField: DescField | undefined;
        if (rule.body !== '' && rule.body !== '*') {
          bodyField = resolveFieldPath(method.input, rule.body)?.[0];
          if (!bodyField) throw new Error(`${method.parent.typeName}.${method.name}: no body field ${rule.body}`);
        }
        routes.push({
          verb,
          template,
          rule,
          service,
          method,
          impl: typeof fn === 'function' && method.methodKind === 'unary' ? (fn.bind(impl) as Route['impl']) : undefined,
          bodyField,
          responseField: rule.responseBody ? resolveFieldPath(method.output, rule.responseBody)?.[0] : undefined,
        });
      }
    }
  }
  return routes;
}

export interface RouteTable {
  /** Most specific first. */
  routes: Route[];
  /** The route of this HTTP method (any method when undefined) and raw path, with its variables' decoded values. */
  find(verb: string | undefined, path: string): { route: Route; values: string[] } | undefined;
}

export function routeTable(services: RestService[]): RouteTable {
  // The most literal segments first (`/users/me` before `/users/{id}`); then in the services' order.
  const ordered = compileRoutes(services)
    .map((r, i) => ({ r, i }))
    .sort((a, b) => b.r.template.literals - a.r.template.literals || a.i - b.i)
    .map((x) => x.r);

  // Bucketed by the first path segment (auth, management, v2): a path of no rule (/graphql) costs one lookup.
  const buckets = new Map<string, Route[]>();
  const anyFirst: Route[] = [];
  for (const route of ordered) {
    const first = route.template.segments[0];
    if (first?.kind === 'literal' && !(route.template.verb !== undefined && route.template.segments.length === 1)) {
      buckets.set(first.text, [...(buckets.get(first.text) ?? []), route]);
    } else anyFirst.push(route);
  }
  const candidates = (first: string) => {
    const bucket = buckets.get(first);
    return !bucket ? anyFirst : anyFirst.length === 0 ? bucket : ordered.filter((r) => bucket.includes(r) || anyFirst.includes(r));
  };
  // Then by verb and segment count, on first use (a "**" template matches any count from its own
  // length less one): a REST call tries a handful of templates, not every rule of its service.
  const longest = Math.max(0, ...ordered.map((r) => r.template.segments.length));
  const narrowed = new Map<string, Route[]>();
  const verbs = new Set(ordered.map((r) => r.verb));
  const narrow = (verb: string | undefined, first: string, count: number): Route[] => {
    // Only the rules' verbs make keys: a client's made-up HTTP/2 :method must not grow the map.
    if (verb !== undefined && !verbs.has(verb)) return [];
    const capped = Math.min(count, longest + 1);
    const key = `${verb ?? '*'} ${buckets.has(first) ? first : ''} ${capped}`;
    let routes = narrowed.get(key);
    if (!routes) {
      routes = candidates(first).filter((r) => {
        if (verb !== undefined && r.verb !== verb) return false;
        const n = r.template.segments.length;
        return r.template.segments[n - 1]?.kind === 'deep' ? capped >= n - 1 : capped === n;
      });
      narrowed.set(key, routes);
    }
    return routes;
  };
  return {
    routes: ordered,
    find(verb, path) {
      const parts = path.replace(/^\//, '').split('/');
      for (const route of narrow(verb, parts[0]!, parts.length)) {
        const values = matchTemplate(route.template, parts);
        if (values) return { route, values };
      }
      return undefined;
    },
  };
}
