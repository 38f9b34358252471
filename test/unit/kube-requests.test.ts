import { describe, expect, it } from 'vitest';
import { kubeFailure } from '../../src/kube/index.js';
import { DEFAULT_KUBE_REQUEST_TIMEOUT_MS, KubeRequestTimeout, requestSignal } from '../../src/kube/kube-clients.js';
import { effectiveTimeout } from '../../src/kube/kube-clients.js';
import { type Clock, Deadline } from '../../src/time/index.js';

/** A clock that stands still at 0: a deadline's remaining time is what it was made with. */
const fixed: Clock = { now: () => 0, sleep: async () => undefined };

describe('per-request Kubernetes timeout', () => {
  it('is 30 s by default, overridable, and never beyond what is left of the command deadline', () => {
    expect(DEFAULT_KUBE_REQUEST_TIMEOUT_MS).toBe(30_000);
    expect(effectiveTimeout({})).toEqual({ ms: 30_000, limitedBy: 'request timeout' });
    expect(effectiveTimeout({ requestTimeoutMs: 5_000 })).toEqual({ ms: 5_000, limitedBy: 'request timeout' });
    expect(effectiveTimeout({ deadline: Deadline.after(60_000, fixed) })).toEqual({ ms: 30_000, limitedBy: 'request timeout' });
    expect(effectiveTimeout({ deadline: Deadline.after(1_234.5, fixed) })).toEqual({ ms: 1_234, limitedBy: 'command deadline' });
    expect(effectiveTimeout({ deadline: Deadline.at(-5, fixed) })).toEqual({ ms: 0, limitedBy: 'command deadline' });
  });

  it('a passed deadline aborts at once with KubeRequestTimeout; an outer abort is kept', () => {
    const signal = requestSignal({ deadline: Deadline.after(0) });
    expect(signal.aborted).toBe(true);
    expect(signal.reason).toBeInstanceOf(KubeRequestTimeout);
    const outer = new AbortController();
    const combined = requestSignal({}, outer.signal);
    expect(combined.aborted).toBe(false);
    outer.abort(new Error('interrupted'));
    expect(combined.aborted).toBe(true);
  });
});

describe('kubeFailure', () => {
  it('a timeout (also wrapped by fetch as a cause) is KUBE_TIMEOUT, exit 9, with what was left untouched', () => {
    const wrapped = new TypeError('fetch failed', { cause: new KubeRequestTimeout(30_000, 'request timeout') });
    const err = kubeFailure(wrapped, 'updating Secret ns/x', 'Nothing was changed.');
    expect(err).toMatchObject({
      code: 'KUBE_TIMEOUT',
      exitCode: 9,
      message: 'updating Secret ns/x: no answer from the Kubernetes API within 30 s (request timeout)',
    });
    expect(err.hint).toMatch(/^Nothing was changed\. /);
    // Never more than was left: 4.96 s is said 4.9 s.
    expect(kubeFailure(new KubeRequestTimeout(4_960, 'command deadline'), 'reading Secret ns/x', '').message).toBe(
      'reading Secret ns/x: no answer from the Kubernetes API within 4.9 s (command deadline)',
    );
  });

  it('certificate errors are KUBE_TLS_UNTRUSTED with the CA hint; other socket errors stay KUBE_UNREACHABLE', () => {
    const cert = Object.assign(new Error('self-signed certificate'), { code: 'DEPTH_ZERO_SELF_SIGNED_CERT' });
    const err = kubeFailure(new TypeError('fetch failed', { cause: cert }), 'reading Secret ns/x', 'Nothing was changed.');
    expect(err).toMatchObject({ code: 'KUBE_TLS_UNTRUSTED', exitCode: 9 });
    expect(err.hint).toContain('certificate-authority');
    expect(err.hint).toContain('NODE_EXTRA_CA_CERTS');
    const refused = Object.assign(new Error('connect ECONNREFUSED'), { code: 'ECONNREFUSED' });
    expect(kubeFailure(new TypeError('fetch failed', { cause: refused }), 'x', 'y')).toMatchObject({
      code: 'KUBE_UNREACHABLE',
      details: { errno: 'ECONNREFUSED' },
    });
  });

  it('the apiserver message is sanitised', () => {
    const err = kubeFailure({ code: 500, body: JSON.stringify({ message: 'a\u001b[2Jb\nc\u0000d' }) }, 'x', 'y');
    expect(err.message).toBe('x: HTTP 500 ab c d');
  });
});
