// Upstream's classification (docs/protocol.md §3): 200 is success, 401/403 are credentials, other 4xx are
// permanent (upstream retries no 4xx at all, 425 Too Early and 408 included), everything else (5xx,
// odd statuses) is worth another try. 429 is the one 4xx retried here, honouring Retry-After: it
// asks for exactly that. Redirects are refused.

// exported for tests: the test's table is typed by it
export type StatusClass = 'ok' | 'credentials' | 'redirect' | 'permanent' | 'retry';

export function classifyStatus(status: number): StatusClass {
  if (status === 200) return 'ok';
  if (status === 401 || status === 403) return 'credentials';
  if (status >= 300 && status < 400) return 'redirect';
  if (status === 429) return 'retry';
  if (status >= 400 && status < 500) return 'permanent';
  return 'retry';
}
