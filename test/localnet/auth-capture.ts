// The `auth-capture` escrow on anvil: our AuthCaptureEscrow and its three collectors (contracts/AuthCaptureEscrow.sol,
// compiled by scripts/compile-token.mjs) placed at the canonical v1.1 addresses the reference client signs for (the
// escrow's address is hashed into every payment's nonce), reads of the escrow, and an operator: the capture
// authorizer the requirement names, holding a public Anvil test key, doing what the reference facilitator and the
// seller's lifecycle manager do on chain (authorize, capture, void, refund). Needs TestUSDC (installTestUsdc) and,
// for Permit2 payments, Permit2 (installPermit2).
//
//   const reader = await installAuthCapture(rpcUrl);
//   const operator = authCaptureOperator(rpcUrl);
//   const { payload } = await new AuthCaptureEvmScheme(buyer.account).createPaymentPayload(2, requirement);
//   const payment = collectedPayment(requirement, payload);           // PaymentInfo, method, signature
//   await operator.authorize(payment.paymentInfo, amount, payment.method, payment.signature);
//   await operator.capture(payment.paymentInfo, part, fee);  await operator.void(payment.paymentInfo);
//   await reader.paymentState(payment.paymentInfo);            // { hasCollectedPayment, capturable, refundable }

import {
  BaseError,
  ContractFunctionRevertedError,
  createPublicClient,
  createWalletClient,
  encodeAbiParameters,
  http,
  keccak256,
  parseAbi,
  parseAbiParameters,
  toHex,
  type Abi,
  type Address,
  type Hash,
  type Hex,
  type PublicClient,
} from "viem";
import { privateKeyToAccount, type PrivateKeyAccount } from "viem/accounts";
import escrowArtifact from "./contracts/AuthCaptureEscrow.json" with { type: "json" };
import erc3009CollectorArtifact from "./contracts/ERC3009PaymentCollector.json" with { type: "json" };
import permit2CollectorArtifact from "./contracts/Permit2PaymentCollector.json" with { type: "json" };
import refundCollectorArtifact from "./contracts/OperatorRefundCollector.json" with { type: "json" };
import permit2Artifact from "./contracts/Permit2.json" with { type: "json" };
import { ANVIL_TEST_KEYS } from "./accounts.js";
import { BASE_SEPOLIA_CHAIN_ID, localChain, rpc } from "./anvil.js";
import { PERMIT2 } from "./permit2.js";
import { USDC_BASE_SEPOLIA, type TestUsdc } from "./token.js";

/** AuthCaptureEscrow v1.1 (commerce-payments), the reference client's default deployment. */
export const AUTH_CAPTURE_ESCROW: Address = "0xf96815976523E00e65Be8f34cA5e64b4f41EB19c";
/** Collects EIP-3009 ReceiveWithAuthorization payments (v1.1). */
export const ERC3009_PAYMENT_COLLECTOR: Address = "0x8612dfdc421f80336cd14E8EF9cb1E765dB5ab88";
/** Collects Permit2 PermitTransferFrom payments (v1.1). */
export const PERMIT2_PAYMENT_COLLECTOR: Address = "0xD69831Aed5bfe262067ec4c751f4F830EcdD446e";
/** Brings refunds from the operator (v1.1). */
export const OPERATOR_REFUND_COLLECTOR: Address = "0x7a03443724d14798c4AB4622F1DAAcA761Fea486";
/** The harness operator's key: public Anvil test account #3 (0x90F7…b906). */
export const AUTH_CAPTURE_OPERATOR_KEY: Hex = ANVIL_TEST_KEYS[3];

export const authCaptureEscrowAbi = escrowArtifact.abi as Abi;

/** What a revert is decoded with: the escrow's errors and Permit2's (a Permit2 revert passes through). */
const decodeAbi = [
  ...authCaptureEscrowAbi,
  ...(permit2Artifact.abi as Abi).filter((item) => item.type === "error"),
] as Abi;

const readAbi = parseAbi([
  "function balanceOf(address owner) view returns (uint256)",
  "function approve(address spender, uint256 value) returns (bool)",
  "function collectorType() view returns (uint8)",
  "function authCaptureEscrow() view returns (address)",
]);

/** The escrow's PaymentInfo struct (commerce-payments field names). */
export interface PaymentInfo {
  operator: Address;
  payer: Address;
  receiver: Address;
  token: Address;
  maxAmount: bigint;
  preApprovalExpiry: number;
  authorizationExpiry: number;
  refundExpiry: number;
  minFeeBps: number;
  maxFeeBps: number;
  feeReceiver: Address;
  salt: bigint;
}

export type AuthCaptureMethod = "eip3009" | "permit2";

/** `paymentState(hash)`: collected once, still held, captured and not refunded. */
export interface PaymentStateOnChain {
  hasCollectedPayment: boolean;
  capturable: bigint;
  refundable: bigint;
}

const PAYMENT_INFO_TYPEHASH = keccak256(
  toHex(
    "PaymentInfo(address operator,address payer,address receiver,address token,uint120 maxAmount," +
      "uint48 preApprovalExpiry,uint48 authorizationExpiry,uint48 refundExpiry,uint16 minFeeBps," +
      "uint16 maxFeeBps,address feeReceiver,uint256 salt)",
  ),
);

const PAYMENT_INFO_WORDS = parseAbiParameters(
  "bytes32, address, address, address, address, uint120, uint48, uint48, uint48, uint16, uint16, address, uint256",
);

/** The escrow's `getHash`, computed here: keys `paymentState`. With `payer` zeroed it is the signed nonce. */
export function paymentInfoHash(paymentInfo: PaymentInfo, chainId: number = BASE_SEPOLIA_CHAIN_ID): Hex {
  const p = paymentInfo;
  const inner = keccak256(
    encodeAbiParameters(PAYMENT_INFO_WORDS, [
      PAYMENT_INFO_TYPEHASH,
      p.operator,
      p.payer,
      p.receiver,
      p.token,
      p.maxAmount,
      p.preApprovalExpiry,
      p.authorizationExpiry,
      p.refundExpiry,
      p.minFeeBps,
      p.maxFeeBps,
      p.feeReceiver,
      p.salt,
    ]),
  );
  return keccak256(
    encodeAbiParameters(
      [{ type: "uint256" }, { type: "address" }, { type: "bytes32" }],
      [BigInt(chainId), AUTH_CAPTURE_ESCROW, inner],
    ),
  );
}

/** The nonce a buyer's token signature carries: the PaymentInfo hash with the payer zeroed. */
export function payerAgnosticHash(paymentInfo: PaymentInfo, chainId: number = BASE_SEPOLIA_CHAIN_ID): Hex {
  return paymentInfoHash({ ...paymentInfo, payer: "0x0000000000000000000000000000000000000000" }, chainId);
}

/** The parts of an auth-capture requirement the PaymentInfo is built from. */
export interface AuthCaptureTerms {
  payTo: string;
  asset: string;
  amount: string;
  extra: Record<string, unknown>;
}

/** A collect payload (the reference client's `payload`) as the escrow takes it. */
export interface CollectedPayment {
  paymentInfo: PaymentInfo;
  method: AuthCaptureMethod;
  /** The buyer's token signature: the collector's `collectorData`, as the reference facilitator passes it. */
  signature: Hex;
  /** The nonce on the wire (hex for both methods). */
  nonce: Hex;
}

/**
 * Builds the escrow's PaymentInfo from a requirement and the buyer's collect payload (payer = the signer,
 * preApprovalExpiry = validBefore / deadline, salt from the payload), the way the reference facilitator does.
 */
export function collectedPayment(terms: AuthCaptureTerms, payload: Record<string, unknown>): CollectedPayment {
  const extra = terms.extra;
  const permit2 = payload.permit2Authorization as Record<string, string> | undefined;
  const eip3009 = payload.authorization as Record<string, string> | undefined;
  const signed = permit2 ?? eip3009;
  if (!signed) throw new Error("auth-capture payload has neither authorization nor permit2Authorization");
  const paymentInfo: PaymentInfo = {
    operator: extra.captureAuthorizer as Address,
    payer: signed.from as Address,
    receiver: terms.payTo as Address,
    token: terms.asset as Address,
    maxAmount: BigInt(terms.amount),
    preApprovalExpiry: Number(permit2 ? permit2.deadline : signed.validBefore),
    authorizationExpiry: extra.captureDeadline as number,
    refundExpiry: extra.refundDeadline as number,
    minFeeBps: extra.minFeeBps as number,
    maxFeeBps: extra.maxFeeBps as number,
    feeReceiver: extra.feeRecipient as Address,
    salt: BigInt(payload.salt as string),
  };
  const nonce = permit2 ? toHex(BigInt(permit2.nonce as string), { size: 32 }) : (signed.nonce as Hex);
  return { paymentInfo, method: permit2 ? "permit2" : "eip3009", signature: payload.signature as Hex, nonce };
}

/** A reverted escrow call; `errorName` is the decoded custom error (or the token's revert reason). */
export class AuthCaptureRevert extends Error {
  constructor(
    readonly functionName: string,
    readonly errorName: string,
    options?: ErrorOptions,
  ) {
    super(`${functionName} reverted: ${errorName}`, options);
    this.name = "AuthCaptureRevert";
  }
}

/**
 * Places the escrow and the three collectors with anvil_setCode (no constructor runs; none is needed), then checks
 * the escrow answers and each collector points at it. TestUSDC must be there already.
 */
export async function installAuthCapture(rpcUrl: string): Promise<AuthCaptureReader> {
  await rpc(rpcUrl, "anvil_setCode", [AUTH_CAPTURE_ESCROW, escrowArtifact.deployedBytecode]);
  await rpc(rpcUrl, "anvil_setCode", [ERC3009_PAYMENT_COLLECTOR, erc3009CollectorArtifact.deployedBytecode]);
  await rpc(rpcUrl, "anvil_setCode", [PERMIT2_PAYMENT_COLLECTOR, permit2CollectorArtifact.deployedBytecode]);
  await rpc(rpcUrl, "anvil_setCode", [OPERATOR_REFUND_COLLECTOR, refundCollectorArtifact.deployedBytecode]);
  const client = createPublicClient({ transport: http(rpcUrl) });
  const store = await client.readContract({
    address: AUTH_CAPTURE_ESCROW,
    abi: authCaptureEscrowAbi,
    functionName: "getTokenStore",
    args: [AUTH_CAPTURE_ESCROW],
  });
  if (store !== AUTH_CAPTURE_ESCROW) throw new Error(`auth-capture install check failed: getTokenStore is ${store}`);
  for (const collector of [ERC3009_PAYMENT_COLLECTOR, PERMIT2_PAYMENT_COLLECTOR, OPERATOR_REFUND_COLLECTOR]) {
    const escrow = await client.readContract({ address: collector, abi: readAbi, functionName: "authCaptureEscrow" });
    if (escrow !== AUTH_CAPTURE_ESCROW)
      throw new Error(`auth-capture install check failed: ${collector}.authCaptureEscrow() is ${escrow}`);
  }
  if ((await rpc<Hex>(rpcUrl, "eth_getCode", [USDC_BASE_SEPOLIA, "latest"])) === "0x")
    throw new Error("auth-capture needs TestUSDC: installTestUsdc first");
  return authCaptureAt(rpcUrl);
}

/** Reads of the escrow (and token balances) on a chain where it is installed. */
export interface AuthCaptureReader {
  /** `paymentState(getHash(paymentInfo))`. */
  paymentState(paymentInfo: PaymentInfo): Promise<PaymentStateOnChain>;
  /** The escrow's own `getHash(paymentInfo)`. */
  hash(paymentInfo: PaymentInfo): Promise<Hex>;
  /** `token.balanceOf(owner)`; what the escrow holds is `balance(token, AUTH_CAPTURE_ESCROW)`. */
  balance(token: Address, owner: Address): Promise<bigint>;
  /** Whether Permit2 is installed (Permit2 payments need it). */
  hasPermit2(): Promise<boolean>;
}

export function authCaptureAt(rpcUrl: string): AuthCaptureReader {
  const client: PublicClient = createPublicClient({ transport: http(rpcUrl) });
  const hash = (paymentInfo: PaymentInfo) =>
    client.readContract({
      address: AUTH_CAPTURE_ESCROW,
      abi: authCaptureEscrowAbi,
      functionName: "getHash",
      args: [paymentInfo],
    }) as Promise<Hex>;
  return {
    hash,
    async paymentState(paymentInfo) {
      const [hasCollectedPayment, capturable, refundable] = (await client.readContract({
        address: AUTH_CAPTURE_ESCROW,
        abi: authCaptureEscrowAbi,
        functionName: "paymentState",
        args: [await hash(paymentInfo)],
      })) as [boolean, bigint, bigint];
      return { hasCollectedPayment, capturable, refundable };
    },
    balance: (token, owner) =>
      client.readContract({ address: token, abi: readAbi, functionName: "balanceOf", args: [owner] }),
    async hasPermit2() {
      return (await rpc<Hex>(rpcUrl, "eth_getCode", [PERMIT2, "latest"])) !== "0x";
    },
  };
}

/** The capture authorizer, sending the escrow's operator calls. Each resolves to the mined transaction's hash. */
export interface AuthCaptureOperator {
  address: Address;
  account: PrivateKeyAccount;
  /** `authorize(paymentInfo, amount, collector of method, signature)`: holds `amount` of the payer's funds. */
  authorize(paymentInfo: PaymentInfo, amount: bigint, method: AuthCaptureMethod, signature: Hex): Promise<Hash>;
  /** `capture(paymentInfo, amount, feeAmount, feeReceiver)`; the fee receiver defaults to PaymentInfo's. */
  capture(paymentInfo: PaymentInfo, amount: bigint, feeAmount: bigint, feeReceiver?: Address): Promise<Hash>;
  /** `void(paymentInfo)`: what is still held goes back to the payer. */
  void(paymentInfo: PaymentInfo): Promise<Hash>;
  /** `refund(paymentInfo, amount, OPERATOR_REFUND_COLLECTOR, 0x)`: paid from the operator's own tokens. */
  refund(paymentInfo: PaymentInfo, amount: bigint): Promise<Hash>;
  /** Mints `amount` to the operator and lets the refund collector spend all it holds (what `refund` takes). */
  fundRefunds(usdc: TestUsdc, amount: bigint): Promise<void>;
}

export interface AuthCaptureOperatorOptions {
  /** Default {@link AUTH_CAPTURE_OPERATOR_KEY}. Anvil's dev accounts hold ETH for gas. */
  privateKey?: Hex;
  chainId?: number;
}

export function authCaptureOperator(
  rpcUrl: string,
  { privateKey = AUTH_CAPTURE_OPERATOR_KEY, chainId = BASE_SEPOLIA_CHAIN_ID }: AuthCaptureOperatorOptions = {},
): AuthCaptureOperator {
  const account = privateKeyToAccount(privateKey);
  const chain = localChain(rpcUrl, chainId);
  const client = createPublicClient({ chain, transport: http(rpcUrl), pollingInterval: 50 });
  const wallet = createWalletClient({ account, chain, transport: http(rpcUrl) });
  // One call at a time: nonces come from the node, so overlapping sends from this key would collide.
  let queue: Promise<unknown> = Promise.resolve();

  const send = (functionName: string, args: readonly unknown[], address: Address = AUTH_CAPTURE_ESCROW) => {
    const run = async (): Promise<Hash> => {
      const abi = address === AUTH_CAPTURE_ESCROW ? decodeAbi : readAbi;
      try {
        const { request } = await client.simulateContract({ account, address, abi, functionName, args } as never);
        const hash = await wallet.writeContract(request as never);
        const receipt = await client.waitForTransactionReceipt({ hash });
        if (receipt.status !== "success") throw new AuthCaptureRevert(functionName, "reverted on chain");
        return hash;
      } catch (error) {
        if (error instanceof AuthCaptureRevert) throw error;
        throw new AuthCaptureRevert(functionName, revertName(error), { cause: error });
      }
    };
    const result = queue.then(run, run);
    queue = result.catch(() => undefined);
    return result;
  };

  return {
    address: account.address,
    account,
    authorize: (paymentInfo, amount, method, signature) =>
      send("authorize", [
        paymentInfo,
        amount,
        method === "permit2" ? PERMIT2_PAYMENT_COLLECTOR : ERC3009_PAYMENT_COLLECTOR,
        signature,
      ]),
    capture: (paymentInfo, amount, feeAmount, feeReceiver = paymentInfo.feeReceiver) =>
      send("capture", [paymentInfo, amount, feeAmount, feeReceiver]),
    void: (paymentInfo) => send("void", [paymentInfo]),
    refund: (paymentInfo, amount) => send("refund", [paymentInfo, amount, OPERATOR_REFUND_COLLECTOR, "0x"]),
    async fundRefunds(usdc, amount) {
      await usdc.mintUsdc(account.address, amount);
      await send("approve", [OPERATOR_REFUND_COLLECTOR, 2n ** 256n - 1n], usdc.address);
    },
  };
}

/** The custom error's name, or the token's revert reason, from a failed simulation. */
function revertName(error: unknown): string {
  if (error instanceof BaseError) {
    const reverted = error.walk((cause) => cause instanceof ContractFunctionRevertedError);
    if (reverted instanceof ContractFunctionRevertedError) {
      return reverted.data?.errorName === "Error"
        ? String(reverted.data.args?.[0])
        : (reverted.data?.errorName ?? reverted.reason ?? reverted.shortMessage);
    }
    return error.shortMessage;
  }
  return String(error);
}
