// Files of the machine itself that the agent's environment detection looks at (docker sockets,
// /etc/ecs/ecs.config, DMI, the Pod's service account). PAR_IDENTITY_HOST_ROOT (test/debug only)
// is a directory standing in for `/` for all of them, so the test suite never sees, nor talks to,
// the docker daemon, the ECS agent or the DMI tables of the machine it runs on.

export function hostPath(env: NodeJS.ProcessEnv, absolutePath: string): string {
  const root = env.PAR_IDENTITY_HOST_ROOT?.trim();
  return root ? `${root.replace(/\/+$/, '')}${absolutePath}` : absolutePath;
}

export const DOCKER_SOCKET = '/var/run/docker.sock';
/** Where the agent's container finds the host's files (its /host mount). */
export const HOST_MOUNT_PREFIX = '/host';
export const ECS_CONFIG_FILE = '/etc/ecs/ecs.config';
export const DMI_DIR = '/sys/devices/virtual/dmi/id';
export const SERVICE_ACCOUNT_TOKEN = '/var/run/secrets/kubernetes.io/serviceaccount/token';
export const SERVICE_ACCOUNT_CA = '/var/run/secrets/kubernetes.io/serviceaccount/ca.crt';
