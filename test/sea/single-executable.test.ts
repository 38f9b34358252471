import { execFileSync, spawnSync } from 'node:child_process';
import { createHash } from 'node:crypto';
import { mkdtempSync, readFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';

// The executables of `npm run build:sea` themselves (run by `npm run test:sea`, after that build).

const SEA = fileURLToPath(new URL('../../dist/sea/', import.meta.url));
const X64 = join(SEA, 'par-identity-linux-x64');
const ARM64 = join(SEA, 'par-identity-linux-arm64');
const PACKAGE_VERSION = (
  JSON.parse(readFileSync(fileURLToPath(new URL('../../package.json', import.meta.url)), 'utf8')) as { version: string }
).version;
const EMULATOR_MARKER = 'par-identity-emulator-bundle:6f1c2a';
// The sentinel Node looks for; `--build-sea` flips its last character from 0 to 1.
const FUSE = 'NODE_SEA_FUSE_fce680ab2cc467b6e072b8b5df1996b2:';
const EM_X86_64 = 62;
const EM_AARCH64 = 183;

const pathWithoutNode = mkdtempSync(join(tmpdir(), 'par-path-without-node-'));
/** Like `env -i PATH=<empty folder> executable args...`. */
function run(args: string[], input = '') {
  return spawnSync(X64, args, { env: { PATH: pathWithoutNode }, input, encoding: 'utf8', timeout: 20_000 });
}

function elfMachine(file: Buffer): { class64: boolean; machine: number } {
  expect(file.subarray(0, 4).toString('latin1')).toBe('\x7fELF');
  return { class64: file[4] === 2, machine: file.readUInt16LE(18) };
}

describe('single executables', () => {
  it('linux-x64 runs with no node on PATH and an empty environment', () => {
    const version = run(['--version']);
    expect(version.status).toBe(0);
    expect(version.stdout.trim()).toMatch(/^\d+\.\d+\.\d+/);
    const help = run(['--help']);
    expect(help.status).toBe(0);
    expect(help.stdout).toContain('rotate-par-identity');
    expect(help.stderr).not.toMatch(/Warning|\[DEP/);
  });

  it('answers a pure help or version request from the stored texts, byte for byte what the full path prints', () => {
    // The entry answers these before the CLI's modules are evaluated (src/cli/fast-help.ts);
    // PAR_IDENTITY_NO_FAST_HELP=1 makes commander print them from the program built from the table.
    const full = (args: string[]) =>
      spawnSync(X64, args, { env: { PATH: pathWithoutNode, PAR_IDENTITY_NO_FAST_HELP: '1' }, encoding: 'utf8', timeout: 20_000 });
    for (const args of [['--help'], ['-h'], ['help'], ['--version'], ['status', '--help'], ['help', 'rotate-identity'], ['watch', '-h']]) {
      const fast = run(args);
      const slow = full(args);
      expect(fast.status, args.join(' ')).toBe(0);
      expect(slow.status, args.join(' ')).toBe(0);
      expect(fast.stdout, args.join(' ')).toBe(slow.stdout);
      expect(fast.stderr).toBe('');
    }
    // Anything else still takes the full path: help of an unknown command is a usage error.
    const unknown = run(['help', 'nope']);
    expect(unknown.status).toBe(2);
    expect(unknown.stdout).toBe('');
    expect(unknown.stderr).toMatch(/^Usage: par-identity /);
  });

  it('credentials: says the executable has no keychain, names the alternatives, exit 13', () => {
    const set = run(['credentials', 'set', '--profile', 'x'], 'some-key-0000000000000000000\n');
    expect(set.status).toBe(13);
    expect(set.stderr).toContain('error[KEYCHAIN_UNAVAILABLE]');
    expect(set.stderr).toContain('single executable has no keychain');
    expect(set.stderr).toContain('--api-key-file');
    expect(set.stderr).toContain('DD_API_KEY');
    expect(set.stderr).not.toContain('some-key');
    // The tarball the hint names is the one npm pack writes for this version, not a placeholder.
    expect(set.stderr).toContain(`npm install -g ./par-identity-${PACKAGE_VERSION}.tgz`);
  });

  it('emulator: not in the executable, exit 13', () => {
    const emulator = run(['emulator', '--json']);
    expect(emulator.status).toBe(13);
    const out = JSON.parse(emulator.stdout) as { hint: string };
    expect(out).toMatchObject({ status: 'error', code: 'EMULATOR_UNAVAILABLE', exitCode: 13 });
    expect(out.hint).toContain(`npm install -g ./par-identity-${PACKAGE_VERSION}.tgz`);
  });

  it('both carry the product bundle, without emulator code, and the flipped SEA fuse', () => {
    for (const [path, machine] of [
      [X64, EM_X86_64],
      [ARM64, EM_AARCH64],
    ] as const) {
      const file = readFileSync(path);
      expect(elfMachine(file)).toEqual({ class64: true, machine });
      expect(file.includes(`${FUSE}1`), `${path}: fuse flipped`).toBe(true);
      expect(file.includes('NODE_SEA_BLOB'), `${path}: blob note`).toBe(true);
      expect(file.includes('rotate-par-identity'), `${path}: product code`).toBe(true);
      expect(file.includes(EMULATOR_MARKER), `${path}: emulator code`).toBe(false);
    }
  });

  it('SHA256SUMS lists both executables and their gzipped copies with their digests', () => {
    const sums = readFileSync(join(SEA, 'SHA256SUMS'), 'utf8').trim().split('\n');
    expect(sums).toEqual(
      ['par-identity-linux-x64', 'par-identity-linux-x64.gz', 'par-identity-linux-arm64', 'par-identity-linux-arm64.gz'].map(
        (name) =>
          `${createHash('sha256')
            .update(readFileSync(join(SEA, name)))
            .digest('hex')}  ${name}`,
      ),
    );
  });

  it('the gzipped copy unpacks, with the one command of docs/install.md, into the very executable', () => {
    const unpacked = join(mkdtempSync(join(tmpdir(), 'par-gunzip-')), 'par-identity');
    execFileSync('sh', ['-c', `gzip -dc "$1" > "$2" && chmod +x "$2"`, 'sh', join(SEA, 'par-identity-linux-x64.gz'), unpacked]);
    expect(readFileSync(unpacked).equals(readFileSync(join(SEA, 'par-identity-linux-x64')))).toBe(true);
    expect(execFileSync(unpacked, ['--version'], { encoding: 'utf8', env: { PATH: '/nonexistent' } }).trim()).toMatch(/\d+\.\d+\.\d+/);
  });
});
