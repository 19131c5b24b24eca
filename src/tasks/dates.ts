/**
 * Date arithmetic in the proleptic Gregorian calendar (UTC, no time zones). Difficulty 1..5 sets
 * the largest day offset (7, 30, 365, 3650, 36500 days) and widens the year range (from
 * 2000-2030 at difficulty 1 to 1700-2300 at 5). Each example asks one of:
 *
 * - `weekday-offset`: "Today is a Tuesday. What day of the week is it 45 days from now?"
 * - `date-offset`:    "What date is 45 days after 2017-03-14?" (or before) → `2017-04-28`
 * - `day-of-week`:    "What day of the week was 2017-03-14?" → `Tuesday`
 *
 * Verifier: weekday answers accept full names or 3-letter abbreviations (case-insensitive; the
 * last weekday named in the answer counts); dates accept `YYYY-MM-DD` or "March 5, 2017" /
 * "5 March 2017" and are compared as calendar dates.
 */
import type { Task, Verdict } from "./types.ts";
import type { Example } from "../core/example.ts";
import type { Rng } from "./rng.ts";
import { checkDifficulty, generateInSplit, type GenerateOptions } from "./split.ts";
import { answerRegion, fail, pass } from "./answer.ts";

const WEEKDAYS = ["Sunday", "Monday", "Tuesday", "Wednesday", "Thursday", "Friday", "Saturday"];
const MONTHS = ["january", "february", "march", "april", "may", "june", "july", "august", "september", "october", "november", "december"];
const MAX_OFFSET = [7, 30, 365, 3650, 36500];
const YEARS: [number, number][] = [[2000, 2030], [1990, 2040], [1950, 2050], [1900, 2100], [1700, 2300]];
const DAY_MS = 86400000;

/** The question kinds. */
export type DateKind = "weekday-offset" | "date-offset" | "day-of-week";

/** Date instance data kept in `Example.meta`. */
export interface DateMeta {
  kind: DateKind;
  /** The correct answer: a weekday name or YYYY-MM-DD. */
  expected: string;
  [k: string]: unknown;
}

/** Format a day number (days since 1970-01-01) as YYYY-MM-DD (years 0000..9999). */
export function formatDay(day: number): string {
  const d = new Date(day * DAY_MS);
  const y = String(d.getUTCFullYear()).padStart(4, "0");
  return `${y}-${String(d.getUTCMonth() + 1).padStart(2, "0")}-${String(d.getUTCDate()).padStart(2, "0")}`;
}

/** Days since 1970-01-01 of a calendar date; null when the date does not exist (e.g. 2021-02-30). */
export function dayOf(y: number, m: number, d: number): number | null {
  const t = new Date(0);
  t.setUTCFullYear(y, m - 1, d);
  if (t.getUTCFullYear() !== y || t.getUTCMonth() !== m - 1 || t.getUTCDate() !== d) return null;
  return Math.round(t.getTime() / DAY_MS);
}

/** Weekday name (Sunday..Saturday) of a day number. */
export function weekdayOf(day: number): string {
  return WEEKDAYS[(((day + 4) % 7) + 7) % 7]!; // 1970-01-01 was a Thursday
}

/** Parse the last date in a text (ISO or "March 5, 2017" / "5 March 2017"); returns a day number or null. */
export function parseDate(text: string): number | null {
  const found: { at: number; day: number | null }[] = [];
  for (const m of text.matchAll(/\b(\d{4})-(\d{1,2})-(\d{1,2})\b/g)) found.push({ at: m.index!, day: dayOf(+m[1]!, +m[2]!, +m[3]!) });
  for (const m of text.matchAll(/\b([A-Za-z]+)\.?\s+(\d{1,2})(?:st|nd|rd|th)?,?\s+(\d{4})\b/g)) {
    const mi = MONTHS.findIndex((x) => x.startsWith(m[1]!.toLowerCase()) && m[1]!.length >= 3);
    if (mi >= 0) found.push({ at: m.index!, day: dayOf(+m[3]!, mi + 1, +m[2]!) });
  }
  for (const m of text.matchAll(/\b(\d{1,2})(?:st|nd|rd|th)?\s+([A-Za-z]+)\.?,?\s+(\d{4})\b/g)) {
    const mi = MONTHS.findIndex((x) => x.startsWith(m[2]!.toLowerCase()) && m[2]!.length >= 3);
    if (mi >= 0) found.push({ at: m.index!, day: dayOf(+m[3]!, mi + 1, +m[1]!) });
  }
  if (found.length === 0) return null;
  found.sort((a, b) => a.at - b.at);
  return found[found.length - 1]!.day;
}

/** The last weekday named in a text (full name or 3-letter abbreviation), or null. */
export function parseWeekday(text: string): string | null {
  const ms = [...text.matchAll(/\b(sun|mon|tue|wed|thu|fri|sat)[a-z]*\b/gi)];
  for (let i = ms.length - 1; i >= 0; i--) {
    const w = ms[i]![0].toLowerCase();
    const full = WEEKDAYS.find((d) => d.toLowerCase() === w || d.toLowerCase().slice(0, 3) === w || (w.length > 3 && d.toLowerCase().startsWith(w) && w.length >= 4));
    if (full) return full;
  }
  return null;
}

/** Verify a response to a date question. Never throws. */
export function verifyDates(response: string, meta: DateMeta): Verdict {
  const region = answerRegion(response);
  if (region === null) return fail("no answer found");
  if (meta.kind === "date-offset") {
    const day = parseDate(region);
    if (day === null) return fail("no valid date found", region);
    const got = formatDay(day);
    return got === meta.expected ? pass(got) : fail(`wrong date (expected ${meta.expected})`, got);
  }
  const w = parseWeekday(region);
  if (w === null) return fail("no weekday found", region);
  return w === meta.expected ? pass(w) : fail(`wrong weekday (expected ${meta.expected})`, w);
}

/** Build the date arithmetic task. */
export function createDatesTask(opts: { kind?: DateKind; name?: string } = {}): Task {
  const name = opts.name ?? "dates";
  const make = (rng: Rng, d: number) => {
    const kind = opts.kind ?? rng.pick<DateKind>(["weekday-offset", "date-offset", "day-of-week"]);
    const [y0, y1] = YEARS[d - 1]!;
    const lo = dayOf(y0, 1, 1)!, hi = dayOf(y1, 12, 31)!;
    const base = rng.int(lo, hi);
    const offset = rng.int(1, MAX_OFFSET[d - 1]!);
    let prompt: string;
    let expected: string;
    if (kind === "weekday-offset") {
      prompt = `Today is a ${weekdayOf(base)}. What day of the week is it ${offset} day${offset === 1 ? "" : "s"} from now?`;
      expected = weekdayOf(base + offset);
    } else if (kind === "day-of-week") {
      prompt = `What day of the week is ${formatDay(base)}?`;
      expected = weekdayOf(base);
    } else {
      const before = rng.chance(0.5);
      prompt = `What date is ${offset} day${offset === 1 ? "" : "s"} ${before ? "before" : "after"} ${formatDay(base)}? Answer as YYYY-MM-DD.`;
      expected = formatDay(before ? base - offset : base + offset);
    }
    prompt += " Put the answer in <answer></answer>.";
    const meta: DateMeta = { kind, expected };
    return { prompt, answer: expected, solution: `<answer>${expected}</answer>`, meta };
  };
  return {
    name,
    difficulties: {
      min: 1,
      max: 5,
      default: 2,
      description: "largest day offset 7/30/365/3650/36500 and year range 2000-2030 ... 1700-2300 for levels 1..5",
    },
    generate(g: GenerateOptions): Example {
      checkDifficulty(name, g.difficulty, 1, 5);
      return generateInSplit(name, g, (rng) => make(rng, g.difficulty));
    },
    verify(response: string, example: Example): Verdict {
      const meta = example.meta as DateMeta | undefined;
      if (!meta || typeof meta.expected !== "string") return fail("example has no dates meta");
      return verifyDates(response, meta);
    },
  };
}

/** Date arithmetic (weekday offsets, date offsets, day of week); difficulty 1..5. */
export const datesTask: Task = createDatesTask();
