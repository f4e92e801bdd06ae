// What one request log line costs the gateway's process: src/log.ts's logger writing the
// request line (the edge's fields) to stderr, a pipe this process reads, 3 lines a millisecond
// for 30,000 lines; CPU of the child (all threads) and its main thread's busy time, per line,
// against the same loop with the lines below the log level (what the loop itself costs).
//   npx tsx bench/log-cost.ts            (the child runs src/log.ts under tsx)
// The third row swaps in sonic-boom's asynchronous writes (pino.destination({ sync: false })),
// which src/log.ts used before this measurement.
import { spawn } from 'node:child_process';
import { performance } from 'node:perf_hooks';
import { fileURLToPath } from 'node:url';

const LINES = 30_000;
const PER_MS = 3;

async function child(): Promise<void> {
  const { createLogger } = await import('../src/log.ts');
  const { pino } = await import('pino');
  const asynchronous = process.env.BENCH_LOG_ASYNC === '1' ? pino.destination({ dest: 2, sync: false }) : undefined;
  const logger = createLogger(process.env.BENCH_LOG_OFF === '1' ? 'warn' : 'info', undefined, asynchronous);
  const cpu0 = process.cpuUsage();
  const elu0 = performance.eventLoopUtilization();
  let i = 0;
  await new Promise<void>((resolve) => {
    const tick = () => {
      for (let k = 0; k < PER_MS && i < LINES; k++, i++) {
        logger.log('info', 'request', {
          requestId: `0123456789ab${i}`,
          method: 'POST',
          path: '/graphql',
          protocol: 'graphql',
          operationName: null,
          operationType: 'mutation',
          rootField: 'updateHumanProfile',
          caller: '312345678901234567',
          ip: '127.0.0.1',
          status: 200,
          durationMs: 1.23,
        });
      }
      if (i < LINES) setTimeout(tick, 1);
      else setTimeout(resolve, 50);
    };
    tick();
  });
  const cpu = process.cpuUsage(cpu0);
  const elu = performance.eventLoopUtilization(elu0);
  process.stdout.write(JSON.stringify({ cpuUs: (cpu.user + cpu.system) / LINES, mainUs: (elu.active * 1000) / LINES }) + '\n');
}

async function measure(env: Record<string, string>): Promise<{ cpuUs: number; mainUs: number; bytes: number }> {
  const proc = spawn(process.execPath, [...process.execArgv, fileURLToPath(import.meta.url), 'child'], {
    env: { ...process.env, ...env },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let bytes = 0;
  let out = '';
  proc.stderr!.on('data', (chunk: Buffer) => (bytes += chunk.length));
  proc.stdout!.on('data', (chunk: Buffer) => (out += chunk));
  const code = await new Promise<number | null>((resolve) => proc.once('exit', resolve));
  if (code !== 0) throw new Error(`the child exited with ${code}`);
  return { ...JSON.parse(out), bytes };
}

if (process.argv[2] === 'child') {
  await child();
} else {
  const kinds: [string, Record<string, string>][] = [
    ['no line (below the level)', { BENCH_LOG_OFF: '1' }],
    ['src/log.ts', {}],
    ['asynchronous writes', { BENCH_LOG_ASYNC: '1' }],
  ];
  console.log(`${LINES} request lines, ${PER_MS} a ms, to a pipe; µs per line (two rounds)`);
  console.log('| writer | CPU, all threads | main thread busy |');
  console.log('|---|---:|---:|');
  for (let round = 0; round < 2; round++) {
    for (const [name, env] of kinds) {
      const m = await measure(env);
      console.log(`| ${name} | ${m.cpuUs.toFixed(1)} | ${m.mainUs.toFixed(1)} |`);
    }
  }
}
