import { formatCount } from "../html/format";

/**
 * The sentence shown after an action, from the fields of the redirect
 * that followed it (`done`, `n`, `queue`); `undefined` for anything else.
 * Only fixed sentences: a crafted link cannot put arbitrary words there
 * beyond a number and a queue name (escaped like all text).
 */
export function flashMessage(query: URLSearchParams): string | undefined {
  const queue = query.get("queue") ?? "";
  const count = Number(query.get("n") ?? "0");
  switch (query.get("done")) {
    case "retried":
      return "The job is queued to run again now.";
    case "cancelled":
      return "The job is cancelled.";
    case "cancelled-workflow":
      return Number.isSafeInteger(count) ? `The workflow is cancelled: ${formatCount(count)} ${count === 1 ? "step" : "steps"} cancelled.` : undefined;
    case "ran-now":
      return "The job is due now: the next free worker runs it.";
    case "paused":
      return `Paused queue ${queue}: running jobs finish, no new ones start.`;
    case "resumed":
      return `Resumed queue ${queue}.`;
    case "retried-dead":
      return Number.isSafeInteger(count) ? `${formatCount(count)} dead ${count === 1 ? "job" : "jobs"} of ${queue} queued to run again now.` : undefined;
    case "cancelled-waiting":
      return Number.isSafeInteger(count) ? `${formatCount(count)} waiting ${count === 1 ? "job" : "jobs"} of ${queue} cancelled.` : undefined;
    default:
      return undefined;
  }
}
