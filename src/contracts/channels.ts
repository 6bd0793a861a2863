/**
 * The kit channel stores are built with (memory in x402-pay/evm, a file in x402-pay/file, Redis in x402-pay/redis):
 * turns per channel within a process, the id and state formats a shared store keeps, and the waits of a lock.
 */
import type { ChannelState } from "./stores";
import { raceAbort, throwIfAborted } from "../errors";

/**
 * Turns on each channel within this process, in arrival order: `line(id, signal)` resolves, with the function that
 * passes the turn on, once every earlier holder has passed it. `signal` stops the wait (`ABORTED`); the turn then
 * passes on as soon as it comes.
 */
export function channelLines(): (id: string, signal?: AbortSignal) => Promise<() => void> {
  /** Per channel: settles when the last holder in line lets go. */
  const lines = new Map<string, Promise<void>>();
  return async (id, signal) => {
    const previous = lines.get(id) ?? Promise.resolve();
    let letGo!: () => void;
    const line = previous.then(() => new Promise<void>((resolve) => (letGo = resolve)));
    lines.set(id, line);
    const leave = () => {
      letGo();
      if (lines.get(id) === line) lines.delete(id);
    };
    try {
      await raceAbort(previous, signal);
    } catch (error) {
      void previous.then(leave);
      throw error;
    }
    return leave;
  };
}

/** A channel id as stores take it: lower-case 32-byte hex (it names files and keys). */
export function checkChannelId(store: string, id: unknown): asserts id is string {
  if (typeof id !== "string" || !/^0x[0-9a-f]{64}$/.test(id))
    throw new TypeError(`${store}: a channel id is 0x and 64 lower-case hex digits.`);
}

/** A stored channel state read back (JSON); what is not one is an error, never taken for a channel not known. */
export function channelStateFrom(store: string, id: string, json: string): ChannelState {
  let value: unknown;
  try {
    value = JSON.parse(json);
  } catch {
    value = undefined;
  }
  const state = value as Record<string, unknown> | undefined;
  const amount = (field: unknown) => typeof field === "string" && /^\d{1,78}$/.test(field);
  const text = (field: unknown) => field === undefined || typeof field === "string";
  if (
    typeof state !== "object" ||
    state === null ||
    !amount(state.balance) ||
    !amount(state.charged) ||
    !amount(state.signed) ||
    !text(state.signature) ||
    !text(state.disputed) ||
    !table(state.owners, (owner) => typeof owner === "string") ||
    !table(state.ended, (end) => end === "charged" || end === "dropped")
  ) {
    throw new Error(`${store}: the stored state of channel ${id} is not a channel state; it was left as it is.`);
  }
  const { balance, charged, signed, signature, disputed, owners, ended } = state as unknown as ChannelState;
  return Object.freeze({
    balance,
    charged,
    signed,
    ...(signature === undefined ? {} : { signature }),
    ...(disputed === undefined ? {} : { disputed }),
    ...(owners === undefined ? {} : { owners }),
    ...(ended === undefined ? {} : { ended }),
  });
}

/** Absent, or an object whose every value passes `valid`. */
const table = (field: unknown, valid: (value: unknown) => boolean) =>
  field === undefined ||
  (typeof field === "object" && field !== null && !Array.isArray(field) && Object.values(field).every(valid));

/** The JSON a store keeps for `state`. */
export const channelStateJson = (state: ChannelState) =>
  JSON.stringify({
    balance: state.balance,
    charged: state.charged,
    signed: state.signed,
    signature: state.signature,
    disputed: state.disputed,
    owners: state.owners,
    ended: state.ended,
  });

/** Waits `ms` (at most), or rejects with `ABORTED` once `signal` fires. */
export function pause(ms: number, signal?: AbortSignal): Promise<void> {
  throwIfAborted(signal);
  let timer: ReturnType<typeof setTimeout> | undefined;
  return raceAbort(new Promise<void>((resolve) => (timer = setTimeout(resolve, ms))), signal).finally(() =>
    clearTimeout(timer),
  );
}

/** Backoff while waiting for another process's lock: grows from 2 ms to 25 ms, jittered. */
export const backoff = (attempt: number) => Math.min(25, 2 * 1.5 ** attempt) * (0.5 + Math.random() / 2);
