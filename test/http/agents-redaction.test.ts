/**
 * No key material and no signed payment header reaches what the model reads (docs/agents.md, "What the model sees"):
 * every path into an answer, fed key-shaped text (an EVM hex key and a Solana base58 secret made at run time, Anvil's
 * public mnemonic, and a PAYMENT-SIGNATURE value signed in this run), and the answer checked as the model reads it
 * (serialized). Through the framework-free tool, which every door answers with (test/http/agents-outcomes.test.ts).
 */
import { getBase58Decoder } from "@solana/kit";
import { HttpResponse, http } from "msw";
import { generatePrivateKey } from "viem/accounts";
import { beforeAll, describe, expect, it } from "vitest";
import { createPaidFetch } from "../../src/agents";
import { createX402Client } from "../../src";
import { exactEvm } from "../../src/evm";
import { useMswServer } from "../support/msw";
import {
  PATH,
  SELLER,
  account,
  challengeResponse,
  countingSigner,
  createSeller,
  payingClient,
  v2Challenge,
} from "../support/seller";

const server = useMswServer();
const url = `${SELLER}${PATH}`;

/** Anvil's public test mnemonic (its accounts are the public test keys). */
const MNEMONIC = "test test test test test test test test test test test junk";

/** A fresh 64-byte secret in base58, as a Solana key file's secret is shown. */
function solanaSecret(): string {
  const bytes = crypto.getRandomValues(new Uint8Array(64));
  bytes[0] ||= 1; // no leading zero byte, so it is 86 to 88 characters, as real keys are
  return getBase58Decoder().decode(bytes);
}

/** A PAYMENT-SIGNATURE value signed in this run (the tool's own payment, captured at the seller). */
let signedHeader = "";
beforeAll(async () => {
  const seller = createSeller();
  server.use(seller.handler);
  await createPaidFetch(payingClient().client).run({ url });
  signedHeader = seller.requests.find((r) => r.headers["payment-signature"])!.headers["payment-signature"]!;
  server.resetHandlers();
  expect(signedHeader.length).toBeGreaterThan(200);
});

/** Each kind of key-shaped text, made when the test runs. */
const secrets: { kind: string; make: () => string }[] = [
  { kind: "an EVM hex private key", make: () => generatePrivateKey() },
  { kind: "a bare EVM hex key", make: () => generatePrivateKey().slice(2) },
  { kind: "a Solana base58 64-byte secret", make: solanaSecret },
  { kind: "a BIP-39 mnemonic", make: () => MNEMONIC },
  { kind: "a signed PAYMENT-SIGNATURE value", make: () => signedHeader },
];

/** The paths into an answer: each gets `secret` into what x402-pay turns into the model's answer. */
const paths: { path: string; code: string; answer: (secret: string) => Promise<object> }[] = [
  {
    path: "a failing fetch's message (the request to the seller)",
    code: "REQUEST_FAILED",
    answer: (secret) => {
      const fetch = () => Promise.reject(new TypeError(`fetch failed: connect to ${secret}`));
      return createPaidFetch(payingClient().client, { fetch }).run({ url });
    },
  },
  {
    path: "a failing fetch's cause code",
    code: "REQUEST_FAILED",
    answer: (secret) => {
      const fetch = () => Promise.reject(new TypeError("fetch failed", { cause: { code: secret } }));
      return createPaidFetch(payingClient().client, { fetch }).run({ url });
    },
  },
  {
    path: "a failing fetch while deciding an approval",
    code: "REQUEST_FAILED",
    answer: (secret) => {
      const fetch = () => Promise.reject(new Error(`socket hang up ${secret}`));
      return createPaidFetch(payingClient().client, { fetch, approval: "$0.005" }).run({ url }, { ask: () => true });
    },
  },
  {
    path: "a thrown non-error from the fetch",
    code: "REQUEST_FAILED",
    answer: (secret) => {
      const fetch = () => Promise.reject(`refused: ${secret}`);
      return createPaidFetch(payingClient().client, { fetch }).run({ url });
    },
  },
  {
    path: "a wallet's own error from signTypedData",
    // x402-pay's own sentence: the wallet's text stays on the error's (scrubbed) cause, never in the answer.
    code: "SIGNING_FAILED",
    answer: (secret) => {
      server.use(createSeller().handler);
      const { signer } = countingSigner(() => Promise.reject(new Error(`cannot sign with ${secret}`)));
      const client = createX402Client({ schemes: [exactEvm({ signer })] });
      return createPaidFetch(client).run({ url });
    },
  },
  {
    path: "an approval rule's error",
    code: "APPROVAL_RULE_FAILED",
    answer: (secret) => {
      server.use(createSeller().handler);
      const approval = () => {
        throw new Error(`rule read ${secret}`);
      };
      return createPaidFetch(payingClient().client, { approval }).run({ url });
    },
  },
  {
    path: "a seller's refusal reason (an X402Error's message)",
    code: "PAYMENT_REJECTED",
    answer: (secret) => {
      const seller = createSeller({
        intercept: (request) =>
          request.headers.has("payment-signature")
            ? challengeResponse({ ...v2Challenge(), error: `bad signature ${secret}` })
            : undefined,
      });
      server.use(seller.handler);
      return createPaidFetch(payingClient().client).run({ url });
    },
  },
];

/** Does `read` carry `secret`, or (for a long one, a signed header) any 48 characters of it? */
function carries(read: string, secret: string): boolean {
  if (secret.length <= 100) return read.includes(secret);
  for (let i = 0; i + 48 <= secret.length; i += 8) if (read.includes(secret.slice(i, i + 48))) return true;
  return false;
}

describe.each(secrets)("$kind", ({ make }) => {
  for (const { path, code, answer } of paths) {
    it(`through ${path}: the model's answer does not carry it`, async () => {
      const secret = make();
      const read = JSON.stringify(await answer(secret));
      expect(read).toContain(`"code":"${code}"`);
      expect(carries(read, secret)).toBe(false);
    });
  }
});

describe("the payment the tool signed", () => {
  it("a seller gone after the payment left: the answer names no part of the signed header or its signature", async () => {
    const seller = createSeller({ paid: () => HttpResponse.error() });
    server.use(seller.handler);
    const answer = await createPaidFetch(payingClient().client).run({ url });
    const sent = seller.requests.find((r) => r.headers["payment-signature"])!.headers["payment-signature"]!;
    const { signature } = JSON.parse(Buffer.from(sent, "base64").toString()).payload;
    const read = JSON.stringify(answer);
    expect(answer.error?.code).toBe("PAYMENT_OUTCOME_UNKNOWN");
    expect(read).not.toContain(sent.slice(0, 40));
    expect(read).not.toContain(signature);
    expect(read).not.toContain(signature.slice(2, 66));
  });

  it("the answer's key material is never the wallet's: its address may show, its key does not", async () => {
    server.use(http.get(url, () => HttpResponse.json({ payer: account.address })));
    const answer = await createPaidFetch(payingClient().client).run({ url });
    expect(answer.body).toEqual({ payer: account.address });
  });
});
