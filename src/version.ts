declare const __PAR_VERSION__: string | undefined;

/** Injected by the bundler from package.json; tests running the sources see the dev marker. */
export const VERSION: string = typeof __PAR_VERSION__ === 'string' ? __PAR_VERSION__ : '0.0.0-dev';
