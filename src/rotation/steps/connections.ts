import { createRunnerConnections } from '../enrollment-context.js';
import type { RotationInput } from '../../command-options.js';
import { need, type Step } from '../run.js';

/** The runner's connections, as the agent creates them after enrolling: best effort, never fatal. */
export const connections: Step<RotationInput> = {
  name: 'connections',
  title: 'create connections',
  async run(r) {
    if (r.spec.options.connections === false) {
      r.connections = { skipped: '--no-connections', created: [], failed: [] };
      return r.report.info('connections: not created (--no-connections)');
    }
    const hostname = need(r.preflight, 'pre-flight').naming.hostname ?? '';
    r.connections = await createRunnerConnections(
      need(r.ctx, 'enrollment context'),
      need(r.resolved, 'target').target.flavor,
      need(r.enrolled, 'enrollment'),
      hostname,
      r.report,
      r.deadline,
    );
  },
  async plan(r) {
    return r.spec.options.connections === false
      ? 'skipped (--no-connections)'
      : "would create the runner's connections the agent creates (per actions_allowlist; a failure is only a warning)";
  },
};
