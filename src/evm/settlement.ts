/**
 * Did an EVM payment move money? First the transaction the server named: its receipt, read for a
 * Transfer of the asset from the payer to the payee. Without that proof, the signed authorization
 * itself, when it is known: used on chain (EIP-3009 `authorizationState`, Permit2 `nonceBitmap`), or
 * past its deadline, or still able to move money. A number the server sent is never taken as proof.
 */
import type { SettlementQuery, SettlementStatus } from "../contracts";
import { InvalidConfigError } from "../errors";
import { PERMIT2_ADDRESS, checksumAddress, sameAddress } from "../protocol";
import { routeChainReads, type ChainReads, type EvmReceipt, type EvmRpcOption } from "./chain";
import type { Hex } from "./signer";
import { erc20Call } from "./words";

/** `Transfer(address,address,uint256)`, the ERC-20 event. */
const TRANSFER_TOPIC = "0xddf252ad1be2c89b69c2b068fc378daa952ba7f163c4a11628f55a4df523b3ef";
/** `AuthorizationUsed(address,bytes32)`, the event of an EIP-3009 authorization used. */
const AUTHORIZATION_USED_TOPIC = "0x98de503528ee59b575ef0c0a2576a82497bfc029a5685b209e9ec333479b10a5";
/** `authorizationState(address,bytes32)` (EIP-3009) and Permit2's `nonceBitmap(address,uint256)`. */
const AUTHORIZATION_STATE = "0xe94a0102";
const NONCE_BITMAP = "0x4fe02b44";

/**
 * The signed authorization a payload carries: whose, which nonce, where its state is kept, and until when it can move
 * money.
 */
interface Authorization {
  readonly kind: "eip3009" | "permit2";
  readonly from: Hex;
  readonly nonce: string;
  /** Unix seconds. */
  readonly deadline: bigint;
  /** Unix seconds: from when it could move money (EIP-3009's `validAfter`). */
  readonly start?: bigint | undefined;
}

export interface EvmSettlementOptions {
  /**
   * Chain reads: an RPC URL, a viem PublicClient or an EIP-1193 provider; one per network (`{ "eip155:8453": url }`) or
   * one for the chain it serves.
   */
  rpc: EvmRpcOption;
  /** Longest wait for one chain read, in ms. Default 10,000. */
  rpcTimeoutMs?: number | undefined;
}

/**
 * How a scheme's payments show on chain, which the scheme that paid gives the generic check (it knows no scheme by
 * name).
 */
export interface SettlementRule {
  /**
   * What a used authorization moved when no transaction proves the amount: `"exact"`, the amount signed (`exact`);
   * `"at-most"`, unknown up to it (`upto`, an escrow's hold captured in part).
   */
  readonly amount: "exact" | "at-most";
  /**
   * Contracts the money passes through on its way to the payee (auth-capture's escrows): a transaction that logs one
   * counts what went from the payer into it, or from it to the payee, once this payment's authorization was used.
   */
  readonly escrows?: readonly string[] | undefined;
}

/** A payment moves straight from the payer to the payee, for the amount signed: `exact`'s rule, the default. */
export const EXACT_SETTLEMENT: SettlementRule = Object.freeze({ amount: "exact" });

/** Looks EVM payments up on their chain: given to a scheme as `exactEvm({ signer, settlement })`. */
export interface EvmSettlement {
  /** `rule`: how the scheme that paid shows on chain (default: `exact`'s). */
  check(query: SettlementQuery, signal?: AbortSignal, rule?: SettlementRule): Promise<SettlementStatus>;
}

/**
 * Where an EVM scheme looks its payments up for `checkSettlement(client, …)`: `exactEvm({ signer,
 * settlement: evmSettlement({ rpc }) })`. Kept apart from the schemes, so a bundle without it carries none of it.
 */
export function evmSettlement(options: EvmSettlementOptions): EvmSettlement {
  const owner = "evmSettlement";
  const reads = routeChainReads(
    Object(options).rpc,
    options.rpcTimeoutMs ?? 10_000,
    owner,
    "whether the payment settled is still unknown",
  );
  return {
    check(query, signal, rule = EXACT_SETTLEMENT) {
      const chain = reads(query.network, signal);
      if (!chain) {
        const message =
          `${owner} has no RPC for ${query.network}: give it one, ${owner}({ rpc: { ` + `"${query.network}": url } }).`;
        return Promise.reject(new InvalidConfigError(message, { details: { option: "rpc" } }));
      }
      return checkEvmSettlement(chain, query, rule);
    },
  };
}

async function checkEvmSettlement(
  chain: ChainReads,
  query: SettlementQuery,
  rule: SettlementRule,
): Promise<SettlementStatus> {
  const hash = /^0x[0-9a-fA-F]{64}$/.test(query.transaction ?? "") ? (query.transaction as Hex) : undefined;
  const receipt = hash ? await chain.receipt(hash) : null;
  const authorization = authorizationOf(query.payload);
  // Read once, when needed: has the payload's own authorization moved money?
  let usedState: Promise<boolean | undefined> | undefined;
  const isUsed = (signed: Authorization) => (usedState ??= used(chain, query.asset, signed));
  const { moved, escrow } =
    receipt?.status === "0x1" ? transferred(receipt, query, rule) : { moved: 0n, escrow: false };
  // An escrow's transaction moves others' payments too: when this payment's authorization is known, it is believed
  // only once that authorization was used (the money went into the escrow).
  const believed = escrow && authorization ? (await isUsed(authorization)) !== false : true;
  if (moved > 0n && believed) {
    const reason = escrow
      ? `transaction ${hash}, the escrow's, moved ${moved} base units of ${query.asset} of this payment (from ` +
        `${query.payer} into the escrow, or from the escrow to ${query.payTo})`
      : `transaction ${hash} moved ${moved} base units of ${query.asset} from ${query.payer} to ${query.payTo}`;
    return { state: "settled", transaction: hash, amount: String(moved), reason };
  }
  const seen = !hash
    ? "no transaction was named"
    : !receipt
      ? `transaction ${hash} is not mined yet`
      : receipt.status === "0x1"
        ? `transaction ${hash} moved none of this payment`
        : `transaction ${hash} reverted`;
  const state = authorization && (await isUsed(authorization));
  if (authorization && state !== undefined) {
    if (state) {
      // Used by whichever transaction: the exact amount moved, or under an "at-most" rule an amount up to it (upto;
      // an escrow's hold, captured in part or voided).
      const amount = rule.amount === "exact" ? query.amount : undefined;
      const used = hash ? undefined : await usedIn(chain, query.asset, authorization);
      return {
        state: "settled",
        transaction: used,
        amount,
        reason: `${seen}, but the signed authorization was used on chain${used ? `, by transaction ${used}` : ""}`,
      };
    }
    const until = new Date(Number(authorization.deadline) * 1000).toISOString();
    // The chain's clock, not ours: a transaction can only land in a block later than the latest.
    if ((await chain.time()) > authorization.deadline)
      return {
        state: "failed",
        transaction: hash,
        reason: `${seen}, and the signed authorization expired unused at ${until}`,
      };
    return {
      state: "pending",
      transaction: hash,
      reason: `${seen}; the signed authorization can still move money until ${until}`,
    };
  }
  if (!receipt)
    return {
      state: "pending",
      transaction: hash,
      reason: hash ? seen : `${seen}, and the signed payment is not known`,
    };
  return { state: "failed", transaction: hash, reason: seen };
}

/**
 * Base units of the asset the receipt's Transfer events move from the payer to the payee. A payment through an escrow
 * of the rule's (`escrow`: one logged in the transaction) moves from the payer into the escrow when it is authorized
 * or charged, and from the escrow to the payee when captured: there the larger of the two counts.
 */
function transferred(
  receipt: EvmReceipt,
  query: SettlementQuery,
  { escrows = [] }: SettlementRule,
): { moved: bigint; escrow: boolean } {
  const topic = (address: string) => `0x${address.slice(2).toLowerCase().padStart(64, "0")}`;
  const escrow = receipt.logs.some((log) => escrows.some((contract) => sameAddress(log.address, contract)));
  let [direct, fromPayer, toPayee] = [0n, 0n, 0n];
  for (const log of receipt.logs) {
    const [event, from, to] = log.topics.map((t) => t.toLowerCase());
    if (!sameAddress(log.address, query.asset) || event !== TRANSFER_TOPIC) continue;
    if (!/^0x[0-9a-fA-F]{1,64}$/.test(log.data)) continue;
    const value = BigInt(log.data);
    if (from === topic(query.payer) && to === topic(query.payTo)) direct += value;
    if (from === topic(query.payer)) fromPayer += value;
    if (to === topic(query.payTo)) toPayee += value;
  }
  if (!escrow) return { moved: direct, escrow };
  return { moved: fromPayer > toPayee ? fromPayer : toPayee, escrow };
}

/** The authorization an exact or upto payload signed (EIP-3009 or Permit2), else `undefined`. */
function authorizationOf(payload: Readonly<Record<string, unknown>> | undefined): Authorization | undefined {
  const inner = Object(Object(payload).payload) as Record<string, unknown>;
  const read = (value: unknown, kind: Authorization["kind"], deadlineField: string): Authorization | undefined => {
    const fields = Object(value) as Record<string, unknown>;
    const { from, nonce } = fields;
    const deadline = fields[deadlineField];
    const isUint = (v: unknown): v is string => typeof v === "string" && /^\d{1,78}$/.test(v);
    if (typeof from !== "string" || !/^0x[0-9a-fA-F]{40}$/.test(from) || !isUint(deadline)) return undefined;
    if (kind === "eip3009" ? typeof nonce !== "string" || !/^0x[0-9a-fA-F]{64}$/.test(nonce) : !isUint(nonce))
      return undefined;
    const start = isUint(fields.validAfter) ? BigInt(fields.validAfter) : undefined;
    return { kind, from: from as Hex, nonce: nonce as string, deadline: BigInt(deadline), start };
  };
  return read(inner.authorization, "eip3009", "validBefore") ?? read(inner.permit2Authorization, "permit2", "deadline");
}

/** Blocks searched beyond the estimate on each side, and the most searched in one read of the logs. */
const MARGIN_BLOCKS = 64n;
const MOST_BLOCKS = 10_000n;

/**
 * The transaction that used an EIP-3009 authorization: its `AuthorizationUsed` log on the token, looked for in the
 * blocks of the authorization's validity (placed by the pace of the last 1,024 blocks, with a margin). `undefined`
 * when it is not found, or cannot be looked for (Permit2, a node that refuses the read).
 */
async function usedIn(chain: ChainReads, asset: string, authorization: Authorization): Promise<Hex | undefined> {
  const { kind, start, deadline, from: payer, nonce } = authorization;
  if (kind !== "eip3009" || start === undefined) return undefined;
  try {
    const latest = await chain.block("latest");
    const sample = await chain.block(latest.number > 1024n ? latest.number - 1024n : 0n);
    const [blocks, seconds] = [latest.number - sample.number, latest.timestamp - sample.timestamp];
    // Blocks back from the latest to a moment; with no pace to go by (blocks within one second), the whole sample:
    // from its first block (`paceless`) to the latest.
    const back = (time: bigint, paceless: bigint) =>
      seconds > 0n ? ((latest.timestamp - time) * blocks) / seconds : paceless;
    const to = latest.number - (deadline >= latest.timestamp ? 0n : back(deadline, 0n)) + MARGIN_BLOCKS;
    const last = to < latest.number ? to : latest.number;
    const first = latest.number - back(start, blocks) - MARGIN_BLOCKS;
    const lowest = last > MOST_BLOCKS ? last - MOST_BLOCKS : 0n;
    const topics = [AUTHORIZATION_USED_TOPIC, `0x${payer.slice(2).toLowerCase().padStart(64, "0")}`, nonce] as Hex[];
    const found = await chain.logs({
      address: checksumAddress(asset) as Hex,
      topics,
      from: first > lowest ? first : lowest,
      to: last,
    });
    return found[0];
  } catch {
    return undefined;
  }
}

/**
 * Has the authorization been used: EIP-3009's state on the token, or the nonce's bit in Permit2's
 * bitmap. `undefined` when the contract does not answer with a word (no such function, no code).
 */
async function used(chain: ChainReads, asset: string, authorization: Authorization): Promise<boolean | undefined> {
  const word = (answer: Hex) => (answer.length === 66 ? BigInt(answer) : undefined);
  if (authorization.kind === "eip3009") {
    const data = erc20Call(AUTHORIZATION_STATE, [authorization.from, authorization.nonce as Hex]);
    const state = word(await chain.call(checksumAddress(asset) as Hex, data, "authorizationState"));
    return state === undefined ? undefined : state !== 0n;
  }
  const nonce = BigInt(authorization.nonce);
  const bitmap = word(
    await chain.call(PERMIT2_ADDRESS as Hex, erc20Call(NONCE_BITMAP, [authorization.from, nonce >> 8n]), "nonceBitmap"),
  );
  return bitmap === undefined ? undefined : ((bitmap >> (nonce & 255n)) & 1n) === 1n;
}
