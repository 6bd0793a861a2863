#!/usr/bin/env node
// Golden sign-in-with-x vectors, made by the reference @x402/extensions (sign-in-with-x) itself:
// its message builders, its payload builder (which signs with the wallet given) and its header
// encoder, with fixed public test keys. x402-pay's tests compare their own output byte for byte.
//
//   node scripts/siwx-vectors.mjs            writes test/vectors/siwx-vectors.json
//   node scripts/siwx-vectors.mjs --check    fails if the committed file differs
//
// Keys: Anvil's public test key #0 (EVM); the clearly fake Solana seed 32 x 0x07 used by every
// Solana test here. EIP-191 (RFC 6979) and Ed25519 signatures are deterministic, so the file is too.

import { readFileSync, writeFileSync } from "node:fs";
import { createRequire } from "node:module";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";
import { createKeyPairSignerFromPrivateKeyBytes } from "@solana/kit";
import {
  createSIWxMessage,
  createSIWxPayload,
  encodeSIWxHeader,
  signEVMMessage,
  signSolanaMessage,
} from "@x402/extensions/sign-in-with-x";
import { privateKeyToAccount } from "viem/accounts";

const out = fileURLToPath(new URL("../test/vectors/siwx-vectors.json", import.meta.url));
// The installed reference's version, from its package.json (found from its entry, wherever npm put it).
const referenceRoot = dirname(dirname(dirname(createRequire(import.meta.url).resolve("@x402/extensions"))));
const reference = JSON.parse(readFileSync(join(referenceRoot, "package.json"), "utf8")).version;

const ANVIL_KEY_0 = "0xac0974bec39a17e36ba4a6b4d238ff944bacb478cbed5efcae784d7bf4f2ff80";
const evm = privateKeyToAccount(ANVIL_KEY_0);
const solana = await createKeyPairSignerFromPrivateKeyBytes(new Uint8Array(32).fill(7));

const BASE = "eip155:8453";
const BASE_SEPOLIA = "eip155:84532";
const SOLANA_MAINNET = "solana:5eykt4UsFv8P8NJdTREpY1vzqKqZKvdp";
const SOLANA_DEVNET = "solana:EtWTRABZaYq6iMfeYKouRu166VU2xqa1";

const premium = "https://api.example.com/premium-data";
const local = "http://127.0.0.1:4021/weather?city=Paris";

/** Each case: the server's `info`, the chain chosen from `supportedChains`, and the request URL. */
const cases = [
  {
    name: "evm: statement, expiry and resources (the spec's example)",
    url: premium,
    chain: { chainId: BASE, type: "eip191" },
    info: {
      domain: "api.example.com",
      uri: premium,
      statement: "Sign in to access premium data",
      version: "1",
      nonce: "a1b2c3d4e5f67890a1b2c3d4e5f67890",
      issuedAt: "2024-01-15T10:30:00.000Z",
      expirationTime: "2024-01-15T10:35:00.000Z",
      resources: [premium],
    },
  },
  {
    name: "evm: as the reference server declares it (domain with port, no statement, no expiry)",
    url: local,
    chain: { chainId: BASE_SEPOLIA, type: "eip191" },
    info: {
      domain: "127.0.0.1:4021",
      uri: local,
      version: "1",
      nonce: "0f1e2d3c4b5a69788796a5b4c3d2e1f0",
      issuedAt: "2025-02-27T16:00:00.000Z",
      resources: [local],
    },
  },
  {
    // A 2.10 server's form, which the 2.27 client refuses (see `signed` below).
    name: "evm: no statement, no expiry, no resources; domain without port",
    url: local,
    chain: { chainId: BASE, type: "eip191" },
    info: { domain: "127.0.0.1", uri: local, version: "1", nonce: "abcdEFGH1234", issuedAt: "2025-02-27T16:00:00Z" },
  },
  {
    name: "evm: every optional line (statement, expiry, not before, request id, two resources)",
    url: premium,
    chain: { chainId: "eip155:1", type: "eip191" },
    info: {
      domain: "api.example.com",
      uri: premium,
      statement: "I accept the terms: https://api.example.com/tos",
      version: "1",
      nonce: "Zx9Yw8Vu7Ts6",
      issuedAt: "2025-02-27T16:00:00.000Z",
      expirationTime: "2025-02-27T16:05:00.000Z",
      notBefore: "2025-02-27T15:59:00.000Z",
      requestId: "req-42",
      resources: [premium, "ipfs://bafybeigdyrzt5sfp7udm7hu76uh7y26nf3efuylqabf3oclgtqy55fbzdi"],
    },
  },
  {
    name: "evm: an empty resources list still prints Resources:",
    url: premium,
    chain: { chainId: BASE, type: "eip191" },
    info: {
      domain: "api.example.com",
      uri: premium,
      version: "1",
      nonce: "a1b2c3d4e5f67890",
      issuedAt: "2025-02-27T16:00:00.000Z",
      resources: [],
    },
  },
  {
    name: "evm: an empty statement is not an absent one (three blank lines)",
    url: premium,
    chain: { chainId: BASE, type: "eip191" },
    info: {
      domain: "api.example.com",
      uri: premium,
      statement: "",
      version: "1",
      nonce: "a1b2c3d4e5f67890",
      issuedAt: "2025-02-27T16:00:00.000Z",
    },
  },
  {
    name: "solana: statement, expiry and resources",
    url: premium,
    chain: { chainId: SOLANA_MAINNET, type: "ed25519" },
    info: {
      domain: "api.example.com",
      uri: premium,
      statement: "Sign in to access premium data",
      version: "1",
      nonce: "a1b2c3d4e5f67890a1b2c3d4e5f67890",
      issuedAt: "2024-01-15T10:30:00.000Z",
      expirationTime: "2024-01-15T10:35:00.000Z",
      resources: [premium],
    },
  },
  {
    name: "solana: as the reference server declares it (domain with port, no statement, no expiry)",
    url: local,
    chain: { chainId: SOLANA_DEVNET, type: "ed25519" },
    info: {
      domain: "127.0.0.1:4021",
      uri: local,
      version: "1",
      nonce: "0f1e2d3c4b5a69788796a5b4c3d2e1f0",
      issuedAt: "2025-02-27T16:00:00.000Z",
      resources: [local],
    },
  },
  {
    name: "solana: every optional line",
    url: premium,
    chain: { chainId: SOLANA_DEVNET, type: "ed25519" },
    info: {
      domain: "api.example.com",
      uri: premium,
      statement: "Sign in",
      version: "1",
      nonce: "Zx9Yw8Vu7Ts6",
      issuedAt: "2025-02-27T16:00:00.000Z",
      expirationTime: "2025-02-27T16:05:00.000Z",
      notBefore: "2025-02-27T15:59:00.000Z",
      requestId: "req-42",
      resources: [premium, local],
    },
  },
  {
    name: "solana: an empty statement and an empty resources list print nothing",
    url: premium,
    chain: { chainId: SOLANA_MAINNET, type: "ed25519" },
    info: {
      domain: "api.example.com",
      uri: premium,
      statement: "",
      version: "1",
      nonce: "a1b2c3d4e5f67890",
      issuedAt: "2025-02-27T16:00:00.000Z",
      resources: [],
    },
  },
];

/**
 * The reference's own payload. Its client refuses a `domain` without the port of the URL (2.27), which
 * 2.10 servers declared: then the payload is put together from its message builder and signers, in
 * the order of the fields createSIWxPayload writes.
 */
async function signed(info, signer, url) {
  if (info.domain === new URL(url).host) return createSIWxPayload(info, signer, url);
  const address = signer.address;
  const message = createSIWxMessage(info, address);
  const signature =
    info.type === "ed25519" ? await signSolanaMessage(message, signer) : await signEVMMessage(message, signer);
  const {
    domain,
    statement,
    uri,
    version,
    chainId,
    type,
    nonce,
    issuedAt,
    expirationTime,
    notBefore,
    requestId,
    resources,
    signatureScheme,
  } = info;
  return {
    domain,
    address,
    statement,
    uri,
    version,
    chainId,
    type,
    nonce,
    issuedAt,
    expirationTime,
    notBefore,
    requestId,
    resources,
    signatureScheme,
    signature,
  };
}

const vectors = [];
for (const { name, url, chain, info } of cases) {
  const signer = chain.type === "ed25519" ? solana : evm;
  const complete = { ...info, ...chain };
  const payload = await signed(complete, signer, url);
  vectors.push({
    name,
    url,
    chain,
    info,
    address: payload.address,
    message: createSIWxMessage(complete, payload.address),
    signature: payload.signature,
    header: encodeSIWxHeader(payload),
  });
}

const json = `${JSON.stringify(
  {
    about: `sign-in-with-x golden vectors made by @x402/extensions ${reference} (scripts/siwx-vectors.mjs). Keys: Anvil #0; Solana seed 32 x 0x07.`,
    evmAddress: evm.address,
    solanaAddress: solana.address,
    vectors,
  },
  null,
  2,
)}\n`;

if (process.argv.includes("--check")) {
  if (readFileSync(out, "utf8") !== json) {
    console.error("test/vectors/siwx-vectors.json differs from what the reference makes now.");
    process.exit(1);
  }
  console.log("test/vectors/siwx-vectors.json is what the reference makes.");
} else {
  writeFileSync(out, json);
  console.log(`wrote ${vectors.length} vectors`);
}
