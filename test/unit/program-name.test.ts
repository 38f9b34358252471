import { describe, expect, it } from 'vitest';
import { programName } from '../../src/single-executable.js';

// The program name printed in undo:/next: lines and hints must be a command the operator can paste
// (issue 23: "use the program name the operator actually ran").
describe('programName', () => {
  it('is par-identity for the npm package, whatever started Node', () => {
    expect(programName(false, '/usr/bin/node', '/usr/bin/node')).toBe('par-identity');
  });

  it('is the single executable as typed: a path from a scratch folder stays a path', () => {
    expect(programName(true, '/tmp/par-identity', '/tmp/par-identity')).toBe('/tmp/par-identity');
    expect(programName(true, './par-identity-linux-x64', '/opt/x/par-identity-linux-x64')).toBe('./par-identity-linux-x64');
  });

  it('is the bare name when the shell found it on PATH', () => {
    expect(programName(true, 'par-identity', '/usr/local/bin/par-identity')).toBe('par-identity');
  });

  it('falls back to the file name, then to par-identity, when argv[0] would need quoting', () => {
    expect(programName(true, '/tmp/a b/par identity; rm -rf ~', '/opt/par-identity-linux-x64')).toBe('par-identity-linux-x64');
    expect(programName(true, '$(x)', '/opt/weird name')).toBe('par-identity');
    expect(programName(true, '', '/opt/par-identity')).toBe('par-identity');
  });
});
