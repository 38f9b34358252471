import type { AgentConfig } from '../config/agent-config.js';

// Typed reads of agent-config keys this module owns, with the Go agent's defaults. Lists come as
// YAML sequences from a file and as space-separated strings from DD_* variables (Viper's
// GetStringSlice), so both are accepted.

export function configNumber(config: AgentConfig, key: string, fallback: number): number {
  const raw = config.getString(key);
  if (raw === undefined) return fallback;
  const value = Number(raw);
  return Number.isFinite(value) ? value : fallback;
}

export function configList(config: AgentConfig, key: string, fallback: string[]): string[] {
  const value = config.get(key);
  if (value === undefined || value === null) return fallback;
  if (Array.isArray(value)) return value.map((v) => String(v).trim()).filter(Boolean);
  if (typeof value === 'string') return value.split(/[\s,]+/).filter(Boolean);
  return fallback;
}

/** A boolean that defaults to false when unset (AgentConfig.getBool reads unknown keys as false too). */
export function configFlag(config: AgentConfig, key: string): boolean {
  return config.getBool(key);
}

/** The agent's default `cloud_provider_metadata`: every provider it knows. */
export const DEFAULT_CLOUD_PROVIDERS = ['aws', 'gcp', 'azure', 'alibaba', 'oracle', 'ibm'];

/** A boolean whose Go default is not false (ec2_use_dmi, autoconfig_from_environment, …). */
export function configFlagOr(config: AgentConfig, key: string, fallback: boolean): boolean {
  const value = config.get(key);
  if (value === undefined || value === null) return fallback;
  return config.getBool(key);
}
