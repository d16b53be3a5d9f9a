import fc from "fast-check";

/** SQL metacharacters and injection attempts; the `stint_fuzz_pwned` objects must never appear. */
const SQL_BITS = [
  "'",
  "''",
  '"',
  '""',
  ";",
  "--",
  "/*",
  "*/",
  "\\",
  "\\'",
  "$$",
  "$x$",
  "%",
  "_",
  "::",
  "' OR '1'='1",
  "'; DROP TABLE jobs; --",
  '"; DROP SCHEMA public CASCADE; --',
  "'); CREATE TABLE stint_fuzz_pwned (x int); --",
  '"; CREATE SCHEMA stint_fuzz_pwned; --',
  "$$; CREATE FUNCTION stint_fuzz_pwned() RETURNS int LANGUAGE sql AS 'SELECT 1'; --",
  "E'\\x27'",
  'U&"\\0061"',
  "\\x00",
  "%s%n",
  "NULL",
  "\\N",
  "\u001a",
];

/** Text that looks harmless and is not: bidi controls, zero-width characters, NUL, lone surrogates, case-mapping traps. */
const UNICODE_BITS = [
  "\u0000",
  "\u202E",
  "\u202D",
  "\u200F",
  "\u200B",
  "\u200D",
  "\uFEFF",
  "\u2028",
  "\u00A0",
  "\u3000",
  "İ",
  "ı",
  "ß",
  "ﬀ",
  "A\u030A",
  "😀",
  "👨‍👩‍👧",
  "\uD800",
  "\uDFFF",
  "\r\n",
  "\t",
  "\u000B",
  " ",
];

/** Names PostgreSQL or stint treat specially, and SQL reserved words. */
const NOTABLE_NAMES = [
  "select",
  "user",
  "table",
  "order",
  "default",
  "public",
  "information_schema",
  "pg_catalog",
  "pg_toast",
  "pg_temp",
  "pg_stint",
  "none",
  "current_user",
  "stint",
  "jobs",
  "migrations",
  "schedules",
  "effects",
  "send-invoice",
];

const whitespace = fc.constantFrom(" ", "\t", "\n", "\r", "\u00A0", "\u200B", "\u3000");
const loneSurrogate = fc.integer({ min: 0xd800, max: 0xdfff }).map((code) => String.fromCharCode(code));
const bit = fc.oneof(fc.constantFrom(...SQL_BITS), fc.constantFrom(...UNICODE_BITS), fc.string({ unit: "binary", maxLength: 4 }), loneSurrogate);

/** A reserved or notable word with some letters upper-cased: `Stint`, `PUBLIC`, `pG_catalog`. */
const caseVariant = fc.tuple(fc.constantFrom(...NOTABLE_NAMES), fc.array(fc.boolean(), { minLength: 20, maxLength: 20 })).map(([word, upper]) =>
  Array.from(word)
    .map((char, index) => (upper[index] ? char.toUpperCase() : char))
    .join(""),
);

/** Strings several kinds of input put in names and data; some are valid names, most are not. */
export function hostileString(): fc.Arbitrary<string> {
  return fc.oneof(
    { weight: 6, arbitrary: fc.array(bit, { minLength: 1, maxLength: 10 }).map((parts) => parts.join("")) },
    { weight: 2, arbitrary: fc.constantFrom(...NOTABLE_NAMES) },
    { weight: 2, arbitrary: caseVariant },
    {
      weight: 2,
      arbitrary: fc.tuple(whitespace, fc.constantFrom(...NOTABLE_NAMES), fc.boolean()).map(([space, word, after]) => (after ? word + space : space + word)),
    },
    { weight: 1, arbitrary: fc.stringMatching(/^pg_[a-z0-9_]{0,12}$/) },
    { weight: 3, arbitrary: fc.stringMatching(/^[a-z_][a-z0-9_]{0,20}$/) },
    { weight: 3, arbitrary: fc.stringMatching(/^[a-z0-9][a-z0-9_.:-]{0,30}$/) },
    { weight: 2, arbitrary: fc.string({ unit: "binary", maxLength: 40 }) },
    {
      weight: 1,
      arbitrary: fc
        .tuple(fc.constantFrom("a", "'", "é", "😀", "\u202E"), fc.constantFrom(63, 64, 128, 129, 200, 512, 513, 5_000, 400_000))
        .map(([char, count]) => char.repeat(count)),
    },
  );
}
