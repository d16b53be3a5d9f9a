import { createJobsMigration } from "./0001-create-jobs";
import { schedulesAndWakeupsMigration } from "./0002-schedules-and-wakeups";
import { effectsMigration } from "./0003-effects";
import { jobsPageRoomMigration } from "./0004-jobs-page-room";
import { attemptHistoryMigration } from "./0005-attempt-history";
import { jobsRowLayoutMigration } from "./0006-jobs-row-layout";
import { queueControlsMigration } from "./0007-queue-controls";
import { jobWaitersMigration } from "./0008-job-waiters";
import { deadHooksMigration } from "./0009-dead-hooks";
import { finishedIndexQueueMigration } from "./0010-finished-index-queue";
import { claimWithoutControlsMigration } from "./0011-claim-without-controls";
import { rowWakeupTriggerMigration } from "./0012-row-wakeup-trigger";
import { scheduleDeclarationsMigration } from "./0013-schedule-declarations";
import { leaderLeasesMigration } from "./0014-leader-leases";
import { finishedJobsMigration } from "./0015-finished-jobs";
import { enqueueFunctionMigration } from "./0016-enqueue-function";
import { jobEventsMigration } from "./0017-job-events";
import { jobLogsMigration } from "./0018-job-logs";
import { browseIndexesMigration } from "./0019-browse-indexes";
import { enqueueFunctionEventsMigration } from "./0020-enqueue-function-events";
import { queueRetentionMigration } from "./0021-queue-retention";
import { enqueueWindowsMigration } from "./0022-enqueue-windows";
import { jobGroupsMigration } from "./0023-job-groups";
import { enqueueFunctionGroupsMigration } from "./0024-enqueue-function-groups";
import { finishedGroupIndexMigration } from "./0025-finished-group-index";
import { workflowsMigration } from "./0026-workflows";
import type { Migration } from "./migration";

/**
 * Every migration, in version order. Append new ones; never edit or reorder.
 *
 * @example
 * ```ts
 * const latest = MIGRATIONS[MIGRATIONS.length - 1].version; // 16
 * ```
 */
export const MIGRATIONS: readonly Migration[] = Object.freeze([
  createJobsMigration,
  schedulesAndWakeupsMigration,
  effectsMigration,
  jobsPageRoomMigration,
  attemptHistoryMigration,
  jobsRowLayoutMigration,
  queueControlsMigration,
  jobWaitersMigration,
  deadHooksMigration,
  finishedIndexQueueMigration,
  claimWithoutControlsMigration,
  rowWakeupTriggerMigration,
  scheduleDeclarationsMigration,
  leaderLeasesMigration,
  finishedJobsMigration,
  enqueueFunctionMigration,
  jobEventsMigration,
  jobLogsMigration,
  browseIndexesMigration,
  enqueueFunctionEventsMigration,
  queueRetentionMigration,
  enqueueWindowsMigration,
  jobGroupsMigration,
  enqueueFunctionGroupsMigration,
  finishedGroupIndexMigration,
  workflowsMigration,
]);
