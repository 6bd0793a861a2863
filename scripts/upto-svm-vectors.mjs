#!/usr/bin/env node
// Golden Solana `upto` vectors, made by the reference client itself (@x402/svm `upto/client`,
// UptoSvmScheme.createPaymentPayload): the payment-channel open it signs, with fixed clearly fake
// keys, a fixed clock and fixed randomness, and every RPC read answered by the requirement's own
// hints (tokenProgram, recentBlockhash, recentSlot), so no network is used. x402-pay's tests compare
// their own payloads byte for byte.
//
//   node scripts/upto-svm-vectors.mjs            writes test/vectors/upto-svm.json
//   node scripts/upto-svm-vectors.mjs --check    fails if the committed file differs
//
// Keys: Ed25519 seeds 32 x 0x01 (buyer), 0x02 (facilitator fee payer), 0x03 (receiver authorizer),
// 0x04 (payTo). Clock: Date.now() = 1740672000000. Randomness: every getRandomValues call fills its
// array with 1, 2, 3, ... (the salt's 8 bytes, then the memo nonce's 16). Ed25519 is deterministic.

import { readFileSync, writeFileSync } from "node:fs";
import { createRequire } from "node:module";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";
import { createKeyPairSignerFromPrivateKeyBytes, getBase58Decoder } from "@solana/kit";
import { UptoSvmScheme } from "@x402/svm/upto/client";

const out = fileURLToPath(new URL("../test/vectors/upto-svm.json", import.meta.url));
const referenceRoot = dirname(dirname(dirname(createRequire(import.meta.url).resolve("@x402/svm"))));
const reference = JSON.parse(readFileSync(join(referenceRoot, "package.json"), "utf8")).version;

const NOW_MS = 1740672000000;
const key = (byte) => createKeyPairSignerFromPrivateKeyBytes(new Uint8Array(32).fill(byte));
const [buyer, feePayer, receiverAuthorizer, payTo] = await Promise.all([1, 2, 3, 4].map(key));

const TOKEN = "TokenkegQfeZyiNwAJbNbGKPFXCWuBvf9Ss623VQ5DA";
const TOKEN_2022 = "TokenzQdBNbLqP5VEhdkAS6EPFLC1PHnBqCXEpPxuEb";
const requirement = {
  scheme: "upto",
  network: "solana:EtWTRABZaYq6iMfeYKouRu166VU2xqa1",
  amount: "1000000",
  asset: "4zMMC9srt5Ri5X14GAgXhaHii3GnPAEERYPJgZJDncDU",
  payTo: payTo.address,
  maxTimeoutSeconds: 300,
  extra: {
    paymentFlow: "escrow",
    feePayer: feePayer.address,
    receiverAuthorizer: receiverAuthorizer.address,
    withdrawDelay: 900,
    tokenProgram: TOKEN,
    recentBlockhash: getBase58Decoder().decode(new Uint8Array(32).fill(7)),
    lastValidBlockHeight: "123456",
    recentSlot: "400000000",
  },
};
const withExtra = (extra) => ({ ...requirement, extra: { ...requirement.extra, ...extra } });

const cases = [
  { name: "default: a random memo nonce", requirement },
  { name: "the server's memo", requirement: withExtra({ memo: "invoice-42" }) },
  {
    name: "the fee payer is also the receiver authorizer",
    requirement: withExtra({ receiverAuthorizer: feePayer.address }),
  },
  { name: "a Token-2022 mint", requirement: withExtra({ tokenProgram: TOKEN_2022 }) },
];

const realNow = Date.now;
const realRandom = crypto.getRandomValues.bind(crypto);
const vectors = [];
try {
  Date.now = () => NOW_MS;
  crypto.getRandomValues = (array) => {
    for (let i = 0; i < array.length; i++) array[i] = (i + 1) & 0xff;
    return array;
  };
  const scheme = new UptoSvmScheme(buyer);
  for (const { name, requirement } of cases) {
    const { x402Version, payload } = await scheme.createPaymentPayload(2, requirement);
    vectors.push({ name, requirement, x402Version, payload });
  }
} finally {
  Date.now = realNow;
  crypto.getRandomValues = realRandom;
}

const json = `${JSON.stringify(
  {
    about:
      `Solana upto golden vectors made by @x402/svm ${reference} upto/client (scripts/upto-svm-vectors.mjs). ` +
      "Seeds 32 x 0x01 buyer, 0x02 fee payer, 0x03 receiver authorizer, 0x04 payTo; " +
      "now 1740672000000 ms; random bytes 1, 2, 3, ... per draw.",
    nowMs: NOW_MS,
    buyer: buyer.address,
    vectors,
  },
  null,
  2,
)}\n`;

if (process.argv.includes("--check")) {
  if (readFileSync(out, "utf8") !== json) {
    console.error("test/vectors/upto-svm.json differs from what the reference makes now.");
    process.exit(1);
  }
  console.log("test/vectors/upto-svm.json is what the reference makes.");
} else {
  writeFileSync(out, json);
  console.log(`wrote ${vectors.length} vectors`);
}
