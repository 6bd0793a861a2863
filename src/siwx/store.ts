/** Where sign-in remembers the routes each wallet paid for: a small async key-value store. */

/**
 * Any async key-value store: memory by default, or one shared by processes (Redis `GET`/`SET`, a
 * file). Keys are `<origin><path> <payer>` (0x addresses lower-cased); values the network paid on.
 */
export interface SignInStore {
  get(key: string): Promise<string | undefined | null> | string | undefined | null;
  set(key: string, value: string): Promise<unknown> | unknown;
}

/** How many routes the default memory keeps; past that, the least recently paid are forgotten. */
export const MEMORY_STORE_ENTRIES = 10_000;

/** The default: this process's memory, bounded. */
export function memoryStore(limit = MEMORY_STORE_ENTRIES): SignInStore {
  const entries = new Map<string, string>();
  return {
    get: (key) => entries.get(key),
    set(key, value) {
      entries.delete(key);
      entries.set(key, value);
      if (entries.size > limit) entries.delete(entries.keys().next().value!);
    },
  };
}

/** The key of a route (origin and path: the query is not part of it, as servers record it) and a payer. */
export function paidKey(url: string, payer: string): string {
  const { origin, pathname } = new URL(url);
  return `${origin}${pathname} ${/^0x/i.test(payer) ? payer.toLowerCase() : payer}`;
}
