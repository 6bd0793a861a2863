// The copyable examples really pay: each runs as a user would run it, with its key in the
// environment, against the reference seller on a local chain.
import { getBase58Decoder } from "@solana/kit";
import { execFile } from "node:child_process";
import { fileURLToPath } from "node:url";
import { promisify } from "node:util";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { PRICE_ATOMIC, fundedBuyer, startInteropStack, type InteropStack } from "../localnet/index.js";
import { startSolanaStack, type SolanaStack } from "../localnet/svm/index.js";

const root = fileURLToPath(new URL("../../", import.meta.url));
const tsx = fileURLToPath(new URL("../../node_modules/tsx/dist/cli.mjs", import.meta.url));
const run = (file: string, args: string[], env: Record<string, string>) =>
  promisify(execFile)(process.execPath, [tsx, file, ...args], {
    cwd: root,
    timeout: 30_000,
    env: { ...process.env, ...env },
  });

let evm: InteropStack;
let solana: SolanaStack;
beforeAll(async () => {
  [evm, solana] = await Promise.all([startInteropStack(), startSolanaStack({ evm: false })]);
});
afterAll(async () => {
  await Promise.all([evm?.stop(), solana?.stop()]);
});

// Two runs of an example (each a child process allowed 30 s) fit in one test's time.
describe("examples", { timeout: 70_000 }, () => {
  it.each(["examples/fetch.ts", "examples/axios.ts"])("%s pays with EVM_PRIVATE_KEY", async (file) => {
    const buyer = await fundedBuyer(evm.usdc);
    const { stdout } = await run(file, [`${evm.seller.url}/weather`], { EVM_PRIVATE_KEY: buyer.privateKey });
    expect(stdout).toMatch(/^200 /m);
    expect(stdout).toMatch(/paid: 0\.001 USDC on eip155:84532 tx 0x[0-9a-f]{64}/);
    expect(await evm.usdc.usdcBalance(buyer.address)).toBe(1_000_000n - PRICE_ATOMIC);
  });

  it("examples/ai-sdk.ts: the scripted model asks, the person says yes, the tool pays once; no pays nothing", async () => {
    const buyer = await fundedBuyer(evm.usdc);
    const url = `${evm.seller.url}/weather`;
    const yes = await run("examples/ai-sdk.ts", [url, "yes"], { EVM_PRIVATE_KEY: buyer.privateKey });
    expect(yes.stdout).toMatch(/^approval asked: pay 0\.001 USDC to 0x[0-9a-fA-F]{40} for .*\/weather\? yes$/m);
    expect(yes.stdout).toMatch(/"paid":"0\.001 USDC on eip155:84532 \(transaction 0x[0-9a-f]{64}\)"/);
    expect(await evm.usdc.usdcBalance(buyer.address)).toBe(1_000_000n - PRICE_ATOMIC);
    const no = await run("examples/ai-sdk.ts", [url, "no"], { EVM_PRIVATE_KEY: buyer.privateKey });
    expect(no.stdout).toMatch(/"type":"execution-denied"/);
    expect(await evm.usdc.usdcBalance(buyer.address)).toBe(1_000_000n - PRICE_ATOMIC);
  });

  it("examples/langchain.ts: the graph interrupts on the price, yes pays once, no pays nothing", async () => {
    const buyer = await fundedBuyer(evm.usdc);
    const url = `${evm.seller.url}/weather`;
    const yes = await run("examples/langchain.ts", [url, "yes"], { EVM_PRIVATE_KEY: buyer.privateKey });
    expect(yes.stdout).toMatch(/^approval asked: pay 0\.001 USDC to 0x[0-9a-fA-F]{40} for .*\/weather\? yes$/m);
    expect(yes.stdout).toMatch(/"paid":"0\.001 USDC on eip155:84532 \(transaction 0x[0-9a-f]{64}\)"/);
    expect(await evm.usdc.usdcBalance(buyer.address)).toBe(1_000_000n - PRICE_ATOMIC);
    const no = await run("examples/langchain.ts", [url, "no"], { EVM_PRIVATE_KEY: buyer.privateKey });
    expect(no.stdout).toMatch(/"code":"APPROVAL_DENIED"/);
    expect(await evm.usdc.usdcBalance(buyer.address)).toBe(1_000_000n - PRICE_ATOMIC);
  });

  it("examples/solana.ts pays with SVM_PRIVATE_KEY", async () => {
    const buyer = await solana.fundedBuyer({ mints: [solana.tokens.usdc] });
    const key = getBase58Decoder().decode(buyer.secretKey);
    const { stdout } = await run("examples/solana.ts", [`${solana.seller.url}/weather`, solana.rpc.url], {
      SVM_PRIVATE_KEY: key,
    });
    expect(stdout).toMatch(/^200 /m);
    expect(stdout).toMatch(/paid: 0\.001 USDC on solana:EtWTRABZaYq6iMfeYKouRu166VU2xqa1 tx \w+/);
    expect(await solana.tokens.balance(solana.tokens.usdc, buyer.address)).toBe(1_000_000n - PRICE_ATOMIC);
  });

  it("a key never shows up in an example's output, even on failure", async () => {
    const buyer = await fundedBuyer(evm.usdc, { amount: 0n });
    const result = await run("examples/fetch.ts", [`${evm.seller.url}/weather`], {
      EVM_PRIVATE_KEY: buyer.privateKey,
    }).catch((e) => e);
    const output = `${result.stdout}${result.stderr}`;
    expect(output).toMatch(/PAYMENT_REJECTED/);
    expect(output).not.toContain(buyer.privateKey.slice(2));
  });
});
