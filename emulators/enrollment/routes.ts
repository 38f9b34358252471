/**
 * The emulated Datadog endpoints: enrollment (docs/protocol.md §3), the health check (docs/protocol.md §7),
 * connections (docs/protocol.md §12) and the key checks (docs/protocol.md §13).
 */

export type Route = 'enroll' | 'enroll_api_key_only' | 'health' | 'validate' | 'validate_keys' | 'connections';

const ROUTES: readonly Route[] = ['enroll', 'enroll_api_key_only', 'health', 'validate', 'validate_keys', 'connections'];

export const ROUTE_PATHS: Readonly<Record<Route, string>> = {
  enroll: '/api/unstable/on_prem_runners',
  enroll_api_key_only: '/api/unstable/on_prem_runners/api_key_only',
  health: '/api/v2/on-prem-management-service/runner/health-check',
  validate: '/api/v1/validate',
  validate_keys: '/api/v2/validate_keys',
  connections: '/api/v2/actions/connections',
};

export const ROUTE_METHODS: Readonly<Record<Route, string>> = {
  enroll: 'POST',
  enroll_api_key_only: 'POST',
  health: 'GET',
  validate: 'GET',
  validate_keys: 'GET',
  connections: 'POST',
};

/** Exact path match: the real API does not treat a trailing slash or a different case as the same route. */
export function routeForPath(path: string): Route | null {
  for (const route of ROUTES) {
    if (ROUTE_PATHS[route] === path) return route;
  }
  return null;
}

export function isRoute(value: unknown): value is Route {
  return typeof value === 'string' && (ROUTES as readonly string[]).includes(value);
}
