/**
 * Which batch-settlement requirements the scheme pays (src/evm/batch/scheme.ts): each rule of its check at its edges
 * (who authorises the seller's claims, the withdrawal delay's range, the transfer method, the token's EIP-712 domain),
 * and the options it refuses when made. The mutation run found these rules without a test.
 */
import { describe, expect, it } from "vitest";
import { createX402Client } from "../../src";
import { batchSettlementEvm, memoryChannelStore } from "../../src/evm";
import { encodeBase64Json, parseChallenge } from "../../src/entries/protocol";
import { batchRequirement } from "../support/batch-seller";
import { countingSigner, SELLER } from "../support/seller";

const request = { url: `${SELLER}/metered`, method: "GET" };
const signer = countingSigner().signer;

/** "payable", or why the scheme refuses a requirement whose `extra` is changed by `extra`. */
async function verdict(extra: Record<string, unknown>) {
  const base = batchRequirement();
  const requirement = { ...base, extra: { ...base.extra, ...extra } };
  const challenge = parseChallenge({
    header: encodeBase64Json({ x402Version: 2, resource: { url: request.url }, accepts: [requirement] }),
  });
  const client = createX402Client({ schemes: [batchSettlementEvm({ signer })] });
  const { options, rejected } = await client.quote(challenge, request);
  return options.length > 0 ? "payable" : rejected.map((r) => r.reason).join("; ");
}

describe("batchSettlementEvm's check of a requirement", () => {
  it("pays the seller's usual terms", async () => {
    expect(await verdict({})).toBe("payable");
  });

  it("needs who authorises the seller's claims: present, an address, not the zero address", async () => {
    expect(await verdict({ receiverAuthorizer: undefined })).toBe(
      "extra.receiverAuthorizer (who authorises the seller's claims and refunds) is missing",
    );
    expect(await verdict({ receiverAuthorizer: "0x1234" })).toMatch(/^extra\.receiverAuthorizer /);
    expect(await verdict({ receiverAuthorizer: `0x${"0".repeat(40)}` })).toBe(
      "extra.receiverAuthorizer is the zero address",
    );
    expect(await verdict({ receiverAuthorizer: `0x${"0".repeat(39)}1` })).toBe("payable");
  });

  it("a withdrawal delay from 900 s to 30 days, whole seconds; none is the least", async () => {
    const refused = (delay: unknown) => `extra.withdrawDelay ${JSON.stringify(delay)} is not 900 to 2592000 seconds`;
    for (const delay of [899, 2_592_001, 900.5, "900", -900, 0])
      expect(await verdict({ withdrawDelay: delay })).toBe(refused(delay));
    for (const delay of [900, 2_592_000, undefined]) expect(await verdict({ withdrawDelay: delay })).toBe("payable");
  });

  it("transfers by EIP-3009 (the default) or Permit2, nothing else", async () => {
    expect(await verdict({ assetTransferMethod: "eip3009" })).toBe("payable");
    expect(await verdict({ assetTransferMethod: "permit2" })).toBe("payable");
    expect(await verdict({ assetTransferMethod: "eip2612" })).toBe(
      'asset transfer method "eip2612" is not supported (only eip3009 and permit2)',
    );
  });

  it("EIP-3009 needs the token's EIP-712 domain (name and version); Permit2 does not", async () => {
    const missing = "extra.name and extra.version (the token's EIP-712 domain) are missing";
    expect(await verdict({ name: undefined })).toBe(missing);
    expect(await verdict({ version: "" })).toBe(missing);
    expect(await verdict({ name: 7 })).toBe(missing);
    expect(await verdict({ name: undefined, version: undefined, assetTransferMethod: "permit2" })).toBe("payable");
  });
});

describe("batchSettlementEvm's options", () => {
  const made = (options: Record<string, unknown>) => {
    try {
      batchSettlementEvm({ signer, ...options } as never);
      return "made";
    } catch (error) {
      return (error as { details?: { option?: string } }).details?.option;
    }
  };

  it("a salt is 32 bytes of hex, exactly", () => {
    expect(made({ salt: `0x${"1".repeat(64)}` })).toBe("made");
    for (const salt of [`0x${"1".repeat(63)}`, `0x${"1".repeat(65)}`, `1x${"1".repeat(64)}`, `0x${"g".repeat(64)}`])
      expect(made({ salt })).toBe("salt");
  });

  it("storage is a channel store", () => {
    expect(made({ storage: memoryChannelStore() })).toBe("made");
    expect(made({ storage: {} })).toBe("storage");
  });

  it("deposit is { multiple } or { amount }, one of them, or a function", () => {
    for (const deposit of [{ multiple: 0 }, { multiple: 3 }, { amount: "5" }, () => 1n])
      expect(made({ deposit })).toBe("made");
    for (const deposit of [
      {},
      { multiple: 1, amount: "1" },
      { multiple: -1 },
      { multiple: 1.5 },
      { amount: "1.5" },
      5,
      null,
    ])
      expect(made({ deposit })).toBe("deposit");
  });
});
