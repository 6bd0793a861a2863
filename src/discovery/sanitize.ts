/** What a listing shows a person, made safe: text without control or bidirectional characters, https icons, dates. */
// C0 and C1 controls, bidirectional marks and overrides, zero-width characters and the BOM.
// biome-ignore lint/suspicious/noControlCharactersInRegex: control characters are what it removes
const unsafe = /[\u0000-\u001f\u007f-\u009f\u061c\u200b-\u200f\u202a-\u202e\u2060-\u2069\ufeff]/g;

/**
 * Text fit to show a person: unsafe characters gone, whitespace collapsed, at most `max` characters (an ellipsis if
 * cut).
 */
export function sanitize(text: string | undefined, max: number): string | undefined {
  if (text === undefined) return undefined;
  const clean = text
    .slice(0, max * 4)
    .replace(unsafe, " ")
    .replace(/\s+/g, " ")
    .trim();
  const chars = [...clean];
  const cut = chars.length > max ? `${chars.slice(0, max - 1).join("")}…` : clean;
  return cut === "" ? undefined : cut;
}

/** An icon URL fit to load: https, no credentials, at most 2048 characters. */
export function safeIcon(url: string | undefined): string | undefined {
  if (!url || url.length > 2048 || !URL.canParse(url)) return undefined;
  const parsed = new URL(url);
  return parsed.protocol === "https:" && !parsed.username && !parsed.password ? parsed.href : undefined;
}

/**
 * Unix seconds (or milliseconds, when too large for seconds) or an ISO string, as a Date; `undefined` for anything
 * else.
 */
export function toDate(value: unknown): Date | undefined {
  const ms =
    typeof value === "number"
      ? value > 1e11
        ? value
        : value * 1000
      : typeof value === "string" && /^\d{4}-\d{2}-\d{2}/.test(value)
        ? Date.parse(value)
        : NaN;
  return Number.isFinite(ms) && ms > 0 ? new Date(ms) : undefined;
}
