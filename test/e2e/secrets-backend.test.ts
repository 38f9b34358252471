import { createHash } from 'node:crypto';
import { chmod, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { DEFAULT_API_KEY, DEFAULT_APP_KEY } from '../../emulators/enrollment/index.js';
import { parseIdentityFile } from '../../src/identity/identity-record.js';
import { expectNoSecrets, type LocalFixture, localFixture } from './local-fixture.js';

// The built binary with the agent's keys behind ENC[] handles and a real secret_backend_command.

let fx: LocalFixture;
beforeEach(async () => {
  fx = await localFixture();
});
afterEach(() => fx.close());

async function backendScript(mode = 0o700): Promise<string> {
  const path = join(fx.dir, 'secret-backend');
  const answers = { 'vault:dd/api': { value: `${DEFAULT_API_KEY}\n` }, 'vault:dd/app': { value: DEFAULT_APP_KEY } };
  await writeFile(
    path,
    `#!${process.execPath}\nlet s='';process.stdin.on('data',(d)=>{s+=d});process.stdin.on('end',()=>{const want=JSON.parse(s).secrets;const all=${JSON.stringify(answers)};const out={};for(const h of want)if(all[h])out[h]=all[h];process.stdout.write(JSON.stringify(out));});\n`,
  );
  await chmod(path, mode);
  return path;
}

describe('secrets backend', () => {
  it('rotate-identity enrolls with the resolved keys and writes the hash of the resolved, trimmed API key', async () => {
    await fx.writeConfig(`secret_backend_command: ${await backendScript()}\n`);
    const run = await fx.run(['rotate-identity', '-c', fx.dir, '--no-verify'], {
      env: { DD_API_KEY: 'ENC[vault:dd/api]', DD_APP_KEY: 'ENC[vault:dd/app]' },
    });
    expect(run.code, run.stderr).toBe(0);
    const record = parseIdentityFile(await fx.read());
    expect(record.apiKeyHash).toBe(createHash('sha256').update(DEFAULT_API_KEY).digest('hex'));
    expectNoSecrets(run, [DEFAULT_API_KEY, DEFAULT_APP_KEY]);
    const status = await fx.run(['status', '-c', fx.dir, '--json'], { env: { DD_API_KEY: 'ENC[vault:dd/api]' } });
    expect(JSON.parse(status.stdout)).toMatchObject({ agentWouldReEnroll: false });
  });

  it('a backend with group/other rights is refused like the agent does (exit 3, nothing sent)', async () => {
    await fx.writeConfig(`secret_backend_command: ${await backendScript(0o755)}\n`);
    const run = await fx.run(['rotate-identity', '-c', fx.dir, '--no-verify'], { env: { DD_API_KEY: 'ENC[vault:dd/api]' } });
    expect(run.code).toBe(3);
    expect(run.stderr).toContain('error[SECRET_BACKEND_PERMISSIONS]');
    expect(run.stderr).toContain('ENC[vault:dd/api]');
    expect(fx.emulator.requests).toHaveLength(0);
  });
});
