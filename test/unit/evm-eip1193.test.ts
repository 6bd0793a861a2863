/**
 * eip1193Signer: typed data goes to the wallet as eth_signTypedData_v4 JSON, with the EIP712Domain
 * type the domain's keys call for. The wallet here is an emulation of what an injected wallet does
 * with that JSON (parse it, sign it with the key); the page test in test/browser pays with it in
 * Chromium. Signatures must equal the golden vectors, which proves the JSON is the same typed data.
 */
import { privateKeyToAccount } from "viem/accounts";
import { describe, expect, it } from "vitest";
import { createX402Client } from "../../src";
import { encodeBase64Json, parseChallenge } from "../../src/entries/protocol";
import { eip1193Signer, exactEvm, uptoEvm, type EvmRequester } from "../../src/evm";
import { ANVIL_KEY_0, VECTOR_NOW_MS, countingBytes, evmVectors } from "../support/vectors";
import { engineOf } from "../../src/client";

const account = privateKeyToAccount(ANVIL_KEY_0);
const request = { url: "https://api.example.com/premium-data", method: "GET" };

/** An injected wallet holding ANVIL key 0: answers eth_accounts (lower case, as wallets do) and signs v4 JSON. */
function injectedWallet({ accounts = [account.address.toLowerCase()], reject = false } = {}) {
  const seen: { method: string; params?: readonly unknown[] }[] = [];
  const provider: EvmRequester = {
    async request(args) {
      seen.push(args);
      if (args.method === "eth_accounts" || args.method === "eth_requestAccounts") return accounts;
      if (args.method === "eth_signTypedData_v4") {
        if (reject) throw Object.assign(new Error("User rejected the request."), { code: 4001 });
        const [from, json] = args.params as [string, string];
        if (from.toLowerCase() !== account.address.toLowerCase()) throw new Error("unknown account");
        return account.signTypedData(JSON.parse(json));
      }
      if (args.method === "personal_sign") {
        const [hex, from] = args.params as [`0x${string}`, string];
        if (from.toLowerCase() !== account.address.toLowerCase()) throw new Error("unknown account");
        return account.signMessage({ message: { raw: hex } });
      }
      throw new Error(`unsupported ${args.method}`);
    },
  };
  return { provider, seen };
}

const pay = async (scheme: ReturnType<typeof exactEvm>, requirements: object) =>
  engineOf(createX402Client({ schemes: [scheme], policy: { maxAmountPerPayment: "$10" } })).createPayment(
    parseChallenge({
      header: encodeBase64Json({ x402Version: 2, resource: { url: request.url }, accepts: [requirements] }),
    }),
    request,
  );

describe("eip1193Signer", () => {
  it("EIP-3009 and Permit2 (a domain without version) give the golden vectors' signatures", async () => {
    const { provider, seen } = injectedWallet();
    const signer = await eip1193Signer(provider);
    expect(signer.address).toBe(account.address);
    const options = { signer, now: () => VECTOR_NOW_MS, randomBytes: countingBytes };
    for (const v of [evmVectors.exact_eip3009, evmVectors.exact_permit2]) {
      const payment = await pay(exactEvm(options), v.requirements);
      expect(JSON.stringify(payment.payload.payload)).toBe(JSON.stringify(v.schemeResult.payload));
    }
    const upto = await pay(uptoEvm(options), evmVectors.upto_permit2.requirements);
    expect(JSON.stringify(upto.payload.payload)).toBe(JSON.stringify(evmVectors.upto_permit2.schemeResult.payload));
    const typed = JSON.parse((seen.find((s) => s.method === "eth_signTypedData_v4")!.params as string[])[1]!);
    expect(typed.types.EIP712Domain).toEqual([
      { name: "name", type: "string" },
      { name: "version", type: "string" },
      { name: "chainId", type: "uint256" },
      { name: "verifyingContract", type: "address" },
    ]);
    const permit2 = JSON.parse((seen.filter((s) => s.method === "eth_signTypedData_v4")[1]!.params as string[])[1]!);
    expect(permit2.types.EIP712Domain.map((f: { name: string }) => f.name)).toEqual([
      "name",
      "chainId",
      "verifyingContract",
    ]);
    expect(permit2.message.nonce).toBe(evmVectors.exact_permit2.schemeResult.payload.permit2Authorization.nonce);
    expect(seen.map((s) => s.method).filter((m) => m !== "eth_signTypedData_v4")).toEqual(["eth_accounts"]);
  });

  it("the user declining in the wallet is USER_REJECTED, nothing paid", async () => {
    const signer = await eip1193Signer(injectedWallet({ reject: true }).provider);
    const error = await pay(exactEvm({ signer }), evmVectors.exact_eip3009.requirements).catch((e) => e);
    expect(error.code).toBe("USER_REJECTED");
  });

  it("connect: true asks eth_requestAccounts; address picks among several", async () => {
    const other = "0x209693bc6afc0c5328ba36faf03c514ef312287c";
    const { provider, seen } = injectedWallet({ accounts: [other, account.address.toLowerCase()] });
    const signer = await eip1193Signer(provider, { connect: true, address: account.address });
    expect(signer.address).toBe(account.address);
    expect(seen[0]!.method).toBe("eth_requestAccounts");
  });

  it("says what to do: connect, or which address is missing", async () => {
    await expect(eip1193Signer(undefined as never)).rejects.toThrow(
      "eip1193Signer needs an EIP-1193 provider, such as window.ethereum.",
    );
    await expect(eip1193Signer(injectedWallet({ accounts: [] }).provider)).rejects.toThrow(
      "The wallet exposes no account: connect it first, or pass eip1193Signer(provider, { connect: true }).",
    );
    const other = "0x209693Bc6afc0C5328bA36FaF03C514EF312287C";
    await expect(eip1193Signer(injectedWallet().provider, { address: other })).rejects.toThrow(
      `The wallet does not expose ${other}.`,
    );
    // Entries that are not strings are skipped, not taken for the first account.
    const signer = await eip1193Signer(
      injectedWallet({ accounts: [42 as never, account.address.toLowerCase()] }).provider,
    );
    expect(signer.address).toBe(account.address);
  });

  it.each([
    ["no provider", undefined, {}, "provider"],
    ["no connected account", injectedWallet({ accounts: [] }).provider, {}, "provider"],
    ["accounts that are not addresses", injectedWallet({ accounts: ["nope"] }).provider, {}, "provider"],
    [
      "an address the wallet does not expose",
      injectedWallet().provider,
      { address: "0x209693Bc6afc0C5328bA36FaF03C514EF312287C" },
      "address",
    ],
  ])("%s: INVALID_CONFIG", async (_, provider, options, option) => {
    await expect(eip1193Signer(provider as never, options)).rejects.toMatchObject({
      code: "INVALID_CONFIG",
      details: { option },
    });
  });
});

describe("eip1193Signer: messages (sign-in-with-x)", () => {
  it("signs with personal_sign: the message's UTF-8 bytes in hex, then the checksummed address; viem's own signature", async () => {
    const { provider, seen } = injectedWallet();
    const signer = await eip1193Signer(provider);
    const signature = await signer.signMessage({ message: "héllo" });
    expect(seen.at(-1)).toEqual({ method: "personal_sign", params: ["0x68c3a96c6c6f", account.address] });
    expect(signature).toBe(await account.signMessage({ message: "héllo" }));
  });

  it("passes the wallet's signature on untouched: a smart wallet's longer one, a v of 0", async () => {
    const answers = [`0x${"cd".repeat(200)}`, `0x${"ab".repeat(64)}00`];
    const provider: EvmRequester = {
      request: async ({ method }) => (method === "eth_accounts" ? [account.address] : answers[0] && answers.shift()),
    };
    const signer = await eip1193Signer(provider);
    expect(await signer.signMessage({ message: "x" })).toBe(`0x${"cd".repeat(200)}`);
    expect(await signer.signMessage({ message: "x" })).toBe(`0x${"ab".repeat(64)}00`);
  });
});
