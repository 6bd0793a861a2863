/**
 * What an author of a scheme, a plug-in and a channel store writes, importing only x402-pay's public entries (as a
 * user would: `x402-pay` and `x402-pay/fetch` resolve through package.json "exports" to dist). test/unit/authors.test.ts
 * type-checks it against dist's declarations (strict, exactOptionalPropertyTypes) and runs it with Node against an msw
 * seller: it prints what happened as one JSON line.
 *
 * The scheme pays "ticket" on a made-up network with a voucher per payment on a channel it keeps in a `ChannelStore`
 * (`open` returns an `OpenPayment`); the plug-in stamps the payload's extension, remembers outcomes in a store and
 * refuses a payee; the store holds channels in a Map.
 */
import {
  createX402Client,
  type ChannelHold,
  type ChannelState,
  type ChannelStore,
  type OpenContext,
  type OpenPayment,
  type PaymentRequirement,
  type PaymentScheme,
  type SettleResponse,
  type SignInStore,
  type X402Plugin,
} from "x402-pay";
import { wrapFetchWithPayment } from "x402-pay/fetch";
import { HttpResponse, http } from "msw";
import { setupServer } from "msw/node";

const NETWORK = "demo:1";
const ASSET = "TICKET";
const SELLER = "https://seller.example/premium";

/** A channel store in memory: one holder per channel at a time. */
export function mapChannelStore(): ChannelStore & { readonly states: Map<string, ChannelState> } {
  const states = new Map<string, ChannelState>();
  const held = new Set<string>();
  return {
    states,
    async hold(id: string): Promise<ChannelHold> {
      if (held.has(id)) throw new Error(`channel ${id} is held`);
      held.add(id);
      let released = false;
      return {
        state: states.get(id),
        async save(state: ChannelState | undefined) {
          if (released) throw new Error("hold lost");
          if (state === undefined) states.delete(id);
          else states.set(id, state);
        },
        async release() {
          released = true;
          held.delete(id);
        },
      };
    },
    async peek(id: string) {
      return states.get(id);
    },
  };
}

/** A scheme that keeps a channel: each payment signs a cumulative voucher on it. */
export function ticketScheme(payer: string, store: ChannelStore): PaymentScheme {
  const channel = `0x${"ab".repeat(32)}`;
  return {
    scheme: "ticket",
    networks: ["demo:*"],
    x402Versions: [2],
    payer,
    knownAssets: [{ network: NETWORK, address: ASSET, decimals: 6, symbol: "TICKET" }],
    check: (requirement: PaymentRequirement) => (requirement.asset === ASSET ? undefined : "not a ticket"),
    createPayload: async () => {
      throw new Error("ticket pays through open()");
    },
    async open(requirement: PaymentRequirement, context: OpenContext): Promise<OpenPayment> {
      const hold = await store.hold(channel, context.signal);
      const before = hold.state ?? { balance: "1000000", charged: "0", signed: "0" };
      const signed = (BigInt(before.signed) + BigInt(requirement.amount)).toString();
      return {
        kind: hold.state ? "voucher" : "deposit",
        channel,
        ...(hold.state ? {} : { deposit: "1000000" }),
        createPayload: async () => ({ payload: { channel, cumulative: signed, payer } }),
        async accepted(settlement: SettleResponse | undefined) {
          const charged = settlement?.amount ?? requirement.amount;
          await hold.save({ ...before, signed, charged: (BigInt(before.charged) + BigInt(charged)).toString() });
          return { charge: charged, channel: { id: channel, balance: before.balance, charged: signed } };
        },
        refused: async () => false,
        close: () => hold.release(),
      };
    },
  };
}

/** A plug-in: refuses one payee, stamps its extension where the seller declares it, remembers each outcome. */
export function stampPlugin(memory: SignInStore, refused: string): X402Plugin {
  return {
    key: "stamp",
    checkRequirement: (requirement) => (requirement.payTo === refused ? "payee refused by stamp" : undefined),
    enrichPayload: ({ payer }) => ({ info: { by: payer } }),
    async onOutcome(outcome) {
      await memory.set(outcome.request.url, outcome.settled ? outcome.receipt.amount : outcome.error.code);
    },
  };
}

const requirement = (payTo: string) => ({
  scheme: "ticket",
  network: NETWORK,
  amount: "2500",
  asset: ASSET,
  payTo,
  maxTimeoutSeconds: 60,
});

async function main(): Promise<void> {
  const seen: Record<string, unknown>[] = [];
  const server = setupServer(
    http.get(SELLER, ({ request }) => {
      const header = request.headers.get("PAYMENT-SIGNATURE");
      if (!header) {
        const challenge = {
          x402Version: 2,
          accepts: [requirement("0xrefused"), requirement("0xseller")],
          resource: { url: SELLER },
          extensions: { stamp: { info: {} } },
        };
        return new HttpResponse(null, {
          status: 402,
          headers: { "PAYMENT-REQUIRED": btoa(JSON.stringify(challenge)) },
        });
      }
      const payment = JSON.parse(atob(header)) as Record<string, unknown>;
      seen.push(payment);
      const settlement = { success: true, transaction: "0x01", network: NETWORK, payer: "0xbuyer", amount: "2500" };
      return HttpResponse.json({ ok: true }, { headers: { "PAYMENT-RESPONSE": btoa(JSON.stringify(settlement)) } });
    }),
  );
  server.listen({ onUnhandledRequest: "error" });
  try {
    const store = mapChannelStore();
    const memory = new Map<string, string>();
    const outcomes: SignInStore = { get: (key) => memory.get(key), set: (key, value) => memory.set(key, value) };
    const approved: string[] = [];
    const client = createX402Client({
      schemes: [ticketScheme("0xbuyer", store)],
      plugins: [stampPlugin(outcomes, "0xrefused")],
      onBeforePayment: (payment) => {
        approved.push(`${payment.requirement.payTo} ${payment.amount}`);
        return true;
      },
    });
    const paidFetch = wrapFetchWithPayment(fetch, client);
    const statuses = [(await paidFetch(SELLER)).status, (await paidFetch(SELLER)).status];
    const channels = Object.fromEntries(store.states);
    const resolved = import.meta.resolve("x402-pay");
    console.log(JSON.stringify({ resolved, statuses, approved, seen, channels, outcomes: [...memory] }));
  } finally {
    server.close();
  }
}

if (process.argv[1]?.endsWith("authors-app.ts")) await main();
