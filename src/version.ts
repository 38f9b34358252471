declare const __PAR_VERSION__: string | undefined;
declare const __PAR_COMMIT__: string | undefined;

/** Injected by the bundler from package.json; tests running the sources see the dev marker. */
export const VERSION: string = typeof __PAR_VERSION__ === 'string' ? __PAR_VERSION__ : '0.0.0-dev';

/** The git commit the bundle was built from, stamped by the bundler; "unknown" when not built in a checkout. */
export const COMMIT: string = typeof __PAR_COMMIT__ === 'string' ? __PAR_COMMIT__ : 'unknown';
