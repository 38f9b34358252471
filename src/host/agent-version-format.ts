// The agent's version format, in a module of its own so the command table can check --agent-version as
// it is parsed without loading the IPC client.

/** N.N.N, optional -pre, optional +build (e.g. 7.66.0+commit.abc1234). */
export const AGENT_VERSION_FORMAT = /^\d+\.\d+\.\d+(-[0-9A-Za-z.-]+)?(\+[0-9A-Za-z.-]+)?$/;
