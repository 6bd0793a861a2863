/**
 * The 402 handshake end to end through both wrappers: challenge (v2 header, v2 body, v1 body),
 * the paid retry with the right header, the payload's echoes, and the decoded receipt.
 */
import axios, { AxiosError } from "axios";
import { http, HttpResponse } from "msw";
import { describe, expect, it } from "vitest";
import { getPaymentReceipt } from "../../src";
import { wrapAxiosWithPayment } from "../../src/axios";
import {
  PATH,
  PAY_TO,
  SELLER,
  TX_HASH,
  USDC_BASE,
  USDC_BASE_SEPOLIA,
  account,
  createSeller,
  decodeHeader,
  encodeHeader,
  payingClient,
  v1Challenge,
  v1Requirement,
  v2Challenge,
  v2Requirement,
} from "../support/seller";
import { axiosWrapper, fetchWrapper, wrappers } from "../support/wrappers";
import { useMswServer } from "../support/msw";

const server = useMswServer();

const url = `${SELLER}${PATH}?q=1&lang=en`;

describe.each(wrappers)("$name: x402 v2", (wrapper) => {
  it("reads PAYMENT-REQUIRED, retries with PAYMENT-SIGNATURE, and decodes PAYMENT-RESPONSE into the receipt", async () => {
    const seller = createSeller();
    server.use(seller.handler);
    const { client, signs } = payingClient();

    const reply = await wrapper.send(client, { url });

    expect(reply.status).toBe(200);
    expect(JSON.parse(reply.text)).toEqual({ data: "premium" });
    expect(signs).toHaveLength(1);
    expect(seller.requests).toHaveLength(2);
    expect(seller.requests[0]!.headers["payment-signature"]).toBeUndefined();
    expect(seller.requests[1]!.headers["payment-signature"]).toMatch(/^[A-Za-z0-9+/]+=*$/);
    expect(seller.requests[1]!.headers["x-payment"]).toBeUndefined();
    expect(seller.verdicts).toEqual([expect.objectContaining({ ok: true, payer: account.address })]);

    const receipt = getPaymentReceipt(reply.raw);
    expect(receipt).toEqual({
      x402Version: 2,
      url,
      method: "GET",
      status: 200,
      settled: true,
      pending: false,
      displayAmount: "0.01 USDC",
      requirement: v2Requirement(),
      scheme: "exact",
      network: "eip155:84532",
      amount: "10000",
      asset: USDC_BASE_SEPOLIA,
      payTo: PAY_TO,
      payer: account.address,
      settlement: { success: true, transaction: TX_HASH, network: "eip155:84532", payer: account.address },
      transaction: TX_HASH,
      upTo: false,
      flow: "authorization",
      settledAmount: "10000", // settled, no amount reported: a fixed price moved in full (as the ledger records it)
      extensions: {},
    });
  });

  it("signs the EIP-3009 authorisation the requirement asks for", async () => {
    const seller = createSeller();
    server.use(seller.handler);
    const before = Math.floor(Date.now() / 1000);
    await wrapper.send(payingClient().client, { url });

    const [payment] = seller.payments;
    const auth = payment.payload.authorization;
    expect(auth.from).toBe(account.address);
    expect(auth.to).toBe(PAY_TO);
    expect(auth.value).toBe("10000");
    expect(Number(auth.validBefore)).toBeGreaterThanOrEqual(before + 60);
    expect(Number(auth.validBefore)).toBeLessThanOrEqual(before + 62);
    expect(Number(auth.validAfter)).toBeLessThan(before);
    expect(auth.nonce).toMatch(/^0x[0-9a-f]{64}$/);
    expect(payment.payload.signature).toMatch(/^0x[0-9a-f]{130}$/);
  });

  it("accepts a v2 challenge sent only in the JSON body", async () => {
    const seller = createSeller({ delivery: "body" });
    server.use(seller.handler);
    const reply = await wrapper.send(payingClient().client, { url });

    expect(reply.status).toBe(200);
    expect(seller.requests).toHaveLength(2);
    expect(seller.requests[1]!.headers["payment-signature"]).toBeDefined();
    expect(seller.verdicts[0]?.ok).toBe(true);
    expect(getPaymentReceipt(reply.raw)?.transaction).toBe(TX_HASH);
  });

  it("echoes the chosen requirement verbatim as `accepted`, with unknown keys, plus `resource` and every extension", async () => {
    const requirement = v2Requirement({
      extra: { name: "USDC", version: "2", vendorHint: { nested: [1, "two", null] } },
      someFutureField: { a: 1 },
      description: "not a v2 field",
    });
    const resource = { url: `${SELLER}${PATH}`, description: "Premium", mimeType: "application/json", icon: "x.png" };
    const extensions = {
      bazaar: { info: { input: { type: "http", method: "GET" } }, schema: { type: "object" } },
      "vendor-unknown": { info: { anything: true }, schema: {}, extraKey: [1, 2, 3] },
    };
    const challenge = v2Challenge({ resource, extensions, accepts: [requirement], futureTopLevel: "kept?" });
    const seller = createSeller({ challenge });
    server.use(seller.handler);

    await wrapper.send(payingClient().client, { url });

    const [payment] = seller.payments;
    expect(payment.x402Version).toBe(2);
    expect(payment.accepted).toStrictEqual(requirement);
    expect(payment.resource).toStrictEqual(resource);
    expect(payment.extensions).toStrictEqual(extensions);
    expect(Object.keys(payment)).toEqual(["x402Version", "payload", "extensions", "resource", "accepted"]);
    expect(seller.verdicts[0]?.ok).toBe(true);
  });

  it("pays the first payable option and echoes that one, not another", async () => {
    const unpayable = v2Requirement({ scheme: "upto", amount: "5" });
    const payable = v2Requirement({
      network: "eip155:8453",
      asset: USDC_BASE,
      extra: { name: "USD Coin", version: "2" },
    });
    const seller = createSeller({ challenge: v2Challenge({ accepts: [unpayable, payable] }) });
    server.use(seller.handler);

    const reply = await wrapper.send(payingClient().client, { url });

    expect(reply.status).toBe(200);
    expect(seller.payments[0].accepted).toStrictEqual(payable);
    expect(getPaymentReceipt(reply.raw)?.network).toBe("eip155:8453");
  });

  it("prefers the PAYMENT-REQUIRED header over a challenge in the body", async () => {
    const headerChallenge = v2Challenge();
    const seller = createSeller({
      challenge: headerChallenge,
      intercept: (request) =>
        request.headers.has("payment-signature")
          ? undefined
          : HttpResponse.json(v1Challenge(), {
              status: 402,
              headers: { "PAYMENT-REQUIRED": encodeHeader(headerChallenge) },
            }),
    });
    server.use(seller.handler);
    const reply = await wrapper.send(payingClient().client, { url });

    expect(reply.status).toBe(200);
    expect(seller.requests[1]!.headers["payment-signature"]).toBeDefined();
    expect(seller.requests[1]!.headers["x-payment"]).toBeUndefined();
  });

  it("omits `extensions` when none were declared", async () => {
    const seller = createSeller();
    server.use(seller.handler);
    await wrapper.send(payingClient().client, { url });
    expect(seller.payments[0]).not.toHaveProperty("extensions");
  });
});

describe.each(wrappers)("$name: x402 v1", (wrapper) => {
  it.each([
    { network: "base-sepolia", asset: USDC_BASE_SEPOLIA, name: "USDC" },
    { network: "base", asset: USDC_BASE, name: "USD Coin" },
  ])(
    "pays a body challenge on $network with X-PAYMENT and decodes X-PAYMENT-RESPONSE",
    async ({ network, asset, name }) => {
      const requirement = v1Requirement({ network, asset, extra: { name, version: "2" } });
      const seller = createSeller({ challenge: v1Challenge({ accepts: [requirement] }) });
      server.use(seller.handler);
      const { client, signs } = payingClient();

      const reply = await wrapper.send(client, { url });

      expect(reply.status).toBe(200);
      expect(signs).toHaveLength(1);
      expect(seller.requests).toHaveLength(2);
      expect(seller.requests[1]!.headers["x-payment"]).toBeDefined();
      expect(seller.requests[1]!.headers["payment-signature"]).toBeUndefined();
      const payment = decodeHeader(seller.requests[1]!.headers["x-payment"]!);
      expect(Object.keys(payment)).toEqual(["x402Version", "scheme", "network", "payload"]);
      expect(payment).toMatchObject({ x402Version: 1, scheme: "exact", network });
      expect(Object.keys(payment.payload).sort()).toEqual(["authorization", "signature"]);
      expect(payment.payload.authorization.value).toBe("10000");
      expect(seller.verdicts[0]).toMatchObject({ ok: true, payer: account.address });

      const receipt = getPaymentReceipt(reply.raw);
      expect(receipt).toMatchObject({
        x402Version: 1,
        requirement,
        network,
        amount: "10000",
        asset,
        payer: account.address,
        transaction: TX_HASH,
        settlement: { success: true, transaction: TX_HASH, network, payer: account.address },
      });
    },
  );
});

describe("axios: a v1 body challenge is read whatever the responseType", () => {
  it.each(["json", "text", "arraybuffer", "stream"] as const)("responseType %s", async (responseType) => {
    const seller = createSeller({ challenge: v1Challenge() });
    server.use(seller.handler);
    const { client, signs } = payingClient();
    const response = await wrapAxiosWithPayment(axios.create(), client).get(url, { responseType });

    expect(response.status).toBe(200);
    expect(signs).toHaveLength(1);
    expect(seller.requests).toHaveLength(2);
    expect(seller.verdicts[0]?.ok).toBe(true);
    expect(getPaymentReceipt(response)?.transaction).toBe(TX_HASH);
    if (responseType === "stream") {
      let text = "";
      for await (const chunk of response.data as AsyncIterable<Buffer>) text += chunk.toString("utf8");
      expect(JSON.parse(text)).toEqual({ data: "premium" });
    }
  });
});

describe("axios: the URL paid for is the one axios built", () => {
  it("baseURL + relative path + params", async () => {
    const seller = createSeller();
    server.use(seller.handler);
    const instance = wrapAxiosWithPayment(axios.create({ baseURL: SELLER }), payingClient().client);
    const response = await instance.get(PATH, { params: { q: "a b", n: 1 } });

    expect(response.status).toBe(200);
    expect(seller.requests.map((r) => r.url)).toEqual([`${SELLER}${PATH}?q=a+b&n=1`, `${SELLER}${PATH}?q=a+b&n=1`]);
  });
});

describe.each(wrappers)("$name: responses that are not 402", (wrapper) => {
  it("passes a 200 through untouched, with no receipt and no signing", async () => {
    server.use(
      http.get(`${SELLER}/free`, () =>
        HttpResponse.text("free content", {
          status: 200,
          headers: { "X-Custom": "kept", "Content-Type": "text/plain" },
        }),
      ),
    );
    const { client, signs } = payingClient();
    const reply = await wrapper.send(client, { url: `${SELLER}/free` });

    expect(reply.status).toBe(200);
    expect(reply.text).toBe("free content");
    expect(reply.header("x-custom")).toBe("kept");
    expect(getPaymentReceipt(reply.raw)).toBeUndefined();
    expect(signs).toHaveLength(0);
  });

  it("does not turn a stray PAYMENT-RESPONSE on a free response into a receipt", async () => {
    server.use(
      http.get(`${SELLER}/free`, () =>
        HttpResponse.json(
          { ok: 1 },
          {
            headers: {
              "PAYMENT-RESPONSE": Buffer.from(
                JSON.stringify({ success: true, transaction: TX_HASH, network: "eip155:8453" }),
              ).toString("base64"),
            },
          },
        ),
      ),
    );
    const reply = await wrapper.send(payingClient().client, { url: `${SELLER}/free` });
    expect(reply.status).toBe(200);
    expect(getPaymentReceipt(reply.raw)).toBeUndefined();
  });
});

describe("non-402 errors pass through as each library reports them", () => {
  it("fetch: a 404 comes back as the same status, headers and body", async () => {
    let hits = 0;
    server.use(
      http.get(`${SELLER}/missing`, () => {
        hits++;
        return HttpResponse.text("nope", { status: 404, headers: { "X-Why": "gone" } });
      }),
    );
    const { client, signs } = payingClient();
    const reply = await fetchWrapper.send(client, { url: `${SELLER}/missing` });
    expect([reply.status, reply.text, reply.header("x-why")]).toEqual([404, "nope", "gone"]);
    expect(getPaymentReceipt(reply.raw)).toBeUndefined();
    expect(hits).toBe(1);
    expect(signs).toHaveLength(0);
  });

  it("axios: a 404 rejects with the original AxiosError", async () => {
    let hits = 0;
    server.use(
      http.get(`${SELLER}/missing`, () => {
        hits++;
        return HttpResponse.text("nope", { status: 404, headers: { "X-Why": "gone" } });
      }),
    );
    const { client, signs } = payingClient();
    const error = await axiosWrapper.send(client, { url: `${SELLER}/missing` }).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(AxiosError);
    expect((error as AxiosError).response?.status).toBe(404);
    expect((error as AxiosError).response?.data).toBe("nope");
    expect((error as AxiosError).response?.headers["x-why"]).toBe("gone");
    expect(hits).toBe(1);
    expect(signs).toHaveLength(0);
  });
});
