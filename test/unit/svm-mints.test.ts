// Solana mint facts (decimals, token program) are read once per RPC and mint: counted at the RPC, for
// sequential and concurrent payments, a failed read, a payment the seller refuses (msw), an abort, and the bound.
import { HttpResponse, http } from "msw";
import { describe, expect, it } from "vitest";
import { createX402Client } from "../../src";
import { engineOf } from "../../src/client";
import { encodeBase64Json, parseChallenge } from "../../src/entries/protocol";
import { wrapFetchWithPayment } from "../../src/fetch";
import { exactSvm, SOLANA_DEVNET, TOKEN_PROGRAM } from "../../src/svm";
import { routeRpc } from "../../src/svm/endpoints";
import { mintCache } from "../../src/svm/mints";
import { useMswServer } from "../support/msw";
import { decodeTransaction, fakeRpc, rpcResult, svmRequirement, USDC_DEVNET } from "../support/svm";
import { countingSvmSigner } from "../support/wallets";

const server = useMswServer();
const RESOURCE = "https://seller.example/solana";
const OTHER_MINT = "So11111111111111111111111111111111111111112";

type Rpc = ReturnType<typeof fakeRpc>;
const mintReads = (rpc: Rpc, mint = USDC_DEVNET) => rpc.calls.filter((c) => c === `getAccountInfo ${mint}`).length;

/** A scheme on `rpc`, given as devnet's RPC in a map (no genesis-hash read to count around). */
const schemeOn = (rpc: Rpc) => exactSvm({ signer: countingSvmSigner().signer, rpc: { [SOLANA_DEVNET]: rpc } });

/** Signs one payment of `requirement` through a client's engine, as the wrappers do. */
function pay(scheme: ReturnType<typeof exactSvm>, requirement = svmRequirement(), signal?: AbortSignal) {
  const client = createX402Client({ schemes: [scheme], policy: { allowUnknownAssets: true } });
  const challenge = parseChallenge({
    header: encodeBase64Json({ x402Version: 2, resource: { url: RESOURCE }, accepts: [requirement] }),
  });
  return engineOf(client).createPayment(challenge, { url: RESOURCE, method: "GET", signal });
}

/** A promise to hold an RPC answer back, and its release. */
function gate() {
  let release!: () => void;
  const opened = new Promise<void>((resolve) => (release = resolve));
  return { opened, release };
}

/** The decimals a signed payment's TransferChecked carries (its data: 12, amount u64, decimals). */
function decimalsOf(transaction: string): number | undefined {
  const { message } = decodeTransaction(transaction);
  return message.instructions.find((i) => i.programAddress === TOKEN_PROGRAM)?.data?.[9];
}

describe("a mint is read once per RPC and mint", () => {
  it("N sequential payments in one mint read it once; the blockhash is read for each", async () => {
    const rpc = fakeRpc();
    const scheme = schemeOn(rpc);
    for (let i = 0; i < 5; i++) await pay(scheme);
    expect(mintReads(rpc)).toBe(1);
    expect(rpc.calls.filter((c) => c === "getLatestBlockhash")).toHaveLength(5);
  });

  it("each mint, and each RPC, is read on its own", async () => {
    const rpc = fakeRpc();
    const scheme = schemeOn(rpc);
    await pay(scheme);
    await pay(scheme, svmRequirement({}, { asset: OTHER_MINT }));
    await pay(scheme, svmRequirement({}, { asset: OTHER_MINT }));
    expect([mintReads(rpc), mintReads(rpc, OTHER_MINT)]).toEqual([1, 1]);
    // Another scheme keeps its own: its RPC is asked too.
    const other = fakeRpc();
    await pay(schemeOn(other));
    expect(mintReads(other)).toBe(1);
  });

  it("concurrent first payments share one read", async () => {
    const held = gate();
    const rpc = fakeRpc({
      answer: { getAccountInfo: () => held.opened.then(() => rpcResult("getAccountInfo")) },
    });
    const scheme = schemeOn(rpc);
    const payments = Promise.all([pay(scheme), pay(scheme), pay(scheme)]);
    await new Promise((resolve) => setTimeout(resolve, 10));
    held.release();
    expect(await payments).toHaveLength(3);
    expect(mintReads(rpc)).toBe(1);
  });

  it("a failed read is not kept: the next payment reads again, and then keeps it", async () => {
    let failing = true;
    const rpc = fakeRpc({
      answer: {
        getAccountInfo: () => {
          if (failing) throw new Error("unavailable");
          return rpcResult("getAccountInfo");
        },
      },
    });
    const scheme = schemeOn(rpc);
    await expect(pay(scheme)).rejects.toMatchObject({ code: "RPC_FAILED", details: { rpcMethod: "getAccountInfo" } });
    failing = false;
    await pay(scheme);
    await pay(scheme);
    expect(mintReads(rpc)).toBe(2);
  });

  it("an account that is not a mint (yet) is not kept", async () => {
    let exists = false;
    const rpc = fakeRpc({ answer: { getAccountInfo: () => rpcResult("getAccountInfo", { exists }) } });
    const scheme = schemeOn(rpc);
    await expect(pay(scheme)).rejects.toMatchObject({
      code: "UNPAYABLE_REQUIREMENT",
      message: expect.stringContaining("(no such account)"),
    });
    exists = true;
    await pay(scheme);
    await pay(scheme);
    expect(mintReads(rpc)).toBe(2);
  });

  it("one caller's abort fails only its own payment; the shared read serves the others and is kept", async () => {
    const held = gate();
    const rpc = fakeRpc({
      answer: { getAccountInfo: () => held.opened.then(() => rpcResult("getAccountInfo")) },
    });
    const scheme = schemeOn(rpc);
    const leaving = new AbortController();
    const left = pay(scheme, svmRequirement(), leaving.signal).catch((e) => e);
    const staying = pay(scheme);
    await new Promise((resolve) => setTimeout(resolve, 10));
    leaving.abort(new Error("user left"));
    expect(await left).toMatchObject({ code: "ABORTED" });
    held.release();
    await expect(staying).resolves.toBeDefined();
    await pay(scheme);
    expect(mintReads(rpc)).toBe(1);
    expect(rpc.signals[rpc.calls.indexOf(`getAccountInfo ${USDC_DEVNET}`)]?.aborted).toBe(false);
  });

  it("the last caller's abort stops the read, and leaves nothing behind", async () => {
    let hold = true;
    const rpc = fakeRpc({
      answer: {
        getAccountInfo: (abortSignal) =>
          hold
            ? new Promise((_, reject) => abortSignal!.addEventListener("abort", () => reject(abortSignal!.reason)))
            : rpcResult("getAccountInfo"),
      },
    });
    const scheme = schemeOn(rpc);
    const controller = new AbortController();
    const left = pay(scheme, svmRequirement(), controller.signal).catch((e) => e);
    await new Promise((resolve) => setTimeout(resolve, 10));
    controller.abort(new Error("user left"));
    expect(await left).toMatchObject({ code: "ABORTED" });
    expect(rpc.signals[0]?.aborted).toBe(true);
    hold = false;
    await expect(pay(scheme)).resolves.toBeDefined();
    expect(mintReads(rpc)).toBe(2);
  });
});

describe("a payment the seller refuses reads the mint again", () => {
  it("facts gone wrong are set right by the next payment", async () => {
    // The RPC first answers 9 decimals (a wrong answer); the mint has 6, so the seller refuses a payment saying 9.
    let decimals = 9;
    const rpc = fakeRpc({ answer: { getAccountInfo: () => rpcResult("getAccountInfo", { decimals }) } });
    const requirement = svmRequirement();
    const challenge = { x402Version: 2, resource: { url: RESOURCE }, accepts: [requirement] };
    const seen: (number | undefined)[] = [];
    server.use(
      http.get(RESOURCE, ({ request }) => {
        const signature = request.headers.get("payment-signature");
        if (!signature) return HttpResponse.json({}, { status: 402, headers: { "payment-required": b64(challenge) } });
        const { payload } = JSON.parse(Buffer.from(signature, "base64").toString("utf8"));
        seen.push(decimalsOf(payload.transaction));
        if (seen.at(-1) !== 6) {
          const refusal = { ...challenge, error: "invalid_exact_svm_payload_transaction_instructions" };
          return HttpResponse.json({}, { status: 402, headers: { "payment-required": b64(refusal) } });
        }
        const settled = { success: true, transaction: "5".repeat(64), network: SOLANA_DEVNET, payer: "" };
        return HttpResponse.json({ ok: true }, { headers: { "payment-response": b64(settled) } });
      }),
    );
    const paidFetch = wrapFetchWithPayment(fetch, createX402Client({ schemes: [schemeOn(rpc)] }));

    await expect(paidFetch(RESOURCE)).rejects.toMatchObject({ code: "PAYMENT_REJECTED" });
    decimals = 6;
    expect((await paidFetch(RESOURCE)).status).toBe(200);
    expect((await paidFetch(RESOURCE)).status).toBe(200);
    expect(seen).toEqual([9, 6, 6]);
    // Read for the first payment, again after the refusal, then kept.
    expect(mintReads(rpc)).toBe(2);
  });
});

describe("the cache is bounded", () => {
  const endpoint = routeRpc({ [SOLANA_DEVNET]: fakeRpc() })(SOLANA_DEVNET)!;
  const rpc = endpoint.rpc as Rpc;
  const read = (mint: string) => mints.read(endpoint, mint, { timeoutMs: 1000 });
  const mints = mintCache(2);

  it("holds the most recently used mints; the least recently used is let go", async () => {
    const [a, b, c] = [USDC_DEVNET, OTHER_MINT, TOKEN_PROGRAM];
    await read(a);
    await read(b);
    await read(a); // a is now the most recently used
    await read(c); // over the bound: b goes
    await read(a);
    expect([mintReads(rpc, a), mintReads(rpc, b), mintReads(rpc, c)]).toEqual([1, 1, 1]);
    await read(b);
    expect(mintReads(rpc, b)).toBe(2);
    expect(await read(a)).toEqual({ decimals: 6, tokenProgram: TOKEN_PROGRAM });
  });
});

function b64(value: unknown): string {
  return Buffer.from(JSON.stringify(value), "utf8").toString("base64");
}
