import { createServer, type Server } from "node:http";

/** What the probes ask. */
export interface HealthChecks {
  /** Readiness: resolves when the database answers (rejects or times out otherwise). */
  readonly ready: () => Promise<void>;
  /** `GET /metrics`: the Prometheus exposition; without it, `/metrics` answers 404. */
  readonly metrics?: () => Promise<{ readonly contentType: string; readonly body: string }>;
}

/**
 * A tiny HTTP server for Kubernetes probes: `GET /healthz` answers 200 while
 * the process (and its event loop) is alive; `GET /readyz` answers 200 when
 * the database answers within `timeoutMs`, 503 otherwise; `GET /metrics`
 * serves `checks.metrics` when given (500 with the reason when it fails).
 *
 * @example
 * ```ts
 * const health = await startHealthServer(8080, { ready: () => store.ping() });
 * // …
 * await health.close();
 * ```
 */
export async function startHealthServer(port: number, checks: HealthChecks, timeoutMs = 2_000): Promise<{ readonly port: number; close(): Promise<void> }> {
  const server: Server = createServer((request, response) => {
    const reply = (status: number, body: string): void => {
      response.writeHead(status, { "content-type": "text/plain; charset=utf-8" }).end(`${body}\n`);
    };
    if (request.url === "/healthz") return reply(200, "ok");
    if (request.url === "/metrics" && checks.metrics !== undefined) {
      checks.metrics().then(
        (page) => response.writeHead(200, { "content-type": page.contentType }).end(page.body),
        (error: unknown) => reply(500, `metrics failed: ${error instanceof Error ? error.message : String(error)}`),
      );
      return;
    }
    if (request.url !== "/readyz") return reply(404, "not found");
    let timer: NodeJS.Timeout | undefined;
    const timeout = new Promise<never>((_, reject) => {
      timer = setTimeout(() => reject(new Error(`no answer within ${timeoutMs} ms`)), timeoutMs);
    });
    Promise.race([checks.ready(), timeout])
      .then(
        () => reply(200, "ready"),
        (error: unknown) => reply(503, `not ready: ${error instanceof Error ? error.message : String(error)}`),
      )
      .finally(() => clearTimeout(timer));
  });
  await new Promise<void>((resolve, reject) => {
    server.once("error", reject);
    server.listen(port, () => resolve());
  });
  const address = server.address();
  return {
    port: typeof address === "object" && address !== null ? address.port : port,
    close: () => new Promise<void>((resolve) => server.close(() => resolve())),
  };
}
