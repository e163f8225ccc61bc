import { Agent, request as httpRequest } from 'node:http';

export interface Answer {
  readonly status: number;
  readonly body: string;
  readonly ms: number;
}

/** One client of the closed-loop latency scenario: one keep-alive connection, one request at a time. */
export class Client {
  readonly #agent = new Agent({ keepAlive: true, maxSockets: 1 });

  /**
   * One request. A keep-alive socket the server closed while this user was busy with the other
   * targets (services close idle connections after EGGMESH_HTTP_KEEP_ALIVE_TIMEOUT_MS) fails with
   * ECONNRESET on reuse: that attempt is retried once on a new socket, timed from the retry, as
   * browsers and k6 do.
   */
  async send(url: string, method: string, body?: string): Promise<Answer> {
    try {
      return await this.#once(url, method, body);
    } catch (error) {
      if ((error as { reused?: boolean }).reused) return this.#once(url, method, body);
      throw error;
    }
  }

  #once(url: string, method: string, body?: string): Promise<Answer> {
    const started = performance.now();
    return new Promise((resolve, reject) => {
      const headers: Record<string, string | number> = {};
      if (body !== undefined) {
        headers['content-type'] = 'application/json';
        headers['content-length'] = Buffer.byteLength(body);
      }
      const req = httpRequest(url, { method, agent: this.#agent, headers, timeout: 10_000 }, (res) => {
        const chunks: Buffer[] = [];
        res.on('data', (c: Buffer) => chunks.push(c));
        res.on('end', () =>
          resolve({
            status: res.statusCode ?? 0,
            body: Buffer.concat(chunks).toString('utf8'),
            ms: performance.now() - started,
          }),
        );
        res.on('error', reject);
      });
      req.on('timeout', () => req.destroy(new Error(`timeout: ${method} ${url}`)));
      req.on('error', (error: NodeJS.ErrnoException) => {
        const code = error.code;
        reject(
          req.reusedSocket && (code === 'ECONNRESET' || code === 'EPIPE')
            ? Object.assign(error, { reused: true })
            : error,
        );
      });
      req.end(body);
    });
  }

  close(): void {
    this.#agent.destroy();
  }
}
