/**
 * Permit2 needs the payer's ERC-20 allowance once per token. `permit2Allowance({ rpc })` lets `exactEvm`
 * and `uptoEvm` check it before signing and, when it is short, use what the server offers to sponsor:
 * an EIP-2612 permit (`eip2612GasSponsoring`) or a signed ERC-20 approval (`erc20ApprovalGasSponsoring`)
 * that the facilitator sends. Without either, the payment is refused before signing with
 * PERMIT2_ALLOWANCE_REQUIRED. Kept apart from the schemes so a bundle without it carries none of it.
 */
import { PERMIT2_APPROVAL_HINT, Permit2AllowanceError, UnpayableRequirementError } from "../errors";
import { PERMIT2_ADDRESS, checksumAddress, type PaymentRequirement } from "../protocol";
import { routeChainReads, type EvmRpcOption } from "./chain";
import { EIP2612_GAS_SPONSORING, ERC20_APPROVAL_GAS_SPONSORING } from "./permit2";
import { toEvmChainId } from "./networks";
import { normalizeSignature, type EvmSigner, type Hex } from "./signer";
import { ERC20, erc20Call, MAX_UINT256 } from "./words";

/** Gas for the sponsored approval: enough for an ERC-20 `approve` (the reference's limit). */
const APPROVE_GAS = 70_000n;

export interface Permit2AllowanceOptions {
  /**
   * Chain reads: an RPC URL, a viem PublicClient or an EIP-1193 provider; one per network (`{ "eip155:8453": url }`) or
   * one for the chain it serves.
   */
  rpc: EvmRpcOption;
  /**
   * What a sponsored ERC-20 approval lets Permit2 move: exactly this payment (`"exact"`, the default:
   * the next payment asks again) or every future payment (`"unlimited"`, as the reference signs).
   */
  approvalAmount?: "exact" | "unlimited" | undefined;
  /** Longest wait for one chain read, in ms. Default 10,000. */
  rpcTimeoutMs?: number | undefined;
}

/**
 * Allowance checks for a Permit2 scheme: returned by `permit2Allowance`, passed as `exactEvm({ permit2 })` / `uptoEvm({
 * permit2 })`.
 */
export interface Permit2Allowance {
  /**
   * Before signing: `undefined` when Permit2 may already move the amount; otherwise the extension data
   * to sign once the Permit2 deadline is known. Throws PERMIT2_ALLOWANCE_REQUIRED when the allowance is
   * short and nothing the server declared can cover it. `false` when it has no RPC for the network.
   */
  prepare(
    requirement: PaymentRequirement,
    signer: EvmSigner,
    declared: readonly string[],
    signal: AbortSignal | undefined,
  ): Promise<((deadline: string) => Promise<Record<string, { info: Record<string, string> }>>) | undefined | false>;
}

export function permit2Allowance(options: Permit2AllowanceOptions): Permit2Allowance {
  const reads = routeChainReads(options.rpc, options.rpcTimeoutMs ?? 10_000);
  const unlimited = options.approvalAmount === "unlimited";
  return {
    async prepare(requirement, signer, declared, signal) {
      const chain = reads(requirement.caip2!, signal);
      if (!chain) return false;
      const token = checksumAddress(requirement.asset);
      const owner = signer.address;
      const amount = BigInt(requirement.amount);
      /** A uint256 view of the token; `undefined` when it answers anything else (no such function, no code). */
      const readUint = async (functionName: "allowance" | "nonces", args: readonly Hex[]) => {
        const answer = await chain.call(token, erc20Call(ERC20[functionName], args), functionName);
        return answer.length === 66 ? BigInt(answer) : undefined;
      };
      const allowance = await readUint("allowance", [owner, PERMIT2_ADDRESS]);
      if (allowance === undefined) {
        throw new UnpayableRequirementError(
          `Refused before signing: ${token} on ${requirement.caip2} does not answer ERC-20 allowance(): not a token ` +
            `there.`,
        );
      }
      if (allowance >= amount) return undefined;

      const { name, version } = requirement.extra;
      const chainId = toEvmChainId(requirement.caip2!)!;
      const info = { from: owner, asset: token, spender: PERMIT2_ADDRESS };
      // A token without EIP-2612 answers nonces() with nothing: then the permit is not offered to it.
      const nonce =
        declared.includes(EIP2612_GAS_SPONSORING) &&
        typeof name === "string" &&
        name &&
        typeof version === "string" &&
        version
          ? await readUint("nonces", [owner])
          : undefined;
      if (nonce !== undefined) {
        return async (deadline) => {
          const signature = await signer.signTypedData({
            domain: { name, version, chainId, verifyingContract: token },
            types: { Permit: permitFields },
            primaryType: "Permit",
            message: { owner, spender: PERMIT2_ADDRESS, value: amount, nonce, deadline: BigInt(deadline) },
          });
          const permit = {
            ...info,
            amount: requirement.amount,
            nonce: String(nonce),
            deadline,
            signature: normalizeSignature(signature),
            version: "1",
          };
          return { [EIP2612_GAS_SPONSORING]: { info: permit } };
        };
      }
      const signTransaction = signer.signTransaction;
      if (declared.includes(ERC20_APPROVAL_GAS_SPONSORING) && signTransaction) {
        const value = unlimited ? MAX_UINT256 : amount;
        const [nonce, fees] = [await chain.nonce(owner), await chain.fees()];
        return async () => {
          const data = erc20Call(ERC20.approve, [PERMIT2_ADDRESS, value]);
          const signedTransaction = await signTransaction({
            type: "eip1559",
            chainId,
            to: token,
            data,
            nonce,
            gas: APPROVE_GAS,
            ...fees,
          });
          return {
            [ERC20_APPROVAL_GAS_SPONSORING]: {
              info: { ...info, amount: String(value), signedTransaction, version: "1" },
            },
          };
        };
      }
      const network = requirement.caip2!;
      throw new Permit2AllowanceError(
        `Refused before signing: ${owner} lets Permit2 (${PERMIT2_ADDRESS}) spend ${allowance} base units of ` +
          `${token} on ${network}, less than ${amount}, and the server sponsors no approval this wallet can sign. ` +
          `Nothing was signed.`,
        {
          details: {
            token,
            owner,
            spender: PERMIT2_ADDRESS,
            network,
            amount: requirement.amount,
            allowance: String(allowance),
          },
          hint: PERMIT2_APPROVAL_HINT,
        },
      );
    },
  };
}

const permitFields = [
  { name: "owner", type: "address" },
  { name: "spender", type: "address" },
  { name: "value", type: "uint256" },
  { name: "nonce", type: "uint256" },
  { name: "deadline", type: "uint256" },
];
