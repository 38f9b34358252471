import { execFileSync } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';

// deploy/Dockerfile is not built here (no Docker): these checks parse it instead.

const text = readFileSync(new URL('../../deploy/Dockerfile', import.meta.url), 'utf8');
const lines = text
  .replace(/\\\n/g, ' ')
  .split('\n')
  .map((l) => l.trim())
  .filter((l) => l && !l.startsWith('#'));
const stages: string[][] = [];
for (const line of lines) {
  if (/^FROM\s/i.test(line)) stages.push([line]);
  else stages.at(-1)?.push(line);
}
const final = stages.at(-1)!;
const instr = (name: string) => final.filter((l) => l.toUpperCase().startsWith(`${name} `));
// What gcr.io/distroless/cc-debian12 ships: glibc, libgcc_s, libstdc++ (and the dynamic loader).
const IN_DISTROLESS_CC = /^(libc|libm|libdl|libpthread|librt|libgcc_s|libstdc\+\+|ld-linux.*)\.so/;

describe('deploy/Dockerfile (CronJob image)', () => {
  it('the final stage is distroless with a pinned tag, never :latest', () => {
    expect(final[0]).toMatch(/^FROM gcr\.io\/distroless\/cc-debian\d+:nonroot$/);
  });

  it('copies the single executable build:sea writes, runs it as nonroot, exec-form ENTRYPOINT', () => {
    const copy = instr('COPY').find((l) => l.includes('par-identity-linux-'));
    expect(copy).toMatch(/^COPY --chmod=0555 par-identity-linux-\$\{ARCH\} (\/\S+)$/);
    const dest = /(\/\S+)$/.exec(copy!)![1];
    expect(lines.find((l) => l.startsWith('ARG ARCH='))).toBe('ARG ARCH=x64'); // dist/sea/par-identity-linux-x64
    expect(instr('USER')).toEqual(['USER nonroot:nonroot']);
    expect(JSON.parse(instr('ENTRYPOINT')[0]!.slice('ENTRYPOINT '.length))).toEqual([dest]);
    expect(final.some((l) => /^RUN\s/i.test(l))).toBe(false); // distroless has no shell
  });

  it('every shared library the Node binary needs is in the base or copied into it', () => {
    const needed = execFileSync('readelf', ['-d', process.execPath], { encoding: 'utf8' })
      .split('\n')
      .flatMap((l) => /\(NEEDED\).*\[(.+)\]/.exec(l)?.[1] ?? []);
    expect(needed.length).toBeGreaterThan(0);
    const copied = instr('COPY').map((l) => l.split(/\s+/).at(-1)!);
    for (const lib of needed.filter((l) => !IN_DISTROLESS_CC.test(l))) {
      expect(copied, `${lib} is neither in distroless/cc nor copied`).toContain(`/usr/lib/${lib}`);
    }
  });
});
