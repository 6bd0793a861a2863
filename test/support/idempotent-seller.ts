/**
 * A seller that declares payment-identifier and keeps its promise, as the reference's example server
 * does (specs/extensions/payment_identifier.md): a payment it settled is remembered by its id with a
 * fingerprint of the whole signed payload; the same id with the same payload is answered from that
 * cache (nothing settled again), the same id with another payload is a 409, and `required: true`
 * without an id a 400. Faults put in front of it play a proxy or a network: an answer lost after the
 * seller settled, or a gateway that never reached it.
 */
import { createHash } from "node:crypto";
import {
  declarePaymentIdentifierExtension,
  extractPaymentIdentifier,
  validatePaymentIdentifierRequirement,
} from "@x402/extensions/payment-identifier";
import { http, HttpResponse } from "msw";
import {
  PATH,
  SELLER,
  TX_HASH,
  challengeResponse,
  decodeHeader,
  seeRequest,
  settlementHeader,
  v1Challenge,
  v2Challenge,
  verifyPayment,
  type Seen,
} from "./seller";

/** SHA-256 of the payload's JSON with the keys of every object sorted: equal for the same signed payload only. */
export function fingerprint(payload: unknown): string {
  const sorted = (value: unknown): unknown =>
    Array.isArray(value)
      ? value.map(sorted)
      : value && typeof value === "object"
        ? Object.fromEntries(
            Object.keys(value)
              .sort()
              .map((key) => [key, sorted((value as Record<string, unknown>)[key])]),
          )
        : value;
  return createHash("sha256")
    .update(JSON.stringify(sorted(payload)))
    .digest("hex");
}

export interface IdempotentSellerOptions {
  /** The declaration's `required`; `undefined`: payment-identifier is not declared at all. */
  required?: boolean | undefined;
  /** Protocol version of the challenge (v1 puts the declaration where a v1 body would, unread by the reference). */
  version?: 1 | 2;
  /** For the n-th paid request (from 0): an answer in the seller's place, which then never sees it (a gateway). */
  before?: (n: number) => Response | undefined | Promise<Response | undefined>;
  /**
   * For the n-th paid request: an answer in place of the seller's `served` one, which it gave (settled) all the same (a
   * lost answer).
   */
  after?: (n: number, served: Response) => Response | undefined | Promise<Response | undefined>;
}

export function idempotentSeller(options: IdempotentSellerOptions = {}) {
  const declared =
    options.required === undefined
      ? undefined
      : { "payment-identifier": declarePaymentIdentifierExtension(options.required) };
  const challenge =
    options.version === 1
      ? v1Challenge(declared && { extensions: declared })
      : v2Challenge(declared && { extensions: declared });
  const headerName = options.version === 1 ? "x-payment" : "payment-signature";
  const requests: Seen[] = [];
  /** The payments settled, each once. */
  const settlements: { id: string | null; payer: string }[] = [];
  const cache = new Map<string, { fingerprint: string; settlement: Record<string, string> }>();
  let paid = 0;

  async function serve(header: string): Promise<Response> {
    const payload = decodeHeader(header);
    const id = extractPaymentIdentifier(payload);
    if (options.required && !validatePaymentIdentifierRequirement(payload, true).valid) {
      return HttpResponse.json({ error: "payment identifier required" }, { status: 400 });
    }
    const cached = id ? cache.get(id) : undefined;
    if (cached) {
      if (cached.fingerprint !== fingerprint(payload))
        return HttpResponse.json(
          { error: "payment identifier already used with a different payload", paymentId: id },
          { status: 409 },
        );
      return HttpResponse.json({ data: "premium", cached: true }, { headers: cached.settlement });
    }
    const verdict = await verifyPayment(challenge, header);
    if (!verdict.ok) return challengeResponse({ ...challenge, error: verdict.reason });
    settlements.push({ id, payer: verdict.payer });
    const settlement = settlementHeader(options.version ?? 2, {
      success: true,
      transaction: TX_HASH,
      network: verdict.requirement.network,
      payer: verdict.payer,
    });
    if (id) cache.set(id, { fingerprint: fingerprint(payload), settlement });
    return HttpResponse.json({ data: "premium", cached: false }, { headers: settlement });
  }

  const handler = http.all(`${SELLER}${PATH}`, async ({ request }) => {
    requests.push(await seeRequest(request));
    const header = request.headers.get(headerName);
    if (!header) return challengeResponse(challenge);
    const n = paid++;
    const early = await options.before?.(n);
    if (early) return early;
    const served = await serve(header);
    return (await options.after?.(n, served)) ?? served;
  });

  return {
    handler,
    challenge,
    requests,
    settlements,
    /** The payment headers the seller (or the gateway in front of it) received, in order. */
    get paymentHeaders(): string[] {
      return requests.map((r) => r.headers[headerName]).filter((v): v is string => typeof v === "string");
    },
  };
}
