import { mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { type RunningCli, startCli } from './run-cli.js';
import { CLUSTER_CONFIG } from './watch-command-fixture.js';
import {
  BINARY_WAIT_MS,
  eventually,
  identityData,
  kubeFixture,
  NAMESPACE,
  newIdentity,
  SECRET,
  type TestIdentity,
} from './watch-fixture.js';

// One run of `par-identity watch` (the BUILT binary) against an apiserver that sends what it should
// not, with every invariant of issue 13 checked: the event is counted (or ignored, for another
// Secret), the identity in service is kept, the watch comes back and applies the next real rotation,
// the command still stops cleanly, and no key reaches stdout or stderr. Shared by the e2e test (one
// assertion per invariant) and the fault matrix (one row per kind of event).

const otherSecret = (type: string) => ({
  type,
  object: {
    kind: 'Secret',
    apiVersion: 'v1',
    metadata: { name: 'someone-else', namespace: NAMESPACE, resourceVersion: '999999' },
    data: identityData(newIdentity()),
  },
});

export interface HostileStreamCase {
  kind: string;
  lines: Array<string | object>;
  /** The error code the watch reports; absent when the events must be ignored instead. */
  code?: string;
}

export const HOSTILE_STREAM_CASES: HostileStreamCase[] = [
  { kind: 'a line that is not JSON', lines: ['this is not json {'], code: 'WATCH_MALFORMED' },
  {
    kind: 'an event of an unknown type',
    lines: [{ type: 'EXPLODED', object: { kind: 'Secret', metadata: { name: SECRET, resourceVersion: '5' } } }],
    code: 'WATCH_MALFORMED',
  },
  {
    kind: 'an event of another kind',
    lines: [
      {
        type: 'MODIFIED',
        object: {
          kind: 'ConfigMap',
          apiVersion: 'v1',
          metadata: { name: SECRET, namespace: NAMESPACE, resourceVersion: '999999' },
          data: {},
        },
      },
    ],
    code: 'WATCH_MALFORMED',
  },
  { kind: 'an event without an object', lines: [{ type: 'ADDED' }], code: 'WATCH_MALFORMED' },
  { kind: 'an event without metadata', lines: [{ type: 'MODIFIED', object: { kind: 'Secret', data: {} } }], code: 'WATCH_MALFORMED' },
  { kind: 'an ERROR event without an object', lines: [{ type: 'ERROR' }], code: 'WATCH_MALFORMED' },
  {
    kind: 'an ERROR event other than 410',
    lines: [
      {
        type: 'ERROR',
        object: {
          kind: 'Status',
          apiVersion: 'v1',
          status: 'Failure',
          code: 500,
          reason: 'InternalError',
          message: 'etcd \u001b[31mexploded\u001b[0m',
        },
      },
    ],
    code: 'KUBE_API_ERROR',
  },
  { kind: 'an event for another Secret', lines: [otherSecret('ADDED'), otherSecret('MODIFIED')] },
];

export interface HostileStreamReport {
  /** Counted as malformed/error (watch restarted), or ignored when it named another Secret. */
  counted: boolean;
  /** The identity in service was not replaced by anything from the bad stream. */
  kept: boolean;
  /** The next valid rotation was applied. */
  recovered: boolean;
  /** SIGTERM still stops it with exit 0 and no unhandled error. */
  stoppedCleanly: boolean;
  /** No private key on stdout or stderr. */
  noKeyInOutput: boolean;
  /** What failed, for the assertion message. */
  notes: string[];
}

const counter = (text: string, name: string) => Number(new RegExp(`^${name}\\{[^}]*\\} (\\d+)`, 'm').exec(text)?.[1] ?? Number.NaN);

function keyForms(id: TestIdentity): string[] {
  return [id.privateKey, Buffer.from(id.privateKey).toString('base64')];
}

const must = (ok: boolean, what: string) => {
  if (!ok) throw new Error(what);
};

export interface WatchingCli extends RunningCli {
  address: string;
  /** stdout JSON lines so far. */
  lines(): Array<Record<string, unknown>>;
  metrics(): Promise<string>;
}

/** Starts `watch --json` with a metrics listener and resolves once it listens. */
export async function startJsonWatch(dir: string, kubeconfig: string, output: string, extra: string[] = []): Promise<WatchingCli> {
  const run = startCli(
    ['watch', '-c', dir, '--kubeconfig', kubeconfig, '--output', output, '--listen', '127.0.0.1:0', '--json', ...extra],
    { env: { PAR_IDENTITY_RETRY_INITIAL_MS: '20', NO_COLOR: '1' } },
  );
  const lines = () =>
    run
      .stdout()
      .split('\n')
      .filter(Boolean)
      .map((l) => JSON.parse(l) as Record<string, unknown>);
  try {
    const address = await eventually(() => {
      const l = lines().find((e) => e.event === 'listening');
      must(l !== undefined, `never listened: ${run.stderr()}`);
      return l!.address as string;
    }, BINARY_WAIT_MS);
    return { ...run, lines, address, metrics: async () => (await fetch(`http://${address}/metrics`)).text() };
  } catch (err) {
    run.child.kill('SIGKILL');
    throw err;
  }
}

export async function runHostileStreamCase(kase: HostileStreamCase): Promise<HostileStreamReport> {
  const kube = await kubeFixture();
  const dir = await mkdtemp(join(tmpdir(), 'par-watch-hostile-'));
  const notes: string[] = [];
  const report: HostileStreamReport = { counted: false, kept: false, recovered: false, stoppedCleanly: false, noKeyInOutput: false, notes };
  const check = async (name: keyof Omit<HostileStreamReport, 'notes'>, body: () => Promise<void> | void) => {
    try {
      await body();
      report[name] = true;
    } catch (err) {
      notes.push(`${name}: ${(err as Error).message}`);
    }
  };
  await writeFile(join(dir, 'datadog-cluster.yaml'), CLUSTER_CONFIG);
  const kubeconfig = join(dir, 'kubeconfig');
  await kube.emu.writeKubeconfig(kubeconfig, { namespace: NAMESPACE });
  const output = join(dir, 'identity.json');
  const first = newIdentity();
  const second = newIdentity();
  kube.create(identityData(first));
  let run: WatchingCli | undefined;
  try {
    run = await startJsonWatch(dir, kubeconfig, output);
    const { lines, metrics } = run;
    await eventually(() => must(lines().filter((l) => l.event === 'written').length === 1, 'first identity not written'), BINARY_WAIT_MS);
    await eventually(() => must(kube.emu.openWatches === 1, 'no watch open'), BINARY_WAIT_MS);
    must(kube.emu.faults.injectWatchLines(...kase.lines) === 1, 'lines not injected into one watch');

    await check('counted', async () => {
      if (!kase.code) {
        await eventually(
          () => must(lines().filter((l) => l.event === 'ignored').length === kase.lines.length, 'events not ignored'),
          BINARY_WAIT_MS,
        );
        must(counter(await metrics(), 'par_watch_ignored_events_total') === kase.lines.length, 'ignored events not counted');
        return;
      }
      const error = await eventually(() => {
        const e = lines().find((l) => l.event === 'watch-error');
        must(e !== undefined, 'no watch-error event');
        return e!.error as { code: string; message: string; hint: string };
      }, BINARY_WAIT_MS);
      must(error.code === kase.code, `code ${error.code}, expected ${kase.code}`);
      must(error.hint.includes('The current identity is kept'), `hint: ${error.hint}`);
      must(!error.message.includes('\u001b'), 'escape sequence in the message');
      const text = await metrics();
      must(counter(text, 'par_watch_restarts_total') >= 1, 'no restart counted');
      if (kase.code === 'WATCH_MALFORMED') must(counter(text, 'par_watch_malformed_events_total') >= 1, 'malformed event not counted');
    });
    await check('kept', async () => {
      must(JSON.parse(await readFile(output, 'utf8')).urn === first.urn, 'the identity in service changed');
      must(lines().filter((l) => l.event === 'loaded').length === 1, 'something else was loaded');
    });
    await check('recovered', async () => {
      kube.update(identityData(second));
      await eventually(() => must(lines().filter((l) => l.event === 'written').length === 2, 'next rotation not written'), BINARY_WAIT_MS);
      must(JSON.parse(await readFile(output, 'utf8')).urn === second.urn, 'next rotation not in the output file');
    });
    await check('stoppedCleanly', async () => {
      run!.child.kill('SIGTERM');
      const exit = await run!.exit;
      must(exit.code === 0 && exit.signal === null, `exit ${JSON.stringify(exit)}: ${run!.stderr()}`);
      must(!/Unhandled|TypeError/.test(run!.stderr()), `stderr: ${run!.stderr()}`);
    });
    await check('noKeyInOutput', () => {
      const all = run!.stdout() + run!.stderr();
      must(![...keyForms(first), ...keyForms(second)].some((k) => all.includes(k)), 'a private key was printed');
    });
  } catch (err) {
    notes.push((err as Error).message);
  } finally {
    run?.child.kill('SIGKILL');
    await kube.close();
    await rm(dir, { recursive: true, force: true });
  }
  return report;
}
