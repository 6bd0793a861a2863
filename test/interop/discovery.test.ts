// x402-pay/discovery against a discovery service built here (localnet/discovery.ts), fed by the
// reference facilitator's settlements of the reference seller's bazaar-declared routes: pay them,
// find them, quote them with the client's policy, and pay them again from the listing.
import { createPublicClient, http } from "viem";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createX402Client, getPaymentReceipt } from "../../src";
import { createDiscoveryClient, quoteListing, type DiscoveryListing } from "../../src/discovery";
import { exactEvm } from "../../src/evm";
import { wrapFetchWithPayment } from "../../src/fetch";
import {
  FORECAST,
  PRICE_ATOMIC,
  fundedBuyer,
  installTestUsdc,
  randomAddress,
  startAnvil,
  startFacilitator,
  startSeller,
  type Anvil,
  type Facilitator,
  type Seller,
  type TestUsdc,
} from "../localnet/index.js";
import { startDiscoveryService, type DiscoveryService } from "../localnet/discovery.js";

let anvil: Anvil;
let usdc: TestUsdc;
let facilitator: Facilitator;
let seller: Seller;
let service: DiscoveryService;

beforeAll(async () => {
  anvil = await startAnvil();
  usdc = await installTestUsdc(anvil.rpcUrl);
  service = await startDiscoveryService();
  facilitator = await startFacilitator({ rpcUrl: anvil.rpcUrl, extend: (f) => service.catalogue(f) });
  seller = await startSeller({ facilitatorUrl: facilitator.url, payTo: randomAddress() });
  // A buyer pays both declared routes once: the facilitator catalogues them as it settles.
  const buyer = await fundedBuyer(usdc);
  const paidFetch = wrapFetchWithPayment(fetch, createX402Client({ schemes: [exactEvm({ signer: buyer.account })] }));
  expect((await paidFetch(`${seller.url}/forecast?city=Lisbon`)).status).toBe(200);
  expect(
    (
      await paidFetch(`${seller.url}/translate`, {
        method: "POST",
        headers: { "content-type": "application/json" },
        body: JSON.stringify({ text: "hello", to: "pt" }),
      })
    ).status,
  ).toBe(200);
  // Undeclared routes are paid too, and never catalogued.
  expect((await paidFetch(`${seller.url}/weather`)).status).toBe(200);
});
afterAll(async () => {
  await seller?.stop();
  await facilitator?.stop();
  await service?.stop();
  await anvil?.stop();
});

const all = async (listings: AsyncIterable<DiscoveryListing>) => {
  const found: DiscoveryListing[] = [];
  for await (const listing of listings) found.push(listing);
  return found;
};

describe("discovering what the reference seller declared", () => {
  it("lists exactly the declared routes that were paid, with their terms and metadata", async () => {
    const discovery = createDiscoveryClient({ url: service.url });
    const listings = await all(discovery.resources({ limit: 1 }));
    expect(listings.map((l) => new URL(l.resource).pathname).sort()).toEqual(["/forecast", "/translate"]);
    for (const listing of listings) {
      expect(listing).toMatchObject({ type: "http", x402Version: 2 });
      expect(listing.lastUpdated).toBeInstanceOf(Date);
      expect(Math.abs(listing.lastUpdated!.getTime() - Date.now())).toBeLessThan(120_000);
      expect(listing.challenge.requirements[0]).toMatchObject({
        scheme: "exact",
        network: "eip155:84532",
        amount: String(PRICE_ATOMIC),
        payTo: seller.payTo,
      });
    }
    expect(listings.find((l) => l.resource.includes("/forecast"))!.metadata.description).toBe(
      "Seven-day forecast for a city",
    );
  });

  it("searches, filters and pages", async () => {
    const discovery = createDiscoveryClient({ url: service.url });
    expect((await all(discovery.search("forecast"))).map((l) => new URL(l.resource).pathname)).toEqual(["/forecast"]);
    expect(await all(discovery.resources({ payTo: randomAddress() }))).toEqual([]);
    expect(await all(discovery.resources({ type: "mcp" }))).toEqual([]);
    const page = await discovery.list({ limit: 1, offset: 1 });
    expect(page.items).toHaveLength(1);
    expect(page.pagination).toEqual({ limit: 1, offset: 1, total: 2 });
  });

  it("quotes a listing with the client's policy, without calling it, and the listing pays", async () => {
    const discovery = createDiscoveryClient({ url: service.url });
    const [listing] = await all(discovery.search("forecast"));
    const buyer = await fundedBuyer(usdc);
    const client = createX402Client({
      schemes: [exactEvm({ signer: buyer.account })],
      policy: { maxAmountPerPayment: "$0.01" },
    });
    const before = await usdc.usdcBalance(buyer.address);
    const quote = await quoteListing(client, listing!);
    expect(quote.payable?.requirement).toMatchObject({ amount: String(PRICE_ATOMIC) });
    expect(quote.rejected).toEqual([]);
    expect(await usdc.usdcBalance(buyer.address)).toBe(before);

    const stingy = createX402Client({
      schemes: [exactEvm({ signer: buyer.account })],
      policy: { maxAmountPerPayment: "$0.0001" },
    });
    const refused = await quoteListing(stingy, listing!);
    expect(refused.payable).toBeUndefined();
    expect(refused.rejected[0]!.reason).toMatch(/over policy.maxAmountPerPayment/);

    const response = await wrapFetchWithPayment(fetch, client)(`${listing!.resource}?city=Porto`);
    expect(await response.json()).toEqual(FORECAST);
    expect(getPaymentReceipt(response)?.settled).toBe(true);
    expect(before - (await usdc.usdcBalance(buyer.address))).toBe(PRICE_ATOMIC);
    const chain = createPublicClient({ chain: anvil.chain, transport: http(anvil.rpcUrl) });
    expect(
      (await chain.getTransactionReceipt({ hash: getPaymentReceipt(response)!.transaction as `0x${string}` })).status,
    ).toBe("success");
  });
});

describe("examples/discovery.ts", () => {
  it("lists and quotes what the facilitator catalogued", async () => {
    const { execFile } = await import("node:child_process");
    const { promisify } = await import("node:util");
    const { fileURLToPath } = await import("node:url");
    const root = fileURLToPath(new URL("../../", import.meta.url));
    const { stdout } = await promisify(execFile)(
      process.execPath,
      [`${root}node_modules/tsx/dist/cli.mjs`, "examples/discovery.ts", service.url, "forecast"],
      { cwd: root, timeout: 30_000 },
    );
    expect(stdout).toContain(`${seller.url}/forecast  Seven-day forecast for a city`);
    expect(stdout).toContain("would pay 0.001 USDC on eip155:84532");
    expect(stdout).not.toContain("/translate");
  });
});
