import { EventEmitter } from 'node:events';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { WatchOptions } from '../../src/watch/watch-options.js';
import type { Io } from '../../src/io.js';
import { type KubeFixture, kubeFixture, NAMESPACE } from './watch-fixture.js';

// An agent config directory, a kubeconfig for the emulator, a captured Io and a signal source the
// test fires, for running the `watch` command in-process.

export interface CommandFixture {
  kube: KubeFixture;
  dir: string;
  kubeconfig: string;
  io: Io & { out: string[]; err: string[] };
  signals: EventEmitter;
  options(extra?: Partial<WatchOptions>): WatchOptions;
  /** stdout JSON lines parsed so far. */
  jsonLines(): Array<Record<string, unknown>>;
  close(): Promise<void>;
}

export const CLUSTER_CONFIG = ['private_action_runner:', '  enabled: true', `kube_resources_namespace: ${NAMESPACE}`, ''].join('\n');

export async function commandFixture(config = CLUSTER_CONFIG): Promise<CommandFixture> {
  const kube = await kubeFixture();
  const dir = await mkdtemp(join(tmpdir(), 'par-watch-'));
  await writeFile(join(dir, 'datadog-cluster.yaml'), config);
  const kubeconfig = join(dir, 'kubeconfig');
  await kube.emu.writeKubeconfig(kubeconfig, { namespace: NAMESPACE });
  const out: string[] = [];
  const err: string[] = [];
  const io = {
    out,
    err,
    stdout: (text: string) => void out.push(text),
    stderr: (text: string) => void err.push(text),
    env: { PATH: process.env.PATH, HOME: dir, PAR_IDENTITY_RETRY_INITIAL_MS: '20' },
    now: () => new Date(),
    isTTY: false,
    readStdin: async () => '',
    stdinIsTTY: false,
    promptHidden: async () => '',
  };
  return {
    kube,
    dir,
    kubeconfig,
    io,
    signals: new EventEmitter(),
    options: (extra = {}) => ({
      json: false,
      color: false,
      cfgPath: dir,
      extraCfg: [],
      kubeconfig,
      signalName: 'HUP',
      command: [],
      onChange: 'restart',
      killTimeoutSeconds: 5,
      splayMs: 0,
      relistIntervalSeconds: 600,
      ...extra,
    }),
    jsonLines: () =>
      out
        .join('')
        .split('\n')
        .filter(Boolean)
        .map((line) => JSON.parse(line) as Record<string, unknown>),
    async close() {
      await kube.close();
      await rm(dir, { recursive: true, force: true });
    },
  };
}
