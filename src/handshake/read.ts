/** Reading a seller's answers: a 402's challenge (its body read bounded), the settlement, a refusal's reason. */
import {
  PAYMENT_REQUIRED_HEADER,
  SETTLEMENT_HEADERS,
  decodeSettlement,
  parseChallenge,
  type PaymentChallenge,
  type SettleResponse,
} from "../protocol";
import { readBody } from "./body";
import type { Transport } from "./transport";

/** The challenge of a 402 (or 412): the PAYMENT-REQUIRED header, else the body. */
export async function readChallenge<R>(transport: Transport<R>, response: R): Promise<PaymentChallenge> {
  const header = transport.header(response, PAYMENT_REQUIRED_HEADER);
  return parseChallenge({
    header,
    body: header ? undefined : await readBody(transport.body(response), transport.request.signal),
    contentType: transport.header(response, "content-type"),
  });
}

/** The settlement the response reports (PAYMENT-RESPONSE first), if any. */
export function readSettlement<R>(transport: Transport<R>, response: R): SettleResponse | undefined {
  for (const name of SETTLEMENT_HEADERS) {
    const settlement = decodeSettlement(transport.header(response, name));
    if (settlement) return settlement;
  }
  return undefined;
}

/** The server's reason code for a 402: a failed settlement's, else the challenge's `error`. */
export async function serverReason<R>(
  transport: Transport<R>,
  response: R,
  settlement = readSettlement(transport, response),
) {
  return (await refusal(transport, response, settlement)).reason;
}

/** A refusal's reason code (a failed settlement's, else the challenge's `error`), and its challenge when readable. */
export async function refusal<R>(
  transport: Transport<R>,
  response: R,
  settlement: SettleResponse | undefined,
): Promise<{ reason: string | undefined; challenge?: PaymentChallenge }> {
  if (settlement && !settlement.success) return { reason: settlement.errorReason ?? "settlement_failed" };
  try {
    const challenge = await readChallenge(transport, response);
    return { reason: challenge.error || undefined, challenge };
  } catch {
    return { reason: undefined };
  }
}
