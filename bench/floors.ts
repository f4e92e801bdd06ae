// The floors' block of the report: each protocol's updateHumanProfile row against the bare server
// that does the same one durable write in the same protocol (yoga-durable for GraphQL, grpc-durable
// for gRPC, connect-durable for Connect; bench/scenarios.ts), the gRPC face against the GraphQL
// one, and the targets on those ratios and on every row's peak RSS.
import type { Measured } from './run.ts';

/** What a throughput row needs here (bench/run.ts's Row). */
export interface FloorRow extends Measured {
  scenario: string;
  store: string;
  peakRssMb: number;
  /** The server's CPU (all threads) per request during the measurement. */
  cpuMsPerRequest?: number;
  floor?: string;
  ratioFloor?: number;
  ratioGraphql?: number;
}

export interface FloorTarget {
  value: string;
  /** The ratio, or the largest peak RSS (MB), as a number. */
  measured: number;
  target: string;
  met: boolean;
}

export interface FloorRatio {
  protocol: 'GraphQL' | 'gRPC' | 'Connect';
  scenario: string;
  rps: number;
  floor: string;
  floorRps: number;
  ratio: number;
  /** The server's CPU per request on the row, less the floor's: what the gateway adds to the floor's work (ms). */
  ownCpuMs?: number;
}

const PROTOCOLS = [
  ['GraphQL', 'updateHumanProfile'],
  ['gRPC', 'updateHumanProfile-grpc'],
  ['Connect', 'updateHumanProfile-connect'],
] as const;

const r2 = (n: number) => n.toFixed(2);

/** On the embedded store: the rows the ratios are about. */
export function floorsReport(rows: FloorRow[]): { ratios: FloorRatio[]; targets: Record<string, FloorTarget>; lines: string[] } {
  const find = (scenario: string, store?: string) => rows.find((r) => r.scenario === scenario && (!store || r.store === store));
  const ratios: FloorRatio[] = [];
  for (const [protocol, scenario] of PROTOCOLS) {
    const row = find(scenario, 'embedded');
    const floor = row?.floor ? find(row.floor) : undefined;
    if (row?.ratioFloor !== undefined && floor) {
      const own =
        row.cpuMsPerRequest !== undefined && floor.cpuMsPerRequest !== undefined
          ? Math.round((row.cpuMsPerRequest - floor.cpuMsPerRequest) * 1000) / 1000
          : undefined;
      ratios.push({ protocol, scenario, rps: row.rps, floor: floor.scenario, floorRps: floor.rps, ratio: row.ratioFloor, ownCpuMs: own });
    }
  }
  const ofProtocol = (p: FloorRatio['protocol']) => ratios.find((r) => r.protocol === p);
  const graphql = find('updateHumanProfile', 'embedded');
  const grpc = find('updateHumanProfile-grpc', 'embedded');

  const targets: Record<string, FloorTarget> = {};
  if (grpc?.ratioGraphql !== undefined && graphql)
    targets.grpcVsGraphql = {
      value: `${r2(grpc.ratioGraphql)} (${grpc.rps} / ${graphql.rps} req/s)`,
      measured: grpc.ratioGraphql,
      target: '>= 1.0 × GraphQL updateHumanProfile',
      met: grpc.ratioGraphql >= 1,
    };
  for (const [name, protocol] of [
    ['grpcVsItsFloor', 'gRPC'],
    ['graphqlVsYogaDurable', 'GraphQL'],
  ] as const) {
    const r = ofProtocol(protocol);
    if (r)
      targets[name] = {
        value: `${r2(r.ratio)} (${r.rps} / ${r.floorRps} req/s)`,
        measured: r.ratio,
        target: `>= 0.85 × ${r.floor}`,
        met: r.ratio >= 0.85,
      };
  }
  if (rows.length) {
    const largest = rows.reduce((a, b) => (b.peakRssMb > a.peakRssMb ? b : a));
    targets.peakRssEveryRowMb = {
      value: `largest ${largest.peakRssMb} (${largest.scenario}${largest.store === '-' ? '' : `/${largest.store}`}) of ${rows.length} rows`,
      measured: largest.peakRssMb,
      target: '< 250 on every row',
      met: rows.every((r) => r.peakRssMb < 250),
    };
  }

  const lines: string[] = [];
  if (ratios.length || Object.keys(targets).length) {
    lines.push(
      '',
      'Floors and ratios (req/s, same run, embedded store; a floor commits the same one row in the same protocol, nothing else):',
    );
    for (const r of ratios)
      lines.push(
        `- ${r.protocol}: ${r.scenario} ${r.rps} ÷ ${r.floor} ${r.floorRps} = ${r2(r.ratio)}` +
          (r.ownCpuMs === undefined ? '' : `; server CPU over the floor's: ${r.ownCpuMs >= 0 ? '+' : ''}${r.ownCpuMs.toFixed(2)} ms/req`),
      );
    if (grpc?.ratioGraphql !== undefined && graphql)
      lines.push(`- gRPC ÷ GraphQL: updateHumanProfile-grpc ${grpc.rps} ÷ updateHumanProfile ${graphql.rps} = ${r2(grpc.ratioGraphql)}`);
    const durable = find('yoga-durable');
    const others = ['grpc-durable', 'connect-durable'].map((f) => find(f)).filter((f) => f !== undefined);
    if (durable?.rps && others.length)
      lines.push(`- the floors against yoga-durable: ${others.map((f) => `${f.scenario} ${r2(f.rps / durable.rps)}`).join(', ')}`);
    lines.push('', 'Floor targets:');
    for (const [name, t] of Object.entries(targets)) lines.push(`- ${name}: ${t.value} (target ${t.target}) ${t.met ? 'met' : 'not met'}`);
  }
  return { ratios, targets, lines };
}
