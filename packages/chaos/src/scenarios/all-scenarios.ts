import type { Scenario } from "../harness/scenario";
import { concurrentDedupe } from "./concurrent-dedupe";
import { connectionBlackHole } from "./connection-black-hole";
import { connectionKills } from "./connection-kills";
import { eventLoopBlock } from "./event-loop-block";
import { fullBufferShutdown } from "./full-buffer-shutdown";
import { gracefulShutdown } from "./graceful-shutdown";
import { groupKills } from "./group-kills";
import { lonePause } from "./lone-worker-pause";
import { longHandler } from "./long-handler";
import { malformedPayloads } from "./malformed-payloads";
import { poisonJob } from "./poison-job";
import { retryTiming } from "./retry-timing";
import { serverRestarts } from "./server-restarts";
import { standbyDown } from "./standby-down";
import { transactionalCompletion } from "./transactional-completion";
import { transactionalEnqueue } from "./transactional-enqueue";
import { workerKills } from "./worker-kills";
import { workflowKills } from "./workflow-kills";

/** The scenarios, in order. */
export const ALL_SCENARIOS: readonly Scenario[] = Object.freeze([
  workerKills,
  connectionKills,
  serverRestarts,
  longHandler,
  eventLoopBlock,
  gracefulShutdown,
  poisonJob,
  malformedPayloads,
  concurrentDedupe,
  transactionalEnqueue,
  transactionalCompletion,
  retryTiming,
  connectionBlackHole,
  lonePause,
  fullBufferShutdown,
  standbyDown,
  groupKills,
  workflowKills,
]);
