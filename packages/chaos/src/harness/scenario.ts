import type { ChaosProfile } from "../profile";
import type { InvariantReport } from "./invariants";

/** What a scenario gets from the suite. */
export interface ScenarioContext {
  /** The database the scenario creates its schema in (scenario 3 starts its own server instead). */
  readonly connectionString: string;
  readonly profile: ChaosProfile;
  /** Seeded random numbers in [0, 1): victims, fates, timings. */
  readonly random: () => number;
  /** A progress line. */
  readonly log: (line: string) => void;
}

/** What a scenario measured, before the suite adds its number, title and duration. */
export interface ScenarioOutcome {
  readonly jobs: number;
  /** What was injected, e.g. `32 × SIGKILL`. */
  readonly faults: string;
  readonly lost: number;
  /** Second terminal transitions, runs after finish, effects or ledger rows beyond one per job. */
  readonly duplicates: number;
  /** Handler runs beyond the first per job (allowed where the scenario says so). */
  readonly reExecutions: number;
  readonly verdict: Verdict;
}

/** One row of the table. */
export interface ScenarioResult extends Omit<ScenarioOutcome, "verdict"> {
  readonly id: number;
  readonly title: string;
  readonly passed: boolean;
  /** Why it failed, one sentence each. */
  readonly failures: readonly string[];
  /** The scenario's own figures, one short phrase each. */
  readonly figures: readonly string[];
  readonly durationMs: number;
}

/** A scenario of the suite. */
export interface Scenario {
  readonly id: number;
  readonly title: string;
  /** What it proves, one sentence (the README's table). */
  readonly claim: string;
  run(context: ScenarioContext): Promise<ScenarioOutcome>;
}

/** Collects a scenario's checks and figures. */
export class Verdict {
  readonly failures: string[] = [];
  readonly figures: string[] = [];

  /** Records `sentence` as a failure unless `ok`. */
  check(ok: boolean, sentence: string): void {
    if (!ok) this.failures.push(sentence);
  }

  /** Records a figure for the report, e.g. `effects applied 10000/10000`. */
  note(figure: string): void {
    this.figures.push(figure);
  }

  /** Adds the invariant violations (and the idle-in-transaction backends seen at quiescence). */
  invariants(report: InvariantReport, idleInTransaction: readonly string[]): void {
    this.failures.push(...report.violations);
    this.check(idleInTransaction.length === 0, `stint backends left idle in transaction: ${idleInTransaction.join(", ")}`);
  }
}
