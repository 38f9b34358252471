import { existsSync } from 'node:fs';
import { delimiter } from 'node:path';
import { type KubeconfigData, KubeconfigError, parseKubeconfigFile } from './kubeconfig.js';

// kubectl's rules for a KUBECONFIG list (client-go clientcmd loader.go, ClientConfigLoadingRules.Load):
// paths are split on the OS list separator and de-duplicated, empty entries and missing files are
// skipped, and the FIRST file to define a cluster, user or context name wins it whole (later files
// never add fields to it); current-context is the first non-empty one. Relative paths inside a file
// resolve against that file's directory. A file kubectl cannot load fails the whole list, as in kubectl.

interface KubeconfigFiles {
  /** Files that exist, in precedence order. */
  found: string[];
  /** Listed files that do not exist (kubectl ignores them). */
  missing: string[];
}

export function splitKubeconfigList(value: string): string[] {
  const seen = new Set<string>();
  const out: string[] = [];
  for (const p of value.split(delimiter)) {
    if (!p || seen.has(p)) continue;
    seen.add(p);
    out.push(p);
  }
  return out;
}

export function existingFiles(paths: string[]): KubeconfigFiles {
  const found: string[] = [];
  const missing: string[] = [];
  for (const p of paths) (existsSync(p) ? found : missing).push(p);
  return { found, missing };
}

function firstWins<T extends { name: string }>(lists: T[][]): T[] {
  const byName = new Map<string, T>();
  for (const list of lists) for (const item of list) if (!byName.has(item.name)) byName.set(item.name, item);
  return [...byName.values()];
}

/** Reads every file (relative paths made absolute per file) and merges them as kubectl does. */
export async function loadMerged(files: string[]): Promise<KubeconfigData> {
  const loaded: KubeconfigData[] = [];
  for (const file of files) {
    try {
      loaded.push(await parseKubeconfigFile(file));
    } catch (err) {
      throw new KubeconfigError(`error loading config file "${file}": ${(err as Error).message}`);
    }
  }
  return {
    clusters: firstWins(loaded.map((f) => f.clusters)),
    users: firstWins(loaded.map((f) => f.users)),
    contexts: firstWins(loaded.map((f) => f.contexts)),
    currentContext: loaded.find((f) => f.currentContext)?.currentContext ?? '',
  };
}
