// `npm run demo`: the main job end to end against the built-in emulators, using only the built bin.
import { spawnSync } from 'node:child_process';
import { mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { BIN, startEmulator } from './start-emulator.mjs';

const API_KEY = '00000000000000000000000000emu0ak';
const APP_KEY = '0000000000000000000000000000000000emu0pk';
const bold = (s) => (process.stdout.isTTY ? `\u001b[1m${s}\u001b[0m` : s);

const { info, stop } = await startEmulator();
const dir = await mkdtemp(join(tmpdir(), 'par-demo-'));
const env = { ...process.env, DD_INTERNAL_PAR_USE_DD_URL_FOR_OPMS: 'true' };
let failed = false;

function par(...args) {
  console.log(`\n${bold(`$ par-identity ${args.join(' ')}`)}`);
  const run = spawnSync(process.execPath, [BIN, ...args], { env, encoding: 'utf8' });
  process.stdout.write(run.stdout);
  process.stdout.write(run.stderr.split('\n').filter((l) => l.startsWith('warning') || l.startsWith('error') || l.startsWith('next')).map((l) => `${l}\n`).join(''));
  if (run.status !== 0) failed = true;
  return run;
}

async function showFile() {
  const text = await readFile(join(dir, 'privateactionrunner_private_identity.json'), 'utf8');
  const record = JSON.parse(text);
  console.log(`  file now holds urn ${record.urn} (private_key: ${record.private_key.length} chars, not shown)`);
}

try {
  console.log(bold(`Enrollment API emulator: ${info.enrollmentUrl}`));
  await writeFile(
    join(dir, 'datadog.yaml'),
    [`api_key: ${API_KEY}`, `app_key: ${APP_KEY}`, `dd_url: ${info.enrollmentUrl}`, 'hostname: demo-host', 'private_action_runner:', '  enabled: true', ''].join('\n'),
  );
  console.log(`Agent config written to ${join(dir, 'datadog.yaml')} (test keys; DD_INTERNAL_PAR_USE_DD_URL_FOR_OPMS=true points the API at the emulator)`);
  par('rotate-identity', '-c', dir);
  await showFile();
  par('rotate-identity', '-c', dir);
  await showFile();
  par('status', '-c', dir, '--verify');
  par('rollback', '-c', dir);
  await showFile();
  console.log(`\n${failed ? 'demo FAILED' : 'demo complete: two rotations, a verified status, and a rollback.'}`);
} finally {
  await stop();
  await rm(dir, { recursive: true, force: true });
}
process.exitCode = failed ? 1 : 0;
