/** The default channel store: memory, one holder per channel at a time, in arrival order. */
import type { ChannelHold, ChannelState, ChannelStore } from "../../contracts";
import { raceAbort } from "../../errors";

/**
 * Channels kept in this process's memory: lost on restart (batch-settlement then recovers them from the chain
 * and the seller's corrective 402). Payments on one channel take turns; on different channels they run at once.
 */
export function memoryChannelStore(): ChannelStore {
  const states = new Map<string, ChannelState>();
  /** Per channel: settles when the last holder in line lets go. */
  const lines = new Map<string, Promise<void>>();
  return {
    async peek(id) {
      return states.get(id);
    },
    async hold(id, signal) {
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
        // Given up while waiting: the turn passes on as soon as it comes.
        void previous.then(leave);
        throw error;
      }
      return holdOf(states, id, leave);
    },
  };
}

/** A hold on channel `id` of `states`; `leave` passes the turn on. */
function holdOf(states: Map<string, ChannelState>, id: string, leave: () => void): ChannelHold {
  let held = true;
  return {
    state: states.get(id),
    async save(state) {
      if (!held) throw new Error(`The hold on channel ${id} was released before its state was saved.`);
      if (state === undefined) states.delete(id);
      else states.set(id, Object.freeze({ ...state }));
    },
    async release() {
      if (held) leave();
      held = false;
    },
  };
}
