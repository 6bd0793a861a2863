#!/usr/bin/env node
// Golden auth-capture vectors, made by the reference buyer itself (@x402/evm's auth-capture client): the payload it
// builds and signs for fixed requirements, at a fixed time and with fixed randomness. x402-pay's tests
// (test/unit/auth-capture.test.ts) make the same payloads with authCaptureEvm and compare them byte for byte.
//
//   node scripts/auth-capture-vectors.mjs            writes test/vectors/auth-capture.json
//   node scripts/auth-capture-vectors.mjs --check    fails if the committed file differs
//
// Key: Anvil's public test key #0. Time: Date.now is fixed. Randomness: the reference draws its 32-byte salt nonce
// with one crypto.getRandomValues call, answered here with the bytes 0x01..0x20. EIP-712 signatures are
// deterministic (RFC 6979), so the file is too.

import { readFileSync, writeFileSync } from "node:fs";
import { createRequire } from "node:module";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";
import { AuthCaptureEvmScheme } from "@x402/evm/auth-capture/client";
import { privateKeyToAccount } from "viem/accounts";

const out = fileURLToPath(new URL("../test/vectors/auth-capture.json", import.meta.url));
const referenceRoot = dirname(dirname(dirname(createRequire(import.meta.url).resolve("@x402/evm"))));
const reference = JSON.parse(readFileSync(join(referenceRoot, "package.json"), "utf8")).version;

const ANVIL_KEY_0 = "0xac0974bec39a17e36ba4a6b4d238ff944bacb478cbed5efcae784d7bf4f2ff80";
const account = privateKeyToAccount(ANVIL_KEY_0);
const NOW_MS = 1_740_672_000_000;
const NOW = NOW_MS / 1000;
const RANDOM = Array.from({ length: 32 }, (_, i) => i + 1);

const base = {
  scheme: "auth-capture",
  network: "eip155:84532",
  amount: "10000",
  asset: "0x036CbD53842c5426634e7929541eC2318f3dCF7e",
  payTo: "0x209693Bc6afc0C5328bA36FaF03C514EF312287C",
  maxTimeoutSeconds: 60,
  extra: {
    name: "USDC",
    version: "2",
    captureAuthorizer: "0x70997970C51812dc3A010C7d01b50e0d17dc79C8",
    captureDeadline: NOW + 3600,
    refundDeadline: NOW + 86_400,
    minFeeBps: 0,
    maxFeeBps: 100,
    feeRecipient: "0x3C44CdDdB6a900fa2b585dd299e03d12FA4293BC",
  },
};
const RECEIVER_AUTHORIZER = "0x90F79bf6EB2c4f870365E785982E1f101E93b906";
const withExtra = (extra) => ({ ...base, extra: { ...base.extra, ...extra } });

const cases = {
  eip3009: base,
  permit2: withExtra({ assetTransferMethod: "permit2" }),
  "eip3009, salt bound to a receiver authorizer": withExtra({ receiverAuthorizer: RECEIVER_AUTHORIZER }),
  "permit2, salt bound to a receiver authorizer": withExtra({
    receiverAuthorizer: RECEIVER_AUTHORIZER,
    assetTransferMethod: "permit2",
  }),
  "eip3009, salt bound to a policy": withExtra({ policy: RECEIVER_AUTHORIZER }),
  "eip3009, escrow v1.0": withExtra({ authCaptureEscrow: "0xBdEA0D1bcC5966192B070Fdf62aB4EF5b4420cff" }),
  "permit2, escrow v1.0, lower-case addresses": {
    ...withExtra({ authCaptureEscrow: "0xbdea0d1bcc5966192b070fdf62ab4ef5b4420cff", assetTransferMethod: "permit2" }),
    asset: base.asset.toLowerCase(),
    payTo: base.payTo.toLowerCase(),
  },
};

const realNow = Date.now;
const realRandom = crypto.getRandomValues.bind(crypto);
Date.now = () => NOW_MS;
crypto.getRandomValues = (bytes) => {
  bytes.set(RANDOM.slice(0, bytes.length));
  return bytes;
};
const scheme = new AuthCaptureEvmScheme({
  address: account.address,
  signTypedData: (request) => account.signTypedData(request),
});
const vectors = [];
for (const [name, requirements] of Object.entries(cases)) {
  const { payload } = await scheme.createPaymentPayload(2, requirements);
  vectors.push({ name, requirements, payload });
}
Date.now = realNow;
crypto.getRandomValues = realRandom;

const file = `${JSON.stringify(
  {
    reference: `@x402/evm ${reference}`,
    key: "anvil #0",
    nowMs: NOW_MS,
    random: Buffer.from(RANDOM).toString("hex"),
    vectors,
  },
  null,
  2,
)}\n`;
if (process.argv.includes("--check")) {
  if (readFileSync(out, "utf8") !== file) {
    console.error("test/vectors/auth-capture.json differs from what the reference makes now");
    process.exit(1);
  }
} else writeFileSync(out, file);
