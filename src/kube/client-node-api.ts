// The parts of @kubernetes/client-node the product runs, and only these: its generated API classes
// and what they need to be fed by our transport (kube-clients.ts). The build makes this file the
// library's module of its own (scripts/build.mjs, LAZY_LIBRARIES), every client-node file marked free
// of side effects, so the bundle holds these and what they reach, not KubeConfig, its authenticators,
// undici, ws or client-node's YAML parser (docs/kubernetes-client.md). Product code imports it with
// import() only; a name used elsewhere must be added here.
export {
  AppsV1Api,
  CoreV1Api,
  EventsV1Api,
  PolicyV1Api,
  ResponseContext,
  ServerConfiguration,
} from '@kubernetes/client-node/dist/gen/index.js';
export { Observable } from '@kubernetes/client-node/dist/gen/rxjsStub.js';
export { setHeaderOptions } from '@kubernetes/client-node/dist/middleware.js';
export { PatchStrategy } from '@kubernetes/client-node/dist/patch.js';
