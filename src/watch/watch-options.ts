import type { OutputOptions } from '../output-options.js';
import type { TargetOptions } from '../command-options.js';

// What `watch` is asked to do (types only: the API's declarations name them too).

export interface WatchOptions
  extends OutputOptions,
    Pick<
      TargetOptions,
      'cfgPath' | 'extraCfg' | 'cfgPathGiven' | 'kubeconfig' | 'context' | 'namespace' | 'secretName' | 'agent' | 'overrideAgentSettings'
    > {
  /** Identity file to keep up to date (atomic, 0600, previous kept as .bak). */
  output?: string;
  /** Process to signal after each rotation was written. */
  signalPid?: number;
  /** File holding the pid to signal (read at every signal). */
  pidfile?: string;
  /** Signal for --signal/--pidfile and for --on-change signal: HUP, USR1, … */
  signalName: string;
  /** Command to supervise (everything after --); empty for none. */
  command: string[];
  /** What a rotation does to the supervised command. */
  onChange: 'restart' | 'signal';
  /** Grace period between SIGTERM and SIGKILL when the command is stopped or restarted. */
  killTimeoutSeconds: number;
  /** Random 0…N ms wait before applying a rotation. */
  splayMs: number;
  /** Full re-list period; 0 turns the backstop off. */
  relistIntervalSeconds: number;
  /** ADDR for /healthz, /readyz, /metrics. */
  listen?: string;
  /** /healthz fails after this long without a watch event or list; default 2 × the re-list interval. */
  healthzStaleSeconds?: number;
}
