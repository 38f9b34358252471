import type { ParError } from '../errors.js';
import type { Io } from '../io.js';
import { HELM_SECRET_NAME } from '../kube/secret-target.js';
import { type OutputOptions, type Reporter, SCHEMA_VERSION } from '../output.js';
import { eventToJson, type WatchEvent } from '../reload/index.js';
import { maskHeldSecrets } from '../secrets-held.js';
import { isoString } from '../time/index.js';

// Events go to stderr as log lines, or to stdout as JSON lines with --json; neither ever carries key
// material: a server's words in them have every secret held masked (the reporter masks the lines).

/** Log lines on stderr, or JSON lines on stdout: one function per event so both stay in step. */
export function eventWriter(io: Io, options: OutputOptions, report: Reporter, secretName: string) {
  const stamp = () => isoString(io.now());
  const json = (payload: Record<string, unknown>) =>
    io.stdout(`${maskHeldSecrets(JSON.stringify({ schemaVersion: SCHEMA_VERSION, ...payload }))}\n`);
  const describe = (e: WatchEvent): { level: 'info' | 'warn'; text: string } | undefined => {
    const kept = (fp: string | undefined) => (fp ? `keeping identity ${fp}` : 'no identity loaded yet');
    switch (e.type) {
      case 'loaded':
        return e.reason === 'initial'
          ? { level: 'info', text: `loaded identity ${e.urn} (fingerprint ${e.fingerprint}, resourceVersion ${e.resourceVersion})` }
          : {
              level: 'info',
              text:
                `reloaded: ${e.changed.join(' and ')} changed → ${e.urn} (fingerprint ${e.fingerprint}, was ${e.previousFingerprint}; ` +
                `resourceVersion ${e.resourceVersion}${e.splayMs ? `, after ${e.splayMs} ms splay` : ''})`,
            };
      case 'rejected':
        return {
          level: 'warn',
          text: `resourceVersion ${e.resourceVersion} of the Secret holds an invalid identity (${e.error.message}); not applied, ${kept(e.keptFingerprint)}`,
        };
      case 'deleted':
        return { level: 'warn', text: `the Secret was deleted; ${kept(e.keptFingerprint)}` };
      case 'missing': {
        const helm =
          secretName === HELM_SECRET_NAME
            ? ''
            : ` (Helm and the Operator name it ${HELM_SECRET_NAME}: pass --secret-name if that is the one)`;
        return { level: 'warn', text: `the Secret does not exist; ${kept(e.keptFingerprint)}, waiting for it${helm}` };
      }
      case 'listed':
        return e.reason === 'start'
          ? undefined
          : { level: 'info', text: `re-listed the Secret (${e.reason}), resourceVersion ${e.resourceVersion}` };
      case 'watch-error':
        return { level: 'warn', text: `${e.error.message} (attempt ${e.attempt}); ${e.error.hint}` };
      case 'ignored':
        return { level: 'warn', text: `ignored ${e.reason}; ${kept(e.keptFingerprint)}` };
    }
  };
  return {
    event(e: WatchEvent) {
      if (options.json) return json(eventToJson(e));
      const line = describe(e);
      if (line) report[line.level](`${stamp()} ${line.text}`);
    },
    note(event: string, fields: Record<string, unknown>, text: string) {
      if (options.json) json({ event, time: isoString(io.now()), ...fields });
      else report.info(`${stamp()} ${text}`);
    },
    failure(event: string, err: ParError, fields: Record<string, unknown> = {}) {
      if (options.json)
        json({ event, time: isoString(io.now()), error: { code: err.code, message: err.message, hint: err.hint }, ...fields });
      else report.warn(`${stamp()} ${err.message}; ${err.hint}`);
    },
  };
}

export type EventWriter = ReturnType<typeof eventWriter>;
