#!/usr/bin/env node
// Compiles the interop test contracts with the solc npm package (solc-js):
//
//   contracts/TestUSDC.sol       -> contracts/TestUSDC.json      (USDC stand-in, EIP-2612 + EIP-3009)
//   contracts/TryAggregate.sol   -> contracts/TryAggregate.json  (Multicall3 tryAggregate stand-in)
//   contracts/PlainToken.sol     -> contracts/PlainToken.json    (ERC-20 without EIP-2612 / EIP-3009)
//   contracts/Permit2.sol        -> contracts/Permit2.json       (Permit2 signature transfers)
//   contracts/Permit2Proxies.sol -> contracts/x402ExactPermit2Proxy.json, contracts/x402UptoPermit2Proxy.json
//   contracts/BatchSettlement.sol   -> contracts/BatchSettlement.json (batch-settlement channels)
//   contracts/DepositCollectors.sol -> contracts/ERC3009DepositCollector.json, contracts/Permit2DepositCollector.json
//   contracts/AuthCaptureEscrow.sol -> contracts/AuthCaptureEscrow.json, contracts/ERC3009PaymentCollector.json,
//                                      contracts/Permit2PaymentCollector.json, contracts/OperatorRefundCollector.json
//
//   node scripts/compile-token.mjs
//
// The compiler build is pinned: the script refuses to run with any other solc-js, so the committed
// artifacts can always be reproduced byte for byte (test/interop/token-artifact.test.ts recompiles
// and compares). Each artifact records its compiler settings for that purpose.

import { createHash } from "node:crypto";
import { readFileSync, writeFileSync } from "node:fs";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";
import solc from "solc";

/** The exact solc-js build the artifacts are produced with. */
const SOLC_VERSION = "0.8.30+commit.73712a01.Emscripten.clang";

/** Compiler settings (outputSelection aside), stored in each artifact. */
const SETTINGS = {
  optimizer: { enabled: true, runs: 200 },
  evmVersion: "cancun",
};

/** Contracts to build: the artifact is contracts/<name>.json, the source contracts/<source>.sol (default: <name>). */
const CONTRACTS = [
  { name: "TestUSDC" },
  { name: "TryAggregate" },
  { name: "PlainToken" },
  { name: "Permit2" },
  { name: "x402ExactPermit2Proxy", source: "Permit2Proxies" },
  { name: "x402UptoPermit2Proxy", source: "Permit2Proxies" },
  { name: "BatchSettlement" },
  { name: "ERC3009DepositCollector", source: "DepositCollectors" },
  { name: "Permit2DepositCollector", source: "DepositCollectors" },
  { name: "AuthCaptureEscrow" },
  { name: "ERC3009PaymentCollector", source: "AuthCaptureEscrow" },
  { name: "Permit2PaymentCollector", source: "AuthCaptureEscrow" },
  { name: "OperatorRefundCollector", source: "AuthCaptureEscrow" },
];

// The artifacts record contracts/<Name>.sol as the source unit, relative to test/localnet, where they live.
const root = join(dirname(fileURLToPath(import.meta.url)), "..", "test", "localnet");

if (solc.version() !== SOLC_VERSION) {
  console.error(
    `compile-token: expected solc-js ${SOLC_VERSION}, found ${solc.version()}.\n` +
      "Install the pinned version (npm install -D solc@0.8.30) or update SOLC_VERSION and regenerate.",
  );
  process.exit(1);
}

for (const { name: contractName, source: sourceFile = contractName } of CONTRACTS) {
  // Source unit name as recorded in the contract metadata (and so in the bytecode's metadata hash).
  const sourceName = `contracts/${sourceFile}.sol`;
  const source = readFileSync(join(root, sourceName), "utf8");
  const input = {
    language: "Solidity",
    sources: { [sourceName]: { content: source } },
    settings: {
      ...SETTINGS,
      outputSelection: {
        [sourceName]: { [contractName]: ["abi", "evm.bytecode.object", "evm.deployedBytecode.object"] },
      },
    },
  };

  const output = JSON.parse(solc.compile(JSON.stringify(input)));
  const problems = output.errors ?? [];
  for (const problem of problems) console.error(problem.formattedMessage ?? problem.message);
  if (problems.some((problem) => problem.severity === "error")) process.exit(1);

  const contract = output.contracts?.[sourceName]?.[contractName];
  if (!contract) {
    console.error(`compile-token: ${contractName} missing from the compiler output`);
    process.exit(1);
  }

  const artifact = {
    contractName,
    compiler: SOLC_VERSION,
    sourceName,
    sourceSha256: createHash("sha256").update(source, "utf8").digest("hex"),
    settings: SETTINGS,
    abi: contract.abi,
    bytecode: `0x${contract.evm.bytecode.object}`,
    deployedBytecode: `0x${contract.evm.deployedBytecode.object}`,
  };
  writeFileSync(join(root, "contracts", `${contractName}.json`), `${JSON.stringify(artifact, null, 2)}\n`);
  console.log(
    `compile-token: wrote contracts/${contractName}.json (runtime ${(artifact.deployedBytecode.length - 2) / 2} bytes)`,
  );
}
