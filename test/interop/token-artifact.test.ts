// contracts/<Name>.json must be what its source (recorded in the artifact, e.g. contracts/<Name>.sol)
// compiles to with the pinned solc-js build and the settings recorded in the artifact. Regenerate
// with: node scripts/compile-token.mjs

import { createHash } from "node:crypto";
import { readFileSync } from "node:fs";
import { x402ExactPermit2ProxyABI, x402UptoPermit2ProxyABI } from "@x402/evm";
import type { Abi } from "viem";
import { formatAbiItem, formatAbiParams } from "viem/utils";
import { describe, expect, it } from "vitest";
import solc from "solc";

interface Artifact {
  contractName: string;
  compiler: string;
  sourceName: string;
  sourceSha256: string;
  settings: Record<string, unknown>;
  abi: unknown[];
  bytecode: string;
  deployedBytecode: string;
}

const read = (path: string) => readFileSync(new URL(path, import.meta.url), "utf8");
const load = (name: string) => {
  const artifact = JSON.parse(read(`../localnet/contracts/${name}.json`)) as Artifact;
  return { artifact, source: read(`../localnet/${artifact.sourceName}`) };
};

const ARTIFACTS = [
  "TestUSDC",
  "TryAggregate",
  "PlainToken",
  "Permit2",
  "x402ExactPermit2Proxy",
  "x402UptoPermit2Proxy",
  "BatchSettlement",
  "ERC3009DepositCollector",
  "Permit2DepositCollector",
  "AuthCaptureEscrow",
  "ERC3009PaymentCollector",
  "Permit2PaymentCollector",
  "OperatorRefundCollector",
];

describe.each(ARTIFACTS)("contracts/%s.json", (name) => {
  const { artifact, source } = load(name);

  it("was built from the current source", () => {
    expect(artifact.contractName).toBe(name);
    expect(createHash("sha256").update(source, "utf8").digest("hex")).toBe(artifact.sourceSha256);
  });

  it("was built by the installed (pinned) solc-js", () => {
    expect(solc.version()).toBe(artifact.compiler);
  });

  it("matches a fresh compilation byte for byte", { timeout: 15_000 }, () => {
    const { contractName, sourceName } = artifact;
    const input = {
      language: "Solidity",
      sources: { [sourceName]: { content: source } },
      settings: {
        ...artifact.settings,
        outputSelection: {
          [sourceName]: { [contractName]: ["abi", "evm.bytecode.object", "evm.deployedBytecode.object"] },
        },
      },
    };
    const output = JSON.parse(solc.compile(JSON.stringify(input))) as {
      errors?: { severity: string; formattedMessage: string }[];
      contracts: Record<string, Record<string, { abi: unknown[]; evm: Record<string, { object: string }> }>>;
    };
    const errors = (output.errors ?? []).filter((e) => e.severity === "error");
    expect(errors.map((e) => e.formattedMessage)).toEqual([]);
    const compiled = output.contracts[sourceName]?.[contractName];
    expect(compiled).toBeDefined();
    expect(compiled?.abi).toEqual(artifact.abi);
    expect(`0x${compiled?.evm.bytecode?.object}`).toBe(artifact.bytecode);
    expect(`0x${compiled?.evm.deployedBytecode?.object}`).toBe(artifact.deployedBytecode);
  });
});

describe("TestUSDC ABI", () => {
  const { artifact } = load("TestUSDC");

  it("has the token surface the reference facilitator and clients use", () => {
    const signatures = artifact.abi
      .filter(
        (item): item is { type: string; name: string; inputs: { type: string }[] } =>
          (item as { type?: string }).type === "function",
      )
      .map((fn) => `${fn.name}(${fn.inputs.map((input) => input.type).join(",")})`);
    expect(signatures).toEqual(
      expect.arrayContaining([
        // settle (EOA signature split into v,r,s; smart-wallet signature as bytes)
        "transferWithAuthorization(address,address,uint256,uint256,uint256,bytes32,uint8,bytes32,bytes32)",
        "transferWithAuthorization(address,address,uint256,uint256,uint256,bytes32,bytes)",
        "receiveWithAuthorization(address,address,uint256,uint256,uint256,bytes32,uint8,bytes32,bytes32)",
        "receiveWithAuthorization(address,address,uint256,uint256,uint256,bytes32,bytes)",
        // verify-time diagnostics
        "balanceOf(address)",
        "name()",
        "version()",
        "authorizationState(address,bytes32)",
        // EIP-2612 / EIP-712
        "permit(address,address,uint256,uint256,uint8,bytes32,bytes32)",
        "nonces(address)",
        "DOMAIN_SEPARATOR()",
        "mint(address,uint256)",
      ]),
    );
  });
});

/** Every function, event and error of an ABI, as text (e.g. "error PaymentTooEarly()"). */
const surface = (abi: readonly unknown[]) =>
  (abi as Abi).flatMap((item) => {
    if (item.type === "function") return [`function ${formatAbiItem(item)} returns (${formatAbiParams(item.outputs)})`];
    return item.type === "event" || item.type === "error" ? [`${item.type} ${formatAbiItem(item)}`] : [];
  });

describe("Permit2 proxies' ABIs", () => {
  it.each([
    ["x402ExactPermit2Proxy", x402ExactPermit2ProxyABI, []],
    // The reference's upto ABI leaves out InvalidAmount; ours reverts with it on a zero amount,
    // which the reference facilitator never sends (it answers a zero settlement without a transaction).
    ["x402UptoPermit2Proxy", x402UptoPermit2ProxyABI, ["error InvalidAmount()"]],
  ] as const)(
    "%s has exactly the functions, events and errors of the ABI @x402/evm calls it with",
    (name, reference, extra) => {
      const ours = surface(load(name).artifact.abi);
      expect(ours.sort()).toEqual([...surface(reference), ...extra].sort());
    },
  );
});

describe("Token ABIs", () => {
  it("PlainToken has no EIP-2612 or EIP-3009 entry points", () => {
    const names = surface(load("PlainToken").artifact.abi).join("\n");
    expect(names).toMatch(/function approve\(address,uint256\)/);
    expect(names).not.toMatch(/permit|nonces|DOMAIN_SEPARATOR|Authorization/);
  });
});
