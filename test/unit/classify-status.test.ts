import { describe, expect, it } from 'vitest';
import { classifyStatus, type StatusClass } from '../../src/enrollment/classify-status.js';

describe('classifyStatus (docs/protocol.md §3: upstream classification, redirects refused)', () => {
  it.each<[number, StatusClass]>([
    [200, 'ok'],
    [401, 'credentials'],
    [403, 'credentials'],
    [300, 'redirect'],
    [301, 'redirect'],
    [302, 'redirect'],
    [307, 'redirect'],
    [308, 'redirect'],
    [399, 'redirect'],
    [408, 'permanent'],
    [425, 'permanent'],
    [429, 'retry'],
    [400, 'permanent'],
    [404, 'permanent'],
    [405, 'permanent'],
    [409, 'permanent'],
    [413, 'permanent'],
    [422, 'permanent'],
    [499, 'permanent'],
    [500, 'retry'],
    [502, 'retry'],
    [503, 'retry'],
    [504, 'retry'],
    [599, 'retry'],
    [100, 'retry'],
    [201, 'retry'],
    [202, 'retry'],
    [204, 'retry'],
    [299, 'retry'],
    [600, 'retry'],
    [0, 'retry'],
  ])('HTTP %i → %s', (status, kind) => {
    expect(classifyStatus(status)).toBe(kind);
  });
});
