/**
 * The EIP-3009 digest x402-pay computes itself (signed with a viem LocalAccount's `sign({ hash })`) is
 * viem's `hashTypedData` of the same typed data, on any token domain and authorization; and exactEvm
 * signs the same bytes through either path.
 */
import fc from "fast-check";
import { hashTypedData, type Hex } from "viem";
import { privateKeyToAccount } from "viem/accounts";
import { describe, expect, it } from "vitest";
import { parseChallenge, encodeBase64Json, type PaymentRequirement } from "../../src";
import { exactEvm } from "../../src/evm";
import { transferWithAuthorizationDigest } from "../../src/evm/eip712";
import { v2Challenge } from "../support/seller";
import { transferWithAuthorizationFields } from "../support/vectors";

const types = { TransferWithAuthorization: transferWithAuthorizationFields };

const hex = (bytes: number) => fc.uint8Array({ minLength: bytes, maxLength: bytes }).map((b) => `0x${Buffer.from(b).toString("hex")}` as Hex);
const uint256 = fc.bigInt({ min: 0n, max: 2n ** 256n - 1n });

describe("the EIP-3009 digest", () => {
  it("is viem's hashTypedData, for any domain and authorization (fast-check)", () => {
    fc.assert(
      fc.property(
        fc.record({
          name: fc.string({ unit: "grapheme", minLength: 1, maxLength: 12 }),
          version: fc.string({ minLength: 1, maxLength: 4 }),
          chainId: fc.integer({ min: 1, max: Number.MAX_SAFE_INTEGER }),
          verifyingContract: hex(20),
        }),
        fc.record({ from: hex(20), to: hex(20), value: uint256, validAfter: uint256, validBefore: uint256, nonce: hex(32) }),
        (domain, message) => {
          const ours = transferWithAuthorizationDigest(domain, {
            ...message,
            value: String(message.value),
            validAfter: String(message.validAfter),
            validBefore: String(message.validBefore),
          });
          return ours === hashTypedData({ domain, types, primaryType: "TransferWithAuthorization", message });
        },
      ),
      { numRuns: 500 },
    );
  });

  it("the same token twice uses the kept domain separator, and another token its own", () => {
    const domain = { name: "USDC", version: "2", chainId: 84532, verifyingContract: "0x036CbD53842c5426634e7929541eC2318f3dCF7e" as Hex };
    const message = { from: "0x1111111111111111111111111111111111111111", to: "0x2222222222222222222222222222222222222222", value: "1", validAfter: "0", validBefore: "9", nonce: `0x${"ab".repeat(32)}` } as const;
    const viem = (d: typeof domain) => hashTypedData({ domain: d, types, primaryType: "TransferWithAuthorization", message: { ...message, value: 1n, validAfter: 0n, validBefore: 9n } });
    for (const d of [domain, domain, { ...domain, version: "1" }, { ...domain, name: "USD Coin" }, { ...domain, chainId: 8453 }, { ...domain, verifyingContract: "0x833589fCD6eDb6E08f4c7C32D4f71b54bdA02913" as Hex }]) {
      expect(transferWithAuthorizationDigest(d, message)).toBe(viem(d));
    }
  });
});

describe("exactEvm signs the same bytes with a LocalAccount's sign({ hash }) as with signTypedData", () => {
  it("EIP-3009, v2 and v1", async () => {
    const account = privateKeyToAccount("0xac0974bec39a17e36ba4a6b4d238ff944bacb478cbed5efcae784d7bf4f2ff80");
    const typedOnly = { address: account.address, signTypedData: (request: never) => account.signTypedData(request) };
    let digests = 0;
    const local = { ...account, sign: (args: { hash: Hex }) => (digests++, account.sign(args)) };
    const fixed = { now: () => 1_700_000_000_000, randomBytes: (n: number) => new Uint8Array(n).fill(7) };
    const v2 = parseChallenge({ header: encodeBase64Json(v2Challenge()) }).requirements[0]! as PaymentRequirement;
    const v1 = { ...parseChallenge({ header: undefined, body: { x402Version: 1, accepts: [{ scheme: "exact", network: "base-sepolia", maxAmountRequired: "1000", resource: "https://a.example/x", description: "", mimeType: "", payTo: v2.payTo, maxTimeoutSeconds: 60, asset: v2.asset, extra: { name: "USDC", version: "2" } }] } }).requirements[0]!, caip2: "eip155:84532" } as PaymentRequirement;
    for (const requirement of [v2, v1]) {
      const context = { challenge: undefined as never, request: { url: "https://a.example/x", method: "GET" } };
      const byHash = await exactEvm({ signer: local, ...fixed }).createPayload(requirement, context);
      const byTypedData = await exactEvm({ signer: typedOnly, ...fixed }).createPayload(requirement, context);
      expect(byHash).toEqual(byTypedData);
    }
    expect(digests).toBe(2);
  });
});
