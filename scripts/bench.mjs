// `npm run bench`: wall time of whole commands, side by side in one run (median and p90).
import { spawnSync } from 'node:child_process';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { BIN, startEmulator } from './start-emulator.mjs';

// Cloud metadata on a closed loopback port for every process started here: never 169.254.169.254.
process.env.PAR_IDENTITY_CLOUD_METADATA_URL = 'http://127.0.0.1:1';

const RUNS = Number(process.env.BENCH_RUNS ?? 20);
const API_KEY = '00000000000000000000000000emu0ak';
const APP_KEY = '0000000000000000000000000000000000emu0pk';
const runbook = fileURLToPath(new URL('./bench/manual-runbook.sh', import.meta.url));

function time(cmd, args, env) {
  const samples = [];
  for (let i = 0; i < RUNS + 2; i++) {
    const start = process.hrtime.bigint();
    const run = spawnSync(cmd, args, { env, stdio: ['ignore', 'ignore', 'pipe'] });
    const ms = Number(process.hrtime.bigint() - start) / 1e6;
    if (run.status !== 0) throw new Error(`${cmd} ${args.join(' ')} failed: ${run.stderr}`);
    if (i >= 2) samples.push(ms); // two warm-up runs fill the page cache
  }
  samples.sort((a, b) => a - b);
  const pick = (q) => samples[Math.min(samples.length - 1, Math.ceil(q * samples.length) - 1)];
  return { median: pick(0.5), p90: pick(0.9) };
}

const { info, stop } = await startEmulator();
const dir = await mkdtemp(join(tmpdir(), 'par-bench-'));
try {
  await writeFile(
    join(dir, 'datadog.yaml'),
    [`api_key: ${API_KEY}`, `app_key: ${APP_KEY}`, `dd_url: ${info.enrollmentUrl}`, 'private_action_runner:', '  enabled: true', ''].join('\n'),
  );
  const env = { ...process.env, DD_INTERNAL_PAR_USE_DD_URL_FOR_OPMS: 'true', DD_API_KEY: API_KEY, DD_APP_KEY: APP_KEY };
  const rows = [
    ['node -e 0', time(process.execPath, ['-e', '0'], env)],
    ['par-identity --help', time(process.execPath, [BIN, '--help'], env)],
    ['par-identity rotate-identity (enroll + write + verify)', time(process.execPath, [BIN, 'rotate-identity', '-c', dir], env)],
    ['par-identity rotate-identity --no-verify', time(process.execPath, [BIN, 'rotate-identity', '-c', dir, '--no-verify'], env)],
    ['manual runbook (openssl + curl + jq + mv)', time('bash', [runbook, info.enrollmentUrl, join(dir, 'manual.json')], env)],
  ];
  const base = rows[0][1].median;
  console.log(`node ${process.version}, ${RUNS} runs each (after 2 warm-ups), wall time in ms\n`);
  console.log(`${'command'.padEnd(56)} ${'median'.padStart(8)} ${'p90'.padStart(8)} ${'× node'.padStart(8)}`);
  for (const [name, t] of rows) {
    console.log(`${name.padEnd(56)} ${t.median.toFixed(1).padStart(8)} ${t.p90.toFixed(1).padStart(8)} ${(t.median / base).toFixed(2).padStart(8)}`);
  }
} finally {
  await stop();
  await rm(dir, { recursive: true, force: true });
}
