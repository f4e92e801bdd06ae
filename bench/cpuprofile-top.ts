// The hottest frames of a V8 .cpuprofile (from `node --cpu-prof`), by self time.
//   npx tsx bench/cpuprofile-top.ts FILE.cpuprofile [N]
import { readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';

interface CallFrame {
  functionName: string;
  url: string;
  lineNumber: number;
  columnNumber: number;
}
interface ProfileNode {
  id: number;
  callFrame: CallFrame;
  children?: number[];
}
interface CpuProfile {
  nodes: ProfileNode[];
  startTime: number;
  endTime: number;
  samples: number[];
  timeDeltas: number[];
}

export interface Frame {
  frame: string;
  selfMs: number;
  selfPct: number;
}

export interface ProfileSummary {
  file: string;
  totalMs: number;
  /** Sampled time not idle. */
  busyMs: number;
  /** Self time outside (idle) and (program)/(garbage collector), in %. */
  idlePct: number;
  gcPct: number;
  top: Frame[];
  /** Self time grouped by where the code lives: a package, src/, node internals. */
  byModule: Frame[];
}

const repoRoot = fileURLToPath(new URL('..', import.meta.url));

function where(url: string): string {
  if (!url) return '(native)';
  const path = url.startsWith('file://') ? fileURLToPath(url) : url;
  const nm = path.lastIndexOf('node_modules/');
  if (nm >= 0) {
    const rest = path.slice(nm + 'node_modules/'.length).split('/');
    return rest[0]!.startsWith('@') ? `${rest[0]}/${rest[1]}` : rest[0]!;
  }
  if (path.startsWith('node:')) return 'node:' + path.slice(5).split('/')[0];
  return path.startsWith(repoRoot) ? path.slice(repoRoot.length) : path;
}

function label(cf: CallFrame): string {
  const name = cf.functionName || '(anonymous)';
  if (!cf.url) return name;
  const path = cf.url.startsWith('file://') ? fileURLToPath(cf.url) : cf.url;
  const nm = path.lastIndexOf('node_modules/');
  const short = nm >= 0 ? path.slice(nm + 'node_modules/'.length) : path.startsWith(repoRoot) ? path.slice(repoRoot.length) : path;
  return `${name} ${short}:${cf.lineNumber + 1}:${cf.columnNumber + 1}`;
}

/**
 * Self time per frame; with a window (µs on the process's monotonic clock, the clock of
 * process.hrtime), only the samples taken inside it.
 */
export function summarize(file: string, n = 10, window: { fromUs?: number; toUs?: number } = {}): ProfileSummary {
  const profile = JSON.parse(readFileSync(file, 'utf8')) as CpuProfile;
  const byId = new Map(profile.nodes.map((node) => [node.id, node]));
  const selfUs = new Map<number, number>();
  let t = profile.startTime;
  for (let i = 0; i < profile.samples.length; i++) {
    const delta = profile.timeDeltas[i] ?? 0;
    t += delta;
    if ((window.fromUs !== undefined && t < window.fromUs) || (window.toUs !== undefined && t > window.toUs)) continue;
    const id = profile.samples[i]!;
    selfUs.set(id, (selfUs.get(id) ?? 0) + delta);
  }
  const total = [...selfUs.values()].reduce((a, b) => a + b, 0) || 1;
  const frames = new Map<string, number>();
  const modules = new Map<string, number>();
  let idle = 0;
  let gc = 0;
  for (const [id, us] of selfUs) {
    const cf = byId.get(id)!.callFrame;
    if (cf.functionName === '(idle)') idle += us;
    if (cf.functionName === '(garbage collector)') gc += us;
    const key = label(cf);
    frames.set(key, (frames.get(key) ?? 0) + us);
    const mod = cf.url ? where(cf.url) : cf.functionName.startsWith('(') ? cf.functionName : '(native)';
    modules.set(mod, (modules.get(mod) ?? 0) + us);
  }
  const rank = (m: Map<string, number>, skipIdle: boolean) =>
    [...m]
      .filter(([k]) => !skipIdle || !k.startsWith('(idle)'))
      .sort((a, b) => b[1] - a[1])
      .slice(0, n)
      .map(([frame, us]) => ({ frame, selfMs: Math.round(us / 100) / 10, selfPct: Math.round((us / total) * 1000) / 10 }));
  return {
    file,
    totalMs: Math.round(total / 1000),
    busyMs: Math.round((total - idle) / 1000),
    idlePct: Math.round((idle / total) * 1000) / 10,
    gcPct: Math.round((gc / total) * 1000) / 10,
    top: rank(frames, true),
    byModule: rank(modules, true),
  };
}

export function formatSummary(s: ProfileSummary): string {
  const lines = [`${s.file}: ${s.totalMs} ms sampled, ${s.busyMs} ms busy, idle ${s.idlePct}%, GC ${s.gcPct}%`, 'top self time:'];
  for (const f of s.top) lines.push(`  ${f.selfPct.toFixed(1).padStart(5)}%  ${f.selfMs.toFixed(0).padStart(6)} ms  ${f.frame}`);
  lines.push('self time by module:');
  for (const f of s.byModule) lines.push(`  ${f.selfPct.toFixed(1).padStart(5)}%  ${f.selfMs.toFixed(0).padStart(6)} ms  ${f.frame}`);
  return lines.join('\n');
}

if (process.argv[1] && fileURLToPath(import.meta.url) === process.argv[1]) {
  const [file, n] = process.argv.slice(2);
  if (!file) {
    process.stderr.write('usage: npx tsx bench/cpuprofile-top.ts FILE.cpuprofile [N]\n');
    process.exit(2);
  }
  process.stdout.write(formatSummary(summarize(file, n ? Number(n) : 15)) + '\n');
}
