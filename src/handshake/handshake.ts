/** The 402 state machine, independent of any HTTP library: adapters supply a `Transport`. */
import type { X402Client, PreparedPayment, RequestInfo } from "../client";
import {
  PaymentAlreadyAttemptedError,
  PaymentOutcomeUnknownError,
  PaymentRejectedError,
  isX402Error,
} from "../errors";
import {
  PAYMENT_HEADERS,
  PAYMENT_REQUIRED_HEADER,
  SETTLEMENT_HEADERS,
  decodeSettlement,
  parseChallenge,
  type SettleResponse,
} from "../protocol";
import { recordReceipt } from "./receipts";

/** How the handshake talks to an HTTP library. `R` is that library's response type. */
export interface Transport<R> {
  readonly request: RequestInfo;
  /** A header of the request as the caller sent it. */
  requestHeader(name: string): string | null | undefined;
  /**
   * Sends the same request again (method, URL, headers, body bytes) with `headers` added. On a
   * redirect to another origin, or once a redirect answer carried a settlement, the adapter must not
   * forward `headers`.
   */
  resend(headers: Record<string, string>): Promise<R>;
  status(response: R): number;
  header(response: R, name: string): string | null | undefined;
  /** The body of a 402 (text or parsed JSON), read without spoiling the response for the caller. */
  body(response: R): Promise<unknown>;
}

/**
 * Given a 402 response: read the challenge, select, approve and sign a payment, retry once with it,
 * and return the paid response (its receipt recorded) or throw a typed error.
 */
export async function handlePaymentRequired<R>(client: X402Client, transport: Transport<R>, response: R): Promise<R> {
  if (PAYMENT_HEADERS.some((name) => transport.requestHeader(name))) {
    const reason = await serverReason(transport, response);
    throw new PaymentAlreadyAttemptedError(
      `The request already carried a payment and the server still answered 402${reason ? ` (${reason})` : ""}; x402-pay will not sign another.`,
      { details: { reason, url: transport.request.url } },
    );
  }

  const payment = await client.createPayment(await readChallenge(transport, response), transport.request);

  let paid: R;
  try {
    paid = await transport.resend({ [payment.headerName]: payment.headerValue });
  } catch (error) {
    if (isX402Error(error) && error.code !== "PAYMENT_OUTCOME_UNKNOWN") throw error;
    throw new PaymentOutcomeUnknownError(
      "The paid request got no usable answer, so the payment may or may not have settled.",
      {
        cause: error,
        hint: "details.paymentHeader holds the exact signed header: resending it cannot pay twice.",
        details: paymentDetails(payment),
      },
    );
  }

  const status = transport.status(paid);
  const settlement = readSettlement(transport, paid);
  if (status === 402 || (status === 412 && transport.header(paid, PAYMENT_REQUIRED_HEADER))) {
    const reason = (await serverReason(transport, paid, settlement)) ?? `the server answered ${status} again`;
    throw new PaymentRejectedError(reason, {
      details: { ...paymentDetails(payment), status, settlement },
    });
  }

  const { requirement } = payment;
  recordReceipt(paid as object, {
    x402Version: payment.x402Version,
    requirement: requirement.raw,
    scheme: requirement.scheme,
    network: requirement.network,
    amount: requirement.amount,
    asset: requirement.asset,
    payTo: requirement.payTo,
    payer: settlement?.payer ?? payment.payer,
    settlement,
    transaction: settlement?.transaction || undefined,
  });
  return paid;
}

function paymentDetails(payment: PreparedPayment) {
  return {
    paymentHeader: { name: payment.headerName, value: payment.headerValue },
    payload: payment.payload,
    requirement: payment.requirement.raw,
    payer: payment.payer,
  };
}

/** The challenge of a 402 (or 412): the PAYMENT-REQUIRED header, else the body. */
async function readChallenge<R>(transport: Transport<R>, response: R) {
  const header = transport.header(response, PAYMENT_REQUIRED_HEADER);
  return parseChallenge({
    header,
    body: header ? undefined : await transport.body(response),
    contentType: transport.header(response, "content-type"),
  });
}

function readSettlement<R>(transport: Transport<R>, response: R): SettleResponse | undefined {
  for (const name of SETTLEMENT_HEADERS) {
    const settlement = decodeSettlement(transport.header(response, name));
    if (settlement) return settlement;
  }
  return undefined;
}

/** The server's reason for a 402: a failed settlement's reason, else the challenge's `error`. */
async function serverReason<R>(transport: Transport<R>, response: R, settlement = readSettlement(transport, response)) {
  if (settlement && !settlement.success) {
    const reason = settlement.errorReason ?? "settlement failed";
    return settlement.errorMessage ? `${reason}: ${settlement.errorMessage}` : reason;
  }
  try {
    return (await readChallenge(transport, response)).error || undefined;
  } catch {
    return undefined;
  }
}
