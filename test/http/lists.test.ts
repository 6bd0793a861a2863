/**
 * Every option that takes a list, with `[]` and with one entry. An allow-list's `[]` allows none: the
 * policy's networks, payees and origins, uptoEvm's facilitators, a scheme's networks and x402Versions
 * (and, elsewhere: offerReceipt's requireSigner in offers.test.ts, the MCP guard's servers and tools in
 * mcp.test.ts). A list of things that add or must all hold adds or holds nothing with `[]`: the
 * policy's assets and assetCaps, plug-ins (budgets among them), builder codes. Not given at all, an allow-list
 * restricts nothing.
 */
import { describe, expect, it } from "vitest";
import { budget, builderCode, createX402Client, type SpendPolicy, type X402Client } from "../../src";
import { parseChallenge } from "../../src/entries/protocol";
import { exactEvm, uptoEvm } from "../../src/evm";
import { exactSvm } from "../../src/svm";
import { useMswServer } from "../support/msw";
import {
  OTHER,
  OTHER_PAY_TO,
  PATH,
  PAY_TO,
  SELLER,
  createSeller,
  encodeHeader,
  v2Challenge,
  v2Requirement,
} from "../support/seller";
import { DEVNET, buyer, fakeRpc, svmRequirement } from "../support/svm";
import { account } from "../support/wallets";
import { fetchWrapper, rejection } from "../support/wrappers";

const server = useMswServer();
const url = `${SELLER}${PATH}`;
const FACILITATOR = "0x1111111111111111111111111111111111111111";
const MAINNET = "solana:5eykt4UsFv8P8NJdTREpY1vzqKqZKvdp5kX1m1Wb4Z7U";
const TOKEN = "0x00000000000000000000000000000000000000aa";

const uptoRequirement = () =>
  v2Requirement({
    scheme: "upto",
    extra: { name: "USDC", version: "2", assetTransferMethod: "permit2", facilitatorAddress: FACILITATOR },
  });

/** What the client makes of a one-requirement challenge for `url`: payable, or the code and reason of its refusal. */
async function verdict(client: X402Client, requirement: Record<string, unknown> = v2Requirement(), to = url) {
  const challenge = parseChallenge({
    header: encodeHeader(v2Challenge({ resource: { url: to }, accepts: [requirement] })),
  });
  const { options, rejected } = await client.quote(challenge, { url: to, method: "GET" });
  return options.length > 0 ? "payable" : rejected.map((r) => `${r.code}: ${r.reason}`).join("; ");
}

const evm = (policy: SpendPolicy = {}) => createX402Client({ schemes: [exactEvm({ signer: account })], policy });
const unsupported = (network: string, scheme = "exact", version = 2) =>
  `unsupported: no registered scheme pays "${scheme}" on ${network} (x402 v${version})`;

interface AllowList {
  option: string;
  /** A client with the list given as `list`, or not given (`undefined`). */
  client: (list: readonly never[] | undefined) => X402Client;
  /** The one entry that lets the requirement in, and one that does not. */
  entry: unknown;
  other: unknown;
  requirement?: () => Record<string, unknown>;
  /** Why the requirement is refused when the list leaves it out. */
  refusal: string;
}

const allowLists: AllowList[] = [
  {
    option: "policy.networks",
    client: (networks) => evm({ networks }),
    entry: "eip155:84532",
    other: "eip155:8453",
    refusal: "policy: network eip155:84532 is not in policy.networks",
  },
  {
    option: "policy.payees",
    client: (payees) => evm({ payees }),
    entry: PAY_TO.toLowerCase(),
    other: OTHER_PAY_TO,
    refusal: `policy: payee ${PAY_TO} is not in policy.payees`,
  },
  {
    option: "policy.origins",
    client: (origins) => evm({ origins }),
    entry: SELLER,
    other: OTHER,
    refusal: `policy: origin ${SELLER} is not in policy.origins`,
  },
  {
    option: "uptoEvm facilitators",
    client: (facilitators) => createX402Client({ schemes: [uptoEvm({ signer: account, facilitators })] }),
    entry: FACILITATOR.toUpperCase().replace("0X", "0x"),
    other: "0x2222222222222222222222222222222222222222",
    requirement: uptoRequirement,
    refusal: `unsupported: facilitator ${FACILITATOR} is not in the scheme's facilitators`,
  },
  {
    option: "exactEvm networks",
    client: (networks) => createX402Client({ schemes: [exactEvm({ signer: account, networks })] }),
    entry: "eip155:84532",
    other: "eip155:8453",
    refusal: unsupported("eip155:84532"),
  },
  {
    option: "exactEvm x402Versions",
    client: (x402Versions) => createX402Client({ schemes: [exactEvm({ signer: account, x402Versions })] }),
    entry: 2,
    other: 1,
    refusal: unsupported("eip155:84532"),
  },
  {
    option: "uptoEvm networks",
    client: (networks) => createX402Client({ schemes: [uptoEvm({ signer: account, networks })] }),
    entry: "eip155:*",
    other: "eip155:8453",
    requirement: uptoRequirement,
    refusal: unsupported("eip155:84532", "upto"),
  },
  {
    option: "exactSvm networks",
    client: (networks) => createX402Client({ schemes: [exactSvm({ signer: buyer, rpc: fakeRpc(), networks })] }),
    entry: DEVNET,
    other: MAINNET,
    requirement: svmRequirement,
    refusal: unsupported(DEVNET),
  },
  {
    option: "exactSvm x402Versions",
    client: (x402Versions) =>
      createX402Client({ schemes: [exactSvm({ signer: buyer, rpc: fakeRpc(), x402Versions })] }),
    entry: 2,
    other: 1,
    requirement: svmRequirement,
    refusal: unsupported(DEVNET),
  },
];

describe.each(allowLists)(
  "$option, an allow-list",
  ({ client, entry, other, requirement = v2Requirement, refusal }) => {
    it("[] allows none", async () => {
      expect(await verdict(client([]), requirement())).toBe(refusal);
    });

    it("[the one entry that matches] allows it", async () => {
      expect(await verdict(client([entry] as never), requirement())).toBe("payable");
    });

    it("[one other entry] refuses", async () => {
      expect(await verdict(client([other] as never), requirement())).toBe(refusal);
    });

    it("not given: no restriction", async () => {
      expect(await verdict(client(undefined), requirement())).toBe("payable");
    });
  },
);

describe("lists that add or must all hold: [] adds or holds nothing", () => {
  const unknownToken = () => v2Requirement({ asset: TOKEN, amount: "5" });

  it("policy.assets: [] knows only the schemes' stablecoins; one entry prices its asset, under the USD cap", async () => {
    expect(await verdict(evm({ assets: [] }))).toBe("payable");
    expect(await verdict(evm({ assets: [] }), unknownToken())).toMatch(
      /^policy: asset 0x0+aa on eip155:84532 is not a known stablecoin/,
    );
    const assets = [{ network: "eip155:84532", address: TOKEN, decimals: 6, symbol: "TOK" }];
    expect(await verdict(evm({ assets }), unknownToken())).toBe("payable");
    expect(await verdict(evm({ assets }), v2Requirement({ asset: TOKEN, amount: "1000000" }))).toBe("payable");
    expect(await verdict(evm({ assets }), v2Requirement({ asset: TOKEN, amount: "1000001" }))).toBe(
      "policy: 1.000001 TOK is over policy.maxAmountPerPayment ($1)",
    );
  });

  it("policy.assetCaps: [] caps nothing; one entry caps its asset and makes it payable up to the cap", async () => {
    expect(await verdict(evm({ assetCaps: [] }))).toBe("payable");
    expect(await verdict(evm({ assetCaps: [] }), unknownToken())).toMatch(/is not a known stablecoin/);
    const assetCaps = [{ network: "eip155:84532", asset: TOKEN, maxAmount: "5" }];
    expect(await verdict(evm({ assetCaps }), unknownToken())).toBe("payable");
    expect(await verdict(evm({ assetCaps }), v2Requirement({ asset: TOKEN, amount: "6" }))).toBe(
      `policy: 6 base units of ${TOKEN} is over its policy.assetCaps entry (5)`,
    );
    // A cap for another asset leaves this one as it was.
    expect(await verdict(evm({ assetCaps }))).toBe("payable");
  });

  it("plugins: [] is no budget; a list of one budget holds", async () => {
    const seller = createSeller();
    server.use(seller.handler);
    const none = createX402Client({ schemes: [exactEvm({ signer: account })], plugins: [] });
    for (let i = 0; i < 3; i++) expect((await fetchWrapper.send(none, { url })).status).toBe(200);
    const one = createX402Client({ schemes: [exactEvm({ signer: account })], plugins: [budget({ limit: "$0.01" })] });
    expect((await fetchWrapper.send(one, { url })).status).toBe(200);
    expect(await rejection(fetchWrapper.send(one, { url }))).toMatchObject({ code: "BUDGET_EXCEEDED" });
    expect(seller.verdicts.filter((v) => v.ok)).toHaveLength(4);
  });

  it("plugins: [] leaves the built-in payment-identifier serving", async () => {
    const seller = createSeller({
      challenge: v2Challenge({ extensions: { "payment-identifier": { info: { required: true } } } }),
    });
    server.use(seller.handler);
    await fetchWrapper.send(createX402Client({ schemes: [exactEvm({ signer: account })], plugins: [] }), { url });
    expect(seller.payments[0].extensions["payment-identifier"].info).toEqual({
      required: true,
      id: expect.stringMatching(/^[\w-]{16,128}$/),
    });
  });

  it("builderCode([]) adds no code: an undeclared payment carries none, a declared one is echoed as sent", async () => {
    const declaration = { info: { a: "bc_weather", s: ["bc_server"] }, schema: {} };
    const silent = createSeller();
    server.use(silent.handler);
    const client = createX402Client({ schemes: [exactEvm({ signer: account })], plugins: [builderCode([])] });
    await fetchWrapper.send(client, { url });
    expect(silent.payments[0]).not.toHaveProperty("extensions");
    const declaring = createSeller({ challenge: v2Challenge({ extensions: { "builder-code": declaration } }) });
    server.use(declaring.handler);
    await fetchWrapper.send(client, { url });
    expect(declaring.payments[0].extensions["builder-code"]).toEqual(declaration);
    // One code: added, before the server's.
    const one = createSeller({ challenge: v2Challenge({ extensions: { "builder-code": declaration } }) });
    server.use(one.handler);
    await fetchWrapper.send(
      createX402Client({ schemes: [exactEvm({ signer: account })], plugins: [builderCode(["bc_agent"])] }),
      { url },
    );
    expect(one.payments[0].extensions["builder-code"].info.s).toEqual(["bc_agent", "bc_server"]);
  });

  it("schemes: [] is refused at construction; one scheme is enough", () => {
    expect(() => createX402Client({ schemes: [] })).toThrow(
      expect.objectContaining({ code: "INVALID_CONFIG", details: { option: "schemes" } }),
    );
    expect(createX402Client({ schemes: [exactEvm({ signer: account })] }).schemes).toHaveLength(1);
  });
});

describe("the policy's lists are copied at construction", () => {
  it("changing the caller's arrays afterwards changes nothing", async () => {
    const networks = ["eip155:84532"];
    const payees = [PAY_TO];
    const origins = [SELLER];
    const client = evm({ networks, payees, origins });
    networks.length = payees.length = origins.length = 0;
    expect(await verdict(client)).toBe("payable");
  });
});
