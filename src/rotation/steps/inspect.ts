import { resolveEndpoint } from '../../config/index.js';
import { KubernetesError, StorageError } from '../../errors.js';
import { rollbackCommandOf } from '../../command-line.js';
import { describeRegionChange, siteRegionOf } from '../region-check.js';
import { need, type Step } from '../run.js';

/** status: an identity must be in service; then the target's own facts (file mode, backup, previous_*, labels, re-enroll). */
export const inspect: Step = {
  name: 'inspect',
  title: "read the target's facts",
  async run(r) {
    const { target } = need(r.resolved, 'target');
    const current = need(r.current, 'current identity');
    if (current.state === 'missing') {
      if (target.kind === 'file') {
        throw new StorageError(
          'IDENTITY_MISSING',
          `no identity file at ${target.where.identityFile}`,
          'Run `par-identity rotate-identity` to enroll one, or point --identity-file/-c at the right place.',
          { path: String(target.where.identityFile) },
        );
      }
      throw new KubernetesError(
        'SECRET_MISSING',
        `${target.label} does not exist`,
        'Rotate to create it, or pass -n/--secret-name (--k8s-secret) for the right one.',
      );
    }
    if (current.state === 'corrupt' || !current.identity) {
      throw new StorageError(
        'IDENTITY_CORRUPT',
        `${target.label} holds no valid identity: ${current.problem?.message ?? 'it does not decode'}`,
        current.previous ? `Restore the previous identity with \`${rollbackCommandOf(target)}\`, or rotate again.` : 'Rotate again.',
        { ...(target.kind === 'file' ? { path: String(target.where.identityFile) } : {}) },
      );
    }
    r.facts = await target.facts(current);
    for (const warning of r.facts.warnings) r.report.warn(warning);
    // The site the agent reads (its config and environment; a keychain site is this tool's alone).
    r.siteRegion = siteRegionOf(resolveEndpoint(need(r.resolved, 'target').config, r.io.env), current.identity);
    if (!r.siteRegion.matchesIdentity)
      r.report.warn(
        `${describeRegionChange(r.siteRegion, current.identity.record.urn)}: ` +
          'a rotation with this site would move the runner (it stops unless --allow-region-change)',
      );
    if (current.unknownFields?.length)
      r.report.warn(
        `${target.label} holds fields this tool does not know (a newer agent's): ${current.unknownFields.join(', ')}; ` +
          'a rotation or rollback stops unless --override-agent-settings',
      );
    r.inService = current.identity;
  },
  async plan(r) {
    await inspect.run(r);
    return 'read only';
  },
};
