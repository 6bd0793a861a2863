/**
 * The x402 wire shapes as TypeScript reads them: what the schemas of `schemas.ts` accept, written out so that
 * every entry can name them without naming a zod schema (and so an editor shows their fields). `schemas.ts`
 * holds each to its schema at compile time: a field added to one and not the other fails `tsc`. Unknown fields
 * are kept, as the schemas keep them.
 */

/** `{ url, description?, mimeType? }`: only `url` is read. */
export interface ResourceInfo {
  [key: string]: unknown;
  url: string;
}

/** An element of a v2 `accepts`, the payment requirements the payer chooses from; echoed verbatim as `accepted`. */
export interface PaymentRequirementsV2 {
  [key: string]: unknown;
  scheme: string;
  /** CAIP-2. */
  network: string;
  /** Base units, a base-10 integer string. */
  amount: string;
  asset: string;
  payTo: string;
  maxTimeoutSeconds: number;
  extra?: { [key: string]: unknown } | null | undefined;
}

/** An element of a v1 `accepts`. */
export interface PaymentRequirementsV1 {
  [key: string]: unknown;
  scheme: string;
  /** A v1 network name (`base-sepolia`). */
  network: string;
  maxAmountRequired: string;
  asset: string;
  payTo: string;
  maxTimeoutSeconds: number;
  extra?: { [key: string]: unknown } | null | undefined;
  resource?: string | undefined;
}

/** The v2 402 challenge. `accepts` holds requirements, each checked on its own (`PaymentRequirementsV2`). */
export interface PaymentRequiredV2 {
  [key: string]: unknown;
  x402Version: 2;
  error?: string | null | undefined;
  accepts: unknown[];
  extensions?: { [key: string]: unknown } | null | undefined;
  resource?: ResourceInfo | undefined;
}

/** The v1 402 challenge, a JSON body. */
export interface PaymentRequiredV1 {
  [key: string]: unknown;
  x402Version: 1;
  error?: string | null | undefined;
  accepts: unknown[];
  extensions?: { [key: string]: unknown } | null | undefined;
}

/** The v2 `PAYMENT-SIGNATURE` payload: `payload` is the scheme's, `accepted` one of the challenge's requirements. */
export interface PaymentPayloadV2 {
  [key: string]: unknown;
  x402Version: 2;
  payload: { [key: string]: unknown };
  extensions?: { [key: string]: unknown } | null | undefined;
  resource?: ResourceInfo | undefined;
  accepted: PaymentRequirementsV2;
}

/** The v1 `X-PAYMENT` payload. */
export interface PaymentPayloadV1 {
  [key: string]: unknown;
  x402Version: 1;
  scheme: string;
  network: string;
  payload: { [key: string]: unknown };
}

/** A settlement as `decodeSettlement` returns it (`PAYMENT-RESPONSE`): a text field sent as `null` is absent. */
export interface SettleResponse {
  [key: string]: unknown;
  success: boolean;
  errorReason?: string | undefined;
  errorMessage?: string | undefined;
  payer?: string | undefined;
  transaction?: string | undefined;
  network?: string | undefined;
  amount?: string | undefined;
  extensions?: { [key: string]: unknown } | null | undefined;
}

/** An entry of a sign-in-with-x declaration's `supportedChains`. */
export interface SignInWithXChain {
  [key: string]: unknown;
  chainId: string;
  type: string;
}

/** `extensions["sign-in-with-x"]` of a 402: the message's fields but the chain, and the chains taken. */
export interface SignInWithXDeclaration {
  [key: string]: unknown;
  info: {
    [key: string]: unknown;
    domain: string;
    uri: string;
    version: string;
    nonce: string;
    issuedAt: string;
    statement?: string | undefined;
    expirationTime?: string | undefined;
    notBefore?: string | undefined;
    requestId?: string | undefined;
    resources?: string[] | undefined;
  };
  /** Each entry is checked on its own (`SignInWithXChain`); malformed ones are dropped. */
  supportedChains: unknown[];
}

/** The `SIGN-IN-WITH-X` header's payload: the declaration's `info` echoed, the chain, the address and signature. */
export interface SignInWithXPayload {
  [key: string]: unknown;
  domain: string;
  address: string;
  statement?: string | undefined;
  uri: string;
  version: string;
  chainId: string;
  type: "eip191" | "ed25519";
  nonce: string;
  issuedAt: string;
  expirationTime?: string | undefined;
  notBefore?: string | undefined;
  requestId?: string | undefined;
  resources?: string[] | undefined;
  signatureScheme?: "eip191" | "eip1271" | "eip6492" | "siws" | undefined;
  signature: string;
}

/** `extensions["payment-identifier"]` of a 402. */
export interface PaymentIdentifierDeclaration {
  [key: string]: unknown;
  info: { [key: string]: unknown; required: boolean };
}

/** `extensions["payment-identifier"]` of a PaymentPayload: the declaration echoed with `info.id`. */
export interface PaymentIdentifierPayload {
  [key: string]: unknown;
  info: { [key: string]: unknown; id: string };
}

/** `extensions["builder-code"]`, of a 402 and of a PaymentPayload alike. */
export interface BuilderCode {
  [key: string]: unknown;
  info: {
    [key: string]: unknown;
    a?: string | undefined;
    w?: string | undefined;
    s?: string | string[] | undefined;
  };
}

/** A listing of a facilitator's discovery endpoint; `accepts` holds requirements of its `x402Version`. */
export interface DiscoveryResource {
  [key: string]: unknown;
  resource: string;
  type?: string | undefined;
  x402Version: 1 | 2;
  accepts: unknown[];
  lastUpdated?: number | string | undefined;
  metadata?: { [key: string]: unknown } | null | undefined;
}
