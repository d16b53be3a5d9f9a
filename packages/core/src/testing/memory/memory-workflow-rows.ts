/**
 * One workflow as the in-memory store keeps it: the PostgreSQL
 * `workflows` row, with the ids of its steps in id order.
 */
export interface MemoryWorkflowRow {
  /** The id as its decimal text (from a sequence of its own, apart from the jobs'). */
  readonly id: string;
  readonly seq: number;
  readonly name: string;
  readonly createdAt: number;
  /** When an operator cancelled it (the first time), or `null`. */
  cancelledAt: number | null;
  /** Its steps' job ids, in id order (steps a running step adds come last). */
  readonly stepIds: string[];
}

/**
 * A dependency: `dependent` waits for `dependency`. `settled` turns true
 * once, when the dependency's end was counted for the dependent (its
 * success, or its failure when `ignoreFailed`); a dependency that fails
 * leaves the edges of the steps it cancels unsettled, so that retrying it
 * makes them wait for it again.
 */
export interface MemoryEdge {
  readonly dependent: string;
  readonly dependency: string;
  /** The dependent's `ignoreFailedDependencies`. */
  readonly ignoreFailed: boolean;
  settled: boolean;
}
