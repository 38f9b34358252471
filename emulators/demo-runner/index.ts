export { type DemoRunner, startDemoReplicas, startDemoRunner } from './demo-runner.js';
