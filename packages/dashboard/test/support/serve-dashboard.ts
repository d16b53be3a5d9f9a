import express from "express";
import { createServer, request as httpRequest, type IncomingHttpHeaders, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import { createTestSchema, type TestSchema } from "@stint/postgres-driver/testing";
import { createDashboard, type DashboardOptions } from "../../src/index";
import { recordingLogger, TEST_TOKEN, type LoggedLine } from "./dashboard-server";

/** How the dashboard is served: by itself on `node:http` (as `stint dashboard` does), or mounted in an Express app under a base path. */
export type ServeMode = "standalone" | "mounted";

/** A dashboard served one way or the other, over a schema of its own. */
export interface ServedDashboard {
  readonly test: TestSchema;
  /** `http://127.0.0.1:<port>` */
  readonly origin: string;
  /** The port, for `Host` headers. */
  readonly port: number;
  /** The base path without a trailing slash: `""` standalone, `"/admin/jobs"` mounted. */
  readonly base: string;
  readonly log: LoggedLine[];
  close(): Promise<void>;
}

/**
 * Serves a dashboard (token auth with {@link TEST_TOKEN} unless
 * `options.auth` says otherwise): standalone at the root, or mounted in
 * Express at `/admin/jobs` beside an app route.
 *
 * @example
 * ```ts
 * const served = await serveDashboard("mounted", { auth: "none" });
 * await send(served, `${served.base}/`, { headers: { host: "localhost" } });
 * ```
 */
export async function serveDashboard(
  mode: ServeMode,
  options: Partial<Omit<DashboardOptions, "db" | "schema" | "connectionString" | "log" | "basePath">> = {},
): Promise<ServedDashboard> {
  const test = await createTestSchema({ prefix: "stint_dash", maxConnections: 4 });
  const log: LoggedLine[] = [];
  const base = mode === "mounted" ? "/admin/jobs" : "";
  const dashboard = createDashboard({
    auth: { token: TEST_TOKEN },
    ...options,
    basePath: base === "" ? "/" : base,
    db: test.db,
    schema: test.schema,
    log: recordingLogger(log),
  });
  let server: Server;
  if (mode === "mounted") {
    const app = express();
    app.get("/health", (_request, response) => void response.send("app ok"));
    app.use(express.urlencoded({ extended: false }));
    app.use(dashboard);
    server = createServer(app);
  } else {
    server = createServer(dashboard);
  }
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  const port = (server.address() as AddressInfo).port;
  return {
    test,
    origin: `http://127.0.0.1:${port}`,
    port,
    base,
    log,
    async close() {
      server.closeAllConnections();
      await new Promise<void>((resolve) => server.close(() => resolve()));
      await test.drop();
    },
  };
}

/** An answer of {@link send}. */
export interface RawAnswer {
  readonly status: number;
  readonly headers: IncomingHttpHeaders;
  readonly body: string;
}

/**
 * One request with exactly the headers given (`fetch` will not send a
 * foreign `Host`), from `localAddress` when given (another loopback
 * address stands for another client).
 */
export function send(
  served: ServedDashboard,
  path: string,
  options: { readonly method?: string; readonly headers?: Readonly<Record<string, string>>; readonly body?: string; readonly localAddress?: string } = {},
): Promise<RawAnswer> {
  return new Promise((resolve, reject) => {
    const outgoing = httpRequest(
      { host: "127.0.0.1", port: served.port, path, method: options.method ?? "GET", headers: options.headers, localAddress: options.localAddress },
      (incoming) => {
        const chunks: Buffer[] = [];
        incoming.on("data", (chunk: Buffer) => chunks.push(chunk));
        incoming.on("end", () => resolve({ status: incoming.statusCode ?? 0, headers: incoming.headers, body: Buffer.concat(chunks).toString("utf8") }));
        incoming.on("error", reject);
      },
    );
    outgoing.on("error", reject);
    outgoing.end(options.body);
  });
}

/** Posts the sign-in form with `token` (and `next`), as the sign-in page does. */
export function signIn(
  served: ServedDashboard,
  token: string,
  options: { readonly next?: string; readonly localAddress?: string; readonly cookie?: string } = {},
): Promise<RawAnswer> {
  const body = new URLSearchParams({ token, next: options.next ?? `${served.base}/` }).toString();
  const headers: Record<string, string> = { "content-type": "application/x-www-form-urlencoded" };
  if (options.cookie !== undefined) headers["cookie"] = options.cookie;
  return send(served, `${served.base}/login`, {
    method: "POST",
    headers,
    body,
    ...(options.localAddress === undefined ? {} : { localAddress: options.localAddress }),
  });
}

/** The `name=value` part of the `Set-Cookie` line for `name`, or `undefined`. */
export function cookieOf(answer: RawAnswer, name: string): string | undefined {
  return (answer.headers["set-cookie"] ?? []).find((line) => line.startsWith(`${name}=`))?.split(";")[0];
}

/** The whole `Set-Cookie` line for `name`, or `undefined`. */
export function setCookieLine(answer: RawAnswer, name: string): string | undefined {
  return (answer.headers["set-cookie"] ?? []).find((line) => line.startsWith(`${name}=`));
}
