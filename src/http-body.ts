import type { IncomingMessage } from 'node:http';

// The one way a response body is read: in bytes, against a cap the caller chooses, and refused past
// it (the response is destroyed at once, so neither memory nor time goes to the rest). Enrollment,
// the local lookups (agent IPC, cloud metadata, kubelet, docker) and the Kubernetes GETs all read
// bodies through it.

export class ResponseTooLargeError extends Error {
  constructor(
    readonly limit: number,
    what = 'response body',
  ) {
    super(`${what} larger than ${limit} bytes`);
  }
}

/** The body of `res`, or a ResponseTooLargeError once more than `maxBytes` arrived. */
export function readBoundedBody(res: IncomingMessage, maxBytes: number, what?: string): Promise<Buffer> {
  return new Promise((resolve, reject) => {
    const chunks: Buffer[] = [];
    let size = 0;
    res.on('data', (chunk: Buffer) => {
      size += chunk.length;
      if (size > maxBytes) {
        res.removeAllListeners('data');
        res.destroy();
        reject(new ResponseTooLargeError(maxBytes, what));
      } else chunks.push(chunk);
    });
    res.once('end', () => resolve(Buffer.concat(chunks)));
    res.once('error', reject);
    // A response destroyed from elsewhere (an abort, a deadline) ends without 'end': say so.
    res.once('close', () => {
      if (!res.complete) reject(Object.assign(new Error('the response ended before its body was complete'), { code: 'ECONNRESET' }));
    });
  });
}
