// parse-prometheus-text-format ships no types: the shape it returns, as far as the tests read it.

/** One sample of a counter or gauge, or one series of a histogram. */
export interface ParsedSample {
  readonly labels?: Readonly<Record<string, string>>;
  readonly value?: string;
  readonly count?: string;
  readonly sum?: string;
  readonly buckets?: Readonly<Record<string, string>>;
}

/** One metric family of an exposition. */
export interface ParsedFamily {
  readonly name: string;
  readonly help: string;
  readonly type: "COUNTER" | "GAUGE" | "HISTOGRAM" | "SUMMARY" | "UNTYPED";
  readonly metrics: readonly ParsedSample[];
}

// eslint-disable-next-line @typescript-eslint/no-require-imports -- an untyped CommonJS module, typed by the cast
const parse = require("parse-prometheus-text-format") as (text: string) => ParsedFamily[];

/** An exposition, parsed by a Prometheus text-format parser, with lookups by name and labels. */
export class Exposition {
  readonly families: readonly ParsedFamily[];

  constructor(text: string) {
    this.families = parse(text);
  }

  family(name: string): ParsedFamily | undefined {
    return this.families.find((family) => family.name === name);
  }

  /** The sample of `name` whose labels include `labels`, or `undefined`. */
  sample(name: string, labels: Readonly<Record<string, string>>): ParsedSample | undefined {
    return this.family(name)?.metrics.find((sample) => Object.entries(labels).every(([key, value]) => sample.labels?.[key] === value));
  }

  /** The value of a counter or gauge sample as a number (0 when absent). */
  value(name: string, labels: Readonly<Record<string, string>>): number {
    return Number(this.sample(name, labels)?.value ?? 0);
  }
}
