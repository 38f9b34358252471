import { describe, expect, it } from 'vitest';
import { parseEnrollmentResponse, serverMessage } from '../../src/enrollment/enrollment-response.js';
import { EnrollmentError } from '../../src/errors.js';

const RUNNER_ID = '0c6b1c52-7a4b-4f16-9f2e-5d2b1f7e9a10';

function badResponse(body: string): EnrollmentError {
  try {
    parseEnrollmentResponse(body);
  } catch (err) {
    expect(err).toBeInstanceOf(EnrollmentError);
    return err as EnrollmentError;
  }
  throw new Error('expected an EnrollmentError, nothing was thrown');
}

describe('parseEnrollmentResponse (docs/protocol.md §3)', () => {
  it('reads org_id and runner_id from a createRunnerResponse, ignoring other attributes', () => {
    const body = JSON.stringify({
      data: {
        id: 'x',
        type: 'createRunnerResponse',
        attributes: { org_id: 1234567, runner_id: RUNNER_ID, runner_name: 'web-1-20250304050607', extra: true },
      },
      meta: {},
    });
    expect(parseEnrollmentResponse(body)).toEqual({ orgId: 1234567, runnerId: RUNNER_ID });
  });

  it('accepts the largest exactly representable org id', () => {
    expect(
      parseEnrollmentResponse(`{"data":{"type":"createRunnerResponse","attributes":{"org_id":9007199254740991,"runner_id":"r"}}}`),
    ).toEqual({
      orgId: Number.MAX_SAFE_INTEGER,
      runnerId: 'r',
    });
  });

  const attrs = (a: Record<string, unknown>) => JSON.stringify({ data: { type: 'createRunnerResponse', attributes: a } });

  it.each([
    ['invalid JSON', '<html>502 Bad Gateway</html>', 'the body is not valid JSON'],
    ['empty body', '', 'the body is not valid JSON'],
    ['JSON null', 'null', 'the body has no data object'],
    ['a JSON number', '5', 'the body has no data object'],
    ['no data', '{"errors":["x"]}', 'the body has no data object'],
    ['data a string', '{"data":"x"}', 'the body has no data object'],
    ['data an array', '{"data":[]}', 'data.type is undefined, expected "createRunnerResponse"'],
    [
      'wrong type',
      JSON.stringify({ data: { type: 'createRunnerRequest', attributes: { org_id: 1, runner_id: 'r' } } }),
      'data.type is "createRunnerRequest", expected "createRunnerResponse"',
    ],
    ['no attributes', JSON.stringify({ data: { type: 'createRunnerResponse' } }), 'org_id is missing or not an integer'],
    ['missing org_id', attrs({ runner_id: 'r' }), 'org_id is missing or not an integer'],
    ['org_id a string', attrs({ org_id: '1234', runner_id: 'r' }), 'org_id is missing or not an integer'],
    ['org_id fractional', attrs({ org_id: 12.5, runner_id: 'r' }), 'org_id is missing or not an integer'],
    ['org_id beyond 2^53', attrs({ org_id: 2 ** 53, runner_id: 'r' }), 'org_id is missing or not an integer'],
    ['org_id null', attrs({ org_id: null, runner_id: 'r' }), 'org_id is missing or not an integer'],
    ['missing runner_id', attrs({ org_id: 1 }), 'runner_id is missing or not a string'],
    ['runner_id a number', attrs({ org_id: 1, runner_id: 7 }), 'runner_id is missing or not a string'],
    ['empty runner_id', attrs({ org_id: 1, runner_id: '' }), 'runner_id is unusable (runner_id: is empty)'],
    [
      'runner_id with ":"',
      attrs({ org_id: 1, runner_id: 'a:b' }),
      'runner_id is unusable (runner_id: contains ":", which breaks the URN the Go agent parses)',
    ],
  ])('%s → ENROLL_BAD_RESPONSE', (_name, body, detail) => {
    const err = badResponse(body);
    expect(err.code).toBe('ENROLL_BAD_RESPONSE');
    expect(err.exitCode).toBe(5);
    expect(err.message).toBe(`the enrollment API answered 200 but ${detail}`);
  });
});

describe('serverMessage', () => {
  it.each<[string, string | undefined]>([
    ['{"errors":["Unauthorized"]}', 'Unauthorized'],
    ['{"errors":["Forbidden","missing scope"]}', 'Forbidden; missing scope'],
    ['{"errors":[{"title":"Bad Request","detail":"runner_name too long"}]}', 'Bad Request: runner_name too long'],
    ['{"errors":[]}', undefined],
    ['{}', undefined],
    ['  plain text  ', 'plain text'],
    ['', undefined],
  ])('%j → %j', (body, message) => {
    expect(serverMessage(body)).toBe(message);
  });

  it('shortens long bodies, saying how much was cut', () => {
    expect(serverMessage('x'.repeat(1000))).toBe(`${'x'.repeat(200)}… (800 more characters)`);
    expect(serverMessage(JSON.stringify({ errors: ['y'.repeat(1000)] }))).toBe(`${'y'.repeat(300)}… (700 more characters)`);
  });

  it('strips escape sequences, control characters and newlines from what the server says', () => {
    expect(serverMessage('{"errors":["\\u001b[2J\\u001b[31mdenied\\nINFO rotation ok"]}')).toBe('denied INFO rotation ok');
    expect(serverMessage('oops\x1b]0;title\x07\r\nfake line')).toBe('oops fake line');
  });
});
