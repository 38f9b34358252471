export { type DemoCallFailure, type DemoRunner, type DemoRunnerOptions, type DemoRunnerStats, startDemoReplicas, startDemoRunner } from './demo-runner.js';
