// What a command may touch of the outside world. Commands get it as a parameter so unit tests can
// run them without spawning; the e2e tests cover the real process wiring in cli.ts.

export interface Io {
  stdout(text: string): void;
  stderr(text: string): void;
  env: NodeJS.ProcessEnv;
  now(): Date;
  /** stderr is a terminal (progress and colour go there). */
  isTTY: boolean;
  readStdin(): Promise<string>;
}

export function processIo(): Io {
  return {
    stdout: (text) => process.stdout.write(text),
    stderr: (text) => process.stderr.write(text),
    env: process.env,
    now: () => new Date(),
    isTTY: Boolean(process.stderr.isTTY),
    readStdin: async () => {
      if (process.stdin.isTTY) return '';
      const chunks: Buffer[] = [];
      for await (const chunk of process.stdin) chunks.push(chunk as Buffer);
      return Buffer.concat(chunks).toString('utf8');
    },
  };
}
