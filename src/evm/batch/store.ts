/** The default channel store (memory); the shared ones (`x402-pay/file`, `x402-pay/redis`) use the same kit. */
import { channelLines, type ChannelHold, type ChannelState, type ChannelStore } from "../../contracts";

/**
 * Channels kept in this process's memory: lost on restart (batch-settlement then recovers them from the chain
 * and the seller's corrective 402). Payments on one channel take turns; on different channels they run at once.
 */
export function memoryChannelStore(): ChannelStore {
  const states = new Map<string, ChannelState>();
  const line = channelLines();
  return {
    async peek(id) {
      return states.get(id);
    },
    async hold(id, signal) {
      const leave = await line(id, signal);
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
      } satisfies ChannelHold;
    },
  };
}
