import { createServer, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import { createLogger, ExitCode, readLogSettings } from "@stint/core";
import { PostgresJobEvents } from "@stint/postgres-driver";
import { appJobKinds } from "../app/app-job-kind";
import { appModuleOption } from "../app/app-option";
import { configError } from "../cli-error";
import { flagOption, stringOption, type Command, type CommandContext } from "../command";
import { readDashboardSettings } from "../dashboard/dashboard-settings";
import { loadDashboardPackage } from "../dashboard/load-dashboard";
import { logStreamOf } from "../output/log-stream";

// Erased when compiled: the CLI's JavaScript and declarations never name the optional package.
type DashboardPackage = typeof import("@stint/dashboard");

/**
 * `stint dashboard`: serves the web dashboard over the database until
 * interrupted. Refuses to start without a credential unless `--no-auth`,
 * which it allows only on a loopback address; binds to 127.0.0.1 unless
 * told otherwise; without auth it answers only requests naming a loopback
 * host (DNS rebinding), plus `--allowed-hosts`. With `--app`, payloads of the app's job kinds are shown
 * with their `secretFields` redacted; payloads of other queues are hidden
 * unless `--show-payloads`. `@stint/dashboard` is an optional peer
 * dependency of the CLI, loaded only here: without it this command says
 * how to install it (exit 78).
 */
export const dashboardCommand: Command = {
  name: "dashboard",
  summary: "Serve the web dashboard: queues, jobs, attempts, retry, cancel, pause",
  usage: [
    "dashboard [--port 3000] [--host 127.0.0.1] [--token T | --basic-auth USER:PASS | --no-auth] [--read-only] [--base-path /] [--allowed-hosts H,H] [--app MODULE]",
  ],
  args: { min: 0, max: 0 },
  json: false,
  options: {
    port: { type: "string", value: "N", description: "port to listen on (default: 3000; 0 picks a free one)" },
    host: { type: "string", value: "ADDRESS", description: "address to bind (default: 127.0.0.1)" },
    token: { type: "string", value: "T", description: "the token viewers sign in with (default: $STINT_DASHBOARD_TOKEN; at least 16 characters)" },
    "basic-auth": { type: "string", value: "USER:PASS", description: "HTTP basic auth instead of a token" },
    "no-auth": { type: "boolean", description: "no credential at all: allowed only on a loopback address" },
    "read-only": { type: "boolean", description: "hide every action and refuse every POST" },
    "base-path": { type: "string", value: "PATH", description: "serve under this path, e.g. /admin/jobs (default: /)" },
    "allowed-hosts": {
      type: "string",
      value: "H,H",
      description:
        "host names the browser may use to reach the dashboard, by commas (default: $STINT_DASHBOARD_ALLOWED_HOSTS; without it: loopback names with --no-auth, any with a credential)",
    },
    app: { type: "string", value: "MODULE", description: "app module whose job kinds say which payload fields are secret (default: $STINT_APP)" },
    "show-payloads": { type: "boolean", description: "also show payloads of queues the app does not define, unredacted" },
  },
  notes: [
    "Needs the @stint/dashboard package installed beside @stint/cli (the other commands do not): without it,",
    "this command says how to add it (exit 78).",
    "A token on the command line is visible to other users of the machine (ps); prefer $STINT_DASHBOARD_TOKEN.",
    "Without --app (or $STINT_APP) the dashboard cannot know which payload fields are secret, so it hides payloads",
    "unless --show-payloads. Actions are logged to stderr with who did them (STINT_LOG_LEVEL, STINT_LOG_FORMAT).",
    "A request naming a host the dashboard does not answer for gets 421: with --no-auth only localhost, 127.0.0.0/8",
    "and [::1] (any port) are answered, so a web page cannot reach it by pointing its own name at 127.0.0.1 (DNS",
    "rebinding). Behind a proxy or under another name, list the names: --allowed-hosts jobs.example.com.",
    "A sign-in with the token lasts 12 hours (2 without a request) and ends at Sign out; ten wrong tokens",
    "from one address within a minute make it wait for the rest of that minute (429).",
    "",
    "Examples:",
    "  STINT_DASHBOARD_TOKEN=$(openssl rand -hex 24) stint dashboard --app ./dist/stint-app.js",
    "  stint dashboard --no-auth --read-only --port 8080",
  ],
  async run(context) {
    const dashboardPackage = loadDashboardPackage<DashboardPackage>();
    const settings = readDashboardSettings(
      {
        noAuth: flagOption(context, "no-auth"),
        readOnly: flagOption(context, "read-only"),
        ...definedFlags(context),
      },
      dashboardPackage,
    );
    readLogSettings(context.io.env);
    const connection = await context.connect();
    const specifier = appModuleOption(context);
    const jobKinds = specifier === undefined ? [] : await appJobKinds(context, specifier);
    // Open pages update from the job events of every process; behind a transaction pooler LISTEN needs the session URL.
    const events = new PostgresJobEvents({
      connectionString: context.io.env["STINT_SESSION_DATABASE_URL"] ?? connection.target.url,
      schema: connection.schema,
      onError: (error) => context.out.note(`stint: warning: live updates: ${error.message}`),
    });
    try {
      const dashboard = dashboardPackage.createDashboard({
        events,
        db: connection.db,
        schema: context.schema,
        auth: settings.auth,
        readOnly: settings.readOnly,
        basePath: settings.basePath,
        allowedHosts: settings.allowedHosts,
        jobKinds,
        payloads: flagOption(context, "show-payloads") ? "all" : "known-kinds",
        log: createLogger({ stream: logStreamOf(context.io.stderr), env: context.io.env }),
      });
      const server = createServer(dashboard);
      const address = await listen(server, settings.port, settings.host);
      const shown = address.family === "IPv6" ? `[${address.address}]` : address.address;
      const hosts = settings.allowedHosts.length === 0 ? "" : `, hosts ${settings.allowedHosts.join(", ")}`;
      context.out.line(
        `stint dashboard on http://${shown}:${address.port}${dashboard.basePath} (schema "${context.schema}", ${settings.authText}${settings.readOnly ? ", read-only" : ""}${hosts})`,
      );
      if (specifier === undefined && !flagOption(context, "show-payloads")) {
        context.out.note("stint: payloads are hidden: pass --app MODULE so the dashboard knows which fields are secret, or --show-payloads");
      }
      context.out.note("Press Ctrl-C to stop.");
      await untilAborted(context.signal);
      server.closeAllConnections();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    } finally {
      await events.close();
    }
    return ExitCode.Ok;
  },
};

function definedFlags(context: CommandContext) {
  const pick = (option: string) => stringOption(context, option);
  const entries = {
    port: pick("port"),
    host: pick("host"),
    token: pick("token"),
    basicAuth: pick("basic-auth"),
    basePath: pick("base-path"),
    envToken: context.io.env["STINT_DASHBOARD_TOKEN"],
    allowedHosts: pick("allowed-hosts"),
    envAllowedHosts: context.io.env["STINT_DASHBOARD_ALLOWED_HOSTS"],
  };
  return Object.fromEntries(Object.entries(entries).filter(([, value]) => value !== undefined)) as Partial<typeof entries>;
}

function listen(server: Server, port: number, host: string): Promise<AddressInfo> {
  return new Promise((resolve, reject) => {
    server.once("error", (error: NodeJS.ErrnoException) =>
      reject(
        error.code === "EADDRINUSE"
          ? configError(`port ${port} on ${host} is in use: pass another --port`)
          : configError(`cannot listen on ${host}:${port}: ${error.message}`),
      ),
    );
    server.listen(port, host, () => resolve(server.address() as AddressInfo));
  });
}

function untilAborted(signal: AbortSignal): Promise<void> {
  return new Promise((resolve) => {
    if (signal.aborted) return resolve();
    signal.addEventListener("abort", () => resolve(), { once: true });
  });
}
