import { createPublicKey, generateKeyPairSync } from 'node:crypto';
import { calculateJwkThumbprint, exportJWK } from 'jose';
import { request } from 'undici';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { type EnrollmentEmulator, MAX_REQUEST_BODY_BYTES, ROUTE_PATHS, startEnrollmentEmulator } from '../../emulators/enrollment/index.js';
import { enrollmentBody, enrollmentHeaders, newRunnerKeyPair } from '../../emulators/enrollment/known-good-requests.js';

let emu: EnrollmentEmulator;
const keys = newRunnerKeyPair();

beforeAll(async () => {
  emu = await startEnrollmentEmulator();
});
afterAll(() => emu.close());
beforeEach(() => emu.reset({ runners: true }));

interface Answer {
  status: number;
  text: string;
  json: unknown;
}

async function enroll(
  headers: Record<string, string> = enrollmentHeaders('enroll'),
  body: string | Buffer = JSON.stringify(enrollmentBody({ publicKeyPem: keys.publicKeyPem })),
  path = ROUTE_PATHS.enroll,
): Promise<Answer> {
  const res = await request(`${emu.url}${path}`, { method: 'POST', headers, body });
  const text = await res.body.text();
  let json: unknown;
  try {
    json = JSON.parse(text);
  } catch {
    json = undefined;
  }
  return { status: res.statusCode, text, json };
}

function details(answer: Answer): string[] {
  const errors = (answer.json as { errors?: { detail?: string }[] } | undefined)?.errors ?? [];
  return errors.map((e) => e.detail ?? '');
}

type Attrs = Record<string, unknown>;

function bodyWith(mutate: (data: Record<string, unknown>, attrs: Attrs) => void, flavor?: 'cluster_agent'): string {
  const body = enrollmentBody({ publicKeyPem: keys.publicKeyPem, ...(flavor ? { flavor } : {}) });
  const data = body.data as Record<string, unknown>;
  mutate(data, data['attributes'] as Attrs);
  return JSON.stringify(body);
}

function pemOf(der: Buffer, width = 64, eol = '\n', label = 'PUBLIC KEY'): string {
  const b64 = der.toString('base64');
  const lines = b64.match(new RegExp(`.{1,${width}}`, 'g')) ?? [];
  return [`-----BEGIN ${label}-----`, ...lines, `-----END ${label}-----`, ''].join(eol);
}

const goodDer = keys.publicKey.export({ type: 'spki', format: 'der' });

function compressedDer(): Buffer {
  const x = goodDer.subarray(27, 59);
  const y = goodDer.subarray(59);
  const prefix = Buffer.from('3039301306072a8648ce3d020106082a8648ce3d030107032200', 'hex');
  return Buffer.concat([prefix, Buffer.from([(y[31]! & 1) === 1 ? 3 : 2]), x]);
}

describe('accepted enrollments', () => {
  it('accepts a standalone runner request exactly as the Go agent sends it', async () => {
    const before = Date.now();
    const answer = await enroll();
    const after = Date.now();
    expect(answer.status).toBe(200);
    const data = (answer.json as { data: { type: string; id: string; attributes: { org_id: number; runner_id: string } } }).data;
    expect(data.type).toBe('createRunnerResponse');
    expect(data.id).toMatch(/^[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/);
    expect(data.attributes).toEqual({ org_id: emu.orgId, runner_id: data.id });
    expect(Number.isInteger(data.attributes.org_id)).toBe(true);

    expect(emu.runners).toHaveLength(1);
    const runner = emu.runners[0]!;
    expect(runner).toMatchObject({
      runnerId: data.id,
      orgId: emu.orgId,
      name: 'runner-host-1-20250101120000',
      flavor: 'private_action_runner',
      hostname: 'runner-host-1',
      clusterId: null,
      runnerHost: '',
      modes: ['pull'],
      publicKeyPem: keys.publicKeyPem,
      enrolledVia: 'enroll',
      revoked: false,
    });
    // Stamped while the request was being served.
    expect(runner.enrolledAt).toBeGreaterThanOrEqual(before);
    expect(runner.enrolledAt).toBeLessThanOrEqual(after);
  });

  it('records the RFC 7638 thumbprint of the enrolled key (cross-checked with jose)', async () => {
    await enroll();
    const expected = await calculateJwkThumbprint(await exportJWK(keys.publicKey));
    expect(emu.runners[0]!.publicKeyThumbprint).toBe(expected);
  });

  it('accepts a cluster agent request', async () => {
    const body = JSON.stringify(enrollmentBody({ publicKeyPem: keys.publicKeyPem, flavor: 'cluster_agent', clusterId: 'c-1' }));
    const answer = await enroll(enrollmentHeaders('enroll'), body);
    expect(answer.status).toBe(200);
    expect(emu.runners[0]).toMatchObject({ flavor: 'cluster_agent', clusterId: 'c-1', hostname: null, name: 'my-cluster-20250101120000' });
  });

  it('accepts a non-empty runner_host and header names in any case', async () => {
    const headers = Object.fromEntries(Object.entries(enrollmentHeaders('enroll')).map(([k, v]) => [k.toLowerCase(), v]));
    const answer = await enroll(
      headers,
      bodyWith((_, a) => {
        a['runner_host'] = 'runner.example';
      }),
    );
    expect(answer.status).toBe(200);
    expect(emu.runners[0]!.runnerHost).toBe('runner.example');
  });

  it('gives every enrollment a fresh runner id and never revokes the earlier one', async () => {
    const first = await enroll();
    const other = newRunnerKeyPair();
    const second = await enroll(enrollmentHeaders('enroll'), JSON.stringify(enrollmentBody({ publicKeyPem: other.publicKeyPem })));
    expect([first.status, second.status]).toEqual([200, 200]);
    expect(emu.runners.map((r) => r.revoked)).toEqual([false, false]);
    expect(new Set(emu.runners.map((r) => r.runnerId)).size).toBe(2);
    expect(emu.runners[1]!.publicKeyPem).toBe(other.publicKeyPem);
  });

  it('logs the request with its response status', async () => {
    await enroll();
    expect(emu.requests).toHaveLength(1);
    expect(emu.requests[0]).toMatchObject({ listener: 'main', method: 'POST', route: 'enroll', status: 200 });
  });
});

describe('rejected enrollments (400, JSON:API error, nothing registered)', () => {
  const headers = (change: (h: Record<string, string>) => void) => {
    const h = enrollmentHeaders('enroll');
    change(h);
    return h;
  };
  const good = () => JSON.stringify(enrollmentBody({ publicKeyPem: keys.publicKeyPem }));
  const withPem = (pem: unknown) =>
    bodyWith((_, a) => {
      a['public_key_pem'] = pem;
    });

  const cases: [name: string, headers: Record<string, string>, body: () => string | Buffer, detail: RegExp][] = [
    ['Content-Type missing', headers((h) => delete h['Content-Type']), good, /Content-Type header missing/],
    [
      'Content-Type application/json',
      headers((h) => {
        h['Content-Type'] = 'application/json';
      }),
      good,
      /Content-Type must be application\/vnd\.api\+json/,
    ],
    [
      'Content-Type with a charset',
      headers((h) => {
        h['Content-Type'] = 'application/vnd.api+json; charset=utf-8';
      }),
      good,
      /Content-Type must be/,
    ],
    ['Accept missing', headers((h) => delete h['Accept']), good, /Accept header missing/],
    [
      'Accept */*',
      headers((h) => {
        h['Accept'] = '*/*';
      }),
      good,
      /Accept must be application\/json/,
    ],
    [
      'X-Datadog-OnPrem-Version missing',
      headers((h) => delete h['X-Datadog-OnPrem-Version']),
      good,
      /X-Datadog-OnPrem-Version header missing/,
    ],
    [
      'X-Datadog-OnPrem-Version empty',
      headers((h) => {
        h['X-Datadog-OnPrem-Version'] = '';
      }),
      good,
      /X-Datadog-OnPrem-Version header missing or empty/,
    ],
    [
      'a runtime JWT sent on enrollment',
      headers((h) => {
        h['X-Datadog-OnPrem-JWT'] = 'a.b.c';
      }),
      good,
      /X-Datadog-OnPrem-JWT must not be sent on enrollment/,
    ],
    ['body not JSON', enrollmentHeaders('enroll'), () => '{"data":', /not valid JSON/],
    ['body not UTF-8', enrollmentHeaders('enroll'), () => Buffer.from([0x7b, 0xff, 0x7d]), /not valid UTF-8/],
    ['body an array', enrollmentHeaders('enroll'), () => '[]', /must be a JSON object/],
    ['data missing', enrollmentHeaders('enroll'), () => '{"attributes":{}}', /data must be an object/],
    [
      'data.type wrong',
      enrollmentHeaders('enroll'),
      () =>
        bodyWith((d) => {
          d['type'] = 'runner';
        }),
      /data\.type must be "createRunnerRequest", got "runner"/,
    ],
    [
      'data.id present',
      enrollmentHeaders('enroll'),
      () =>
        bodyWith((d) => {
          d['id'] = 'abc';
        }),
      /data\.id must be absent/,
    ],
    [
      'data.id null',
      enrollmentHeaders('enroll'),
      () =>
        bodyWith((d) => {
          d['id'] = null;
        }),
      /data\.id must be absent/,
    ],
    [
      'attributes missing',
      enrollmentHeaders('enroll'),
      () =>
        bodyWith((d) => {
          delete d['attributes'];
        }),
      /data\.attributes must be an object/,
    ],
    [
      'unknown attribute (typo)',
      enrollmentHeaders('enroll'),
      () =>
        bodyWith((_, a) => {
          a['agent_host_name'] = 'x';
        }),
      /unknown attribute "agent_host_name"/,
    ],
    [
      'runner_name missing',
      enrollmentHeaders('enroll'),
      () =>
        bodyWith((_, a) => {
          delete a['runner_name'];
        }),
      /runner_name must be a non-empty string/,
    ],
    [
      'runner_name empty',
      enrollmentHeaders('enroll'),
      () =>
        bodyWith((_, a) => {
          a['runner_name'] = '';
        }),
      /runner_name must be a non-empty string/,
    ],
    [
      'runner_modes ["pull","push"]',
      enrollmentHeaders('enroll'),
      () =>
        bodyWith((_, a) => {
          a['runner_modes'] = ['pull', 'push'];
        }),
      /runner_modes must be exactly \["pull"\]/,
    ],
    [
      'runner_modes "pull"',
      enrollmentHeaders('enroll'),
      () =>
        bodyWith((_, a) => {
          a['runner_modes'] = 'pull';
        }),
      /runner_modes must be exactly/,
    ],
    [
      'runner_modes ["push"]',
      enrollmentHeaders('enroll'),
      () =>
        bodyWith((_, a) => {
          a['runner_modes'] = ['push'];
        }),
      /runner_modes must be exactly/,
    ],
    [
      'runner_modes missing',
      enrollmentHeaders('enroll'),
      () =>
        bodyWith((_, a) => {
          delete a['runner_modes'];
        }),
      /runner_modes must be exactly/,
    ],
    [
      'runner_host missing',
      enrollmentHeaders('enroll'),
      () =>
        bodyWith((_, a) => {
          delete a['runner_host'];
        }),
      /runner_host must be a string/,
    ],
    [
      'runner_host null',
      enrollmentHeaders('enroll'),
      () =>
        bodyWith((_, a) => {
          a['runner_host'] = null;
        }),
      /runner_host must be a string/,
    ],
    [
      'public_key_pem missing',
      enrollmentHeaders('enroll'),
      () =>
        bodyWith((_, a) => {
          delete a['public_key_pem'];
        }),
      /public_key_pem must be a string/,
    ],
    ['PEM with CRLF line ends', enrollmentHeaders('enroll'), () => withPem(pemOf(goodDer, 64, '\r\n')), /LF line endings/],
    ['PEM without trailing newline', enrollmentHeaders('enroll'), () => withPem(keys.publicKeyPem.trimEnd()), /must end with a newline/],
    ['PEM with two trailing newlines', enrollmentHeaders('enroll'), () => withPem(`${keys.publicKeyPem}\n`), /single trailing newline/],
    [
      'PEM wrapped at 76 columns',
      enrollmentHeaders('enroll'),
      () => withPem(pemOf(goodDer, 76)),
      /76 columns; base64 lines must be 64 columns/,
    ],
    ['PEM wrapped at 32 columns', enrollmentHeaders('enroll'), () => withPem(pemOf(goodDer, 32)), /32 columns/],
    ['PEM on one line', enrollmentHeaders('enroll'), () => withPem(pemOf(goodDer, 1000)), /base64 lines must be 64 columns/],
    ['PEM with a blank line', enrollmentHeaders('enroll'), () => withPem(keys.publicKeyPem.replace('-----\n', '-----\n\n')), /not base64/],
    ['PEM with bad base64', enrollmentHeaders('enroll'), () => withPem(keys.publicKeyPem.replace(/\n(.)/, '\n*')), /not base64/],
    ['PEM with broken padding', enrollmentHeaders('enroll'), () => withPem(keys.publicKeyPem.replace('==\n', '=\n')), /padding/],
    [
      'PEM label RSA PUBLIC KEY',
      enrollmentHeaders('enroll'),
      () => withPem(pemOf(goodDer, 64, '\n', 'RSA PUBLIC KEY')),
      /"PUBLIC KEY" block, got "RSA PUBLIC KEY"/,
    ],
    [
      'PEM holding the private key',
      enrollmentHeaders('enroll'),
      () => withPem(keys.privateKey.export({ type: 'pkcs8', format: 'pem' })),
      /contains a private key/,
    ],
    ['PEM not SPKI DER', enrollmentHeaders('enroll'), () => withPem(pemOf(goodDer.subarray(0, 60))), /not a valid SubjectPublicKeyInfo/],
    [
      'PEM of an RSA key',
      enrollmentHeaders('enroll'),
      () => withPem(generateKeyPairSync('rsa', { modulusLength: 1024 }).publicKey.export({ type: 'spki', format: 'pem' })),
      /must be an EC key, got rsa/,
    ],
    [
      'PEM of an Ed25519 key',
      enrollmentHeaders('enroll'),
      () => withPem(generateKeyPairSync('ed25519').publicKey.export({ type: 'spki', format: 'pem' })),
      /must be an EC key, got ed25519/,
    ],
    [
      'PEM of a P-384 key',
      enrollmentHeaders('enroll'),
      () => withPem(generateKeyPairSync('ec', { namedCurve: 'secp384r1' }).publicKey.export({ type: 'spki', format: 'pem' })),
      /curve P-256 \(prime256v1\), got secp384r1/,
    ],
    [
      'PEM of a secp256k1 key',
      enrollmentHeaders('enroll'),
      () => withPem(generateKeyPairSync('ec', { namedCurve: 'secp256k1' }).publicKey.export({ type: 'spki', format: 'pem' })),
      /got secp256k1/,
    ],
    ['PEM with a compressed point', enrollmentHeaders('enroll'), () => withPem(pemOf(compressedDer())), /uncompressed P-256 point/],
    [
      'PEM with text after END',
      enrollmentHeaders('enroll'),
      () => withPem(`${keys.publicKeyPem}extra\n`),
      /nothing after it|must end with/,
    ],
    [
      'agent_flavor missing',
      enrollmentHeaders('enroll'),
      () =>
        bodyWith((_, a) => {
          delete a['agent_flavor'];
        }),
      /agent_flavor must be "private_action_runner" or "cluster_agent"/,
    ],
    [
      'agent_flavor agent',
      enrollmentHeaders('enroll'),
      () =>
        bodyWith((_, a) => {
          a['agent_flavor'] = 'agent';
        }),
      /agent_flavor must be .* got "agent"/,
    ],
    [
      'standalone without agent_hostname',
      enrollmentHeaders('enroll'),
      () =>
        bodyWith((_, a) => {
          delete a['agent_hostname'];
        }),
      /agent_hostname must be a non-empty string for agent_flavor private_action_runner/,
    ],
    [
      'standalone with empty agent_hostname',
      enrollmentHeaders('enroll'),
      () =>
        bodyWith((_, a) => {
          a['agent_hostname'] = '';
        }),
      /agent_hostname must be a non-empty string/,
    ],
    [
      'standalone with orch_cluster_id',
      enrollmentHeaders('enroll'),
      () =>
        bodyWith((_, a) => {
          a['orch_cluster_id'] = 'c-1';
        }),
      /orch_cluster_id must be absent for agent_flavor private_action_runner/,
    ],
    [
      'standalone with orch_cluster_id null',
      enrollmentHeaders('enroll'),
      () =>
        bodyWith((_, a) => {
          a['orch_cluster_id'] = null;
        }),
      /orch_cluster_id must be absent/,
    ],
    [
      'cluster agent without orch_cluster_id',
      enrollmentHeaders('enroll'),
      () =>
        bodyWith((_, a) => {
          delete a['orch_cluster_id'];
        }, 'cluster_agent'),
      /orch_cluster_id must be a non-empty string for agent_flavor cluster_agent/,
    ],
    [
      'cluster agent with agent_hostname',
      enrollmentHeaders('enroll'),
      () =>
        bodyWith((_, a) => {
          a['agent_hostname'] = 'h';
        }, 'cluster_agent'),
      /agent_hostname must be absent for agent_flavor cluster_agent/,
    ],
  ];

  it.each(cases)('%s', async (_name, h, body, detail) => {
    const answer = await enroll(h, body());
    expect(answer.status).toBe(400);
    expect(
      details(answer).some((d) => detail.test(d)),
      `details were: ${details(answer).join(' | ')}`,
    ).toBe(true);
    expect(emu.runners).toHaveLength(0);
  });

  it('answers with JSON:API error objects pointing at the field', async () => {
    const answer = await enroll(
      enrollmentHeaders('enroll'),
      bodyWith((_, a) => {
        a['runner_name'] = '';
      }),
    );
    expect(answer.json).toEqual({
      errors: [
        {
          status: '400',
          title: 'Bad Request',
          detail: 'runner_name must be a non-empty string',
          source: { pointer: '/data/attributes/runner_name' },
        },
      ],
    });
  });

  it('reports every problem at once', async () => {
    const h = headers((x) => {
      x['Accept'] = 'text/html';
    });
    const answer = await enroll(
      h,
      bodyWith((_, a) => {
        a['runner_modes'] = [];
        a['runner_name'] = '';
      }),
    );
    expect(details(answer)).toHaveLength(3);
  });

  it('records why a request was rejected', async () => {
    await enroll(
      enrollmentHeaders('enroll'),
      bodyWith((_, a) => {
        a['runner_host'] = 3;
      }),
    );
    expect(emu.requests[0]!.status).toBe(400);
    expect(emu.requests[0]!.detail).toMatch(/runner_host must be a string/);
  });

  it('checks that the test key really is P-256 and accepted unchanged (guards the cases above)', () => {
    expect(createPublicKey(keys.publicKeyPem).asymmetricKeyDetails?.namedCurve).toBe('prime256v1');
  });
});

describe('body size', () => {
  it(`answers 413 to a body over ${MAX_REQUEST_BODY_BYTES} bytes and records its size`, async () => {
    const big = bodyWith((_, a) => {
      a['runner_host'] = 'x'.repeat(MAX_REQUEST_BODY_BYTES);
    });
    const answer = await enroll(enrollmentHeaders('enroll'), big);
    expect(answer.status).toBe(413);
    expect(emu.runners).toHaveLength(0);
    expect(emu.requests[0]!.bodyBytes).toBe(Buffer.byteLength(big));
    expect(emu.requests[0]!.body.length).toBe(MAX_REQUEST_BODY_BYTES);
  });

  it('accepts a body just under the limit (only size decides the 413)', async () => {
    const base = bodyWith((_, a) => {
      a['runner_host'] = '';
    });
    const pad = MAX_REQUEST_BODY_BYTES - Buffer.byteLength(base);
    const body = bodyWith((_, a) => {
      a['runner_host'] = 'x'.repeat(pad);
    });
    expect(Buffer.byteLength(body)).toBe(MAX_REQUEST_BODY_BYTES);
    expect((await enroll(enrollmentHeaders('enroll'), body)).status).toBe(200);
  });
});

describe('routing', () => {
  it('answers 405 to GET on the enrollment route', async () => {
    const res = await request(`${emu.url}${ROUTE_PATHS.enroll}`, { method: 'GET' });
    await res.body.dump();
    expect(res.statusCode).toBe(405);
    expect(res.headers['allow']).toBe('POST');
  });

  it('answers 404 to a path with a trailing slash', async () => {
    const answer = await enroll(enrollmentHeaders('enroll'), undefined, `${ROUTE_PATHS.enroll}/`);
    expect(answer.status).toBe(404);
    expect(emu.requests[0]!.route).toBeNull();
  });
});
