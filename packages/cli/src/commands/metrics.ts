import { ExitCode } from "@stint/core";
import { DEFAULT_TOP_GROUPS, registerGroupGauges, registerQueueGauges, renderMetrics, startHealthServer } from "@stint/core/internal";
import { MAX_GROUPS_LISTED } from "@stint/core/driver";
import { Registry } from "prom-client";
import { integerValue } from "../args/option-values";
import { stringOption, type Command } from "../command";

/**
 * `stint metrics`: the database gauges of every queue in the Prometheus
 * text format (`stint_jobs{queue,state}`, `stint_jobs_due{queue}`,
 * `stint_queue_oldest_due_age_seconds{queue}`), read with one statement per
 * scrape, and the running jobs of each queue's busiest groups
 * (`stint_group_running_jobs{queue,group}`, at most `--top-groups` a queue). Prints them once, or with `--port` serves them at `/metrics`
 * until stopped, for a scraper that cannot reach the workers. The job
 * counters and histograms come only from the workers' own `/metrics`.
 */
export const metricsCommand: Command = {
  name: "metrics",
  summary: "Print (or serve with --port) the queue gauges in the Prometheus text format",
  usage: ["metrics [--port PORT] [--top-groups N]"],
  args: { min: 0, max: 0 },
  json: false,
  options: {
    port: { type: "string", value: "PORT", description: "serve /metrics (and /healthz, /readyz) on this port until stopped" },
    "top-groups": {
      type: "string",
      value: "N",
      description: `stint_group_running_jobs for at most N groups a queue, those with the most running (0 to ${MAX_GROUPS_LISTED}, default ${DEFAULT_TOP_GROUPS}; 0: none)`,
    },
  },
  notes: [
    "Gauges: stint_jobs{queue,state} (queued, failed, running, dead), stint_jobs_due{queue},",
    "stint_queue_oldest_due_age_seconds{queue}, stint_group_running_jobs{queue,group} (the --top-groups groups of each",
    "queue with the most running jobs). Succeeded and cancelled jobs are not counted.",
    "",
    "Examples:",
    "  stint metrics",
    "  stint metrics --port 9464",
  ],
  async run(context) {
    const portText = stringOption(context, "port");
    const port = portText === undefined ? undefined : integerValue("--port", portText, 0, 65_535);
    const topGroups = integerValue("--top-groups", stringOption(context, "top-groups") ?? String(DEFAULT_TOP_GROUPS), 0, MAX_GROUPS_LISTED);
    const { store } = await context.connect();
    const registry = new Registry();
    registerQueueGauges(registry, store);
    if (topGroups > 0) registerGroupGauges(registry, store, topGroups);
    if (port === undefined) {
      // The exposition ends with a newline already.
      context.io.stdout.write((await renderMetrics(registry)).body);
      return ExitCode.Ok;
    }
    const server = await startHealthServer(port, { ready: () => store.ping(), metrics: () => renderMetrics(registry) });
    context.out.note(`Serving the queue gauges at http://localhost:${server.port}/metrics (stop with Ctrl-C)`);
    await new Promise<void>((resolve) => {
      if (context.signal.aborted) resolve();
      else context.signal.addEventListener("abort", () => resolve(), { once: true });
    });
    await server.close();
    return ExitCode.Ok;
  },
};
