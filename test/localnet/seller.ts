// Sellers built with the reference packages, unmodified:
// - startSeller: v2, @x402/express paymentMiddleware + @x402/core x402ResourceServer + @x402/evm
//   exact server scheme (and on request the upto and batch-settlement server schemes), talking to the facilitator
//   through HTTPFacilitatorClient. On request, routes that declare the gas-sponsoring extensions
//   with the @x402/extensions declare functions.
// - startV1Seller: v1, the legacy x402-express 1.x middleware (x402@1 underneath).

import express, { type Request, type Response } from "express";
import { HTTPFacilitatorClient } from "@x402/core/server";
import type { Network } from "@x402/core/types";
import { ExactEvmScheme } from "@x402/evm/exact/server";
import { UptoEvmScheme } from "@x402/evm/upto/server";
import { BatchSettlementEvmScheme, type BatchSettlementChannelManager } from "@x402/evm/batch-settlement/server";
import { paymentMiddleware, setSettlementOverrides, x402ResourceServer } from "@x402/express";
import { declareEip2612GasSponsoringExtension, declareErc20ApprovalGasSponsoringExtension } from "@x402/extensions";
import { bazaarResourceServerExtension, declareDiscoveryExtension } from "@x402/extensions/bazaar";
import type { Address } from "viem";
import { generatePrivateKey, privateKeyToAccount } from "viem/accounts";
import { listenOnLoopback } from "./listen.js";
import { PLAIN_TOKEN_ADDRESS, USDC_BASE_SEPOLIA } from "./token.js";

export interface Seller {
  /** Base URL, `http://127.0.0.1:<port>`, no trailing slash. */
  url: string;
  payTo: Address;
  /** The batch-settlement side, when started with `batchSettlement`. */
  batch?: BatchSeller;
  stop(): Promise<void>;
}

/** The seller's reference batch-settlement parts, for tests that claim, settle or refund as the seller. */
export interface BatchSeller {
  /** The reference server scheme; `scheme.getStorage()` holds the seller's record of each channel. */
  scheme: BatchSettlementEvmScheme;
  /**
   * The reference channel manager for {@link SELLER_NETWORK} and USDC, talking to the seller's
   * facilitator: `claimAndSettle()`, `claim()`, `settle()`, `refund(channelIds?)`,
   * `refundIdleChannels({ idleSecs })`. Nothing runs on its own (no `start`).
   */
  manager: BatchSettlementChannelManager;
  /**
   * Who signs claims and refunds for the receiver: the seller's own key (`"seller"`), or the
   * facilitator's advertised authorizer (`"facilitator"`).
   */
  authorizer: "seller" | "facilitator";
}

export interface BatchSellerOptions {
  /**
   * `"seller"` (default): the server scheme gets a fresh random key as `receiverAuthorizerSigner`,
   * announces its address as `receiverAuthorizer` and signs its own claims and refunds (what the
   * reference advises, as a facilitator that signs for sellers must authenticate their refund
   * requests). `"facilitator"`: the server has no key and announces the facilitator's authorizer;
   * the facilitator must have one (startFacilitator({ batchSettlement: { authorizer: true } })).
   */
  authorizer?: "seller" | "facilitator";
  /** The channel's withdraw delay the seller asks for, in seconds; the reference default (900) if absent. */
  withdrawDelay?: number;
  /** Refuse deposits below the announced `minDeposit` (10 × price by default). Default false. */
  enforceMinDeposit?: boolean;
}

export interface StartSellerOptions {
  facilitatorUrl: string;
  payTo: Address;
  /**
   * Also serve the Permit2 routes `GET /permit2/weather` and `GET /upto/metered` (see
   * {@link startSeller}). The facilitator must serve `upto` (startFacilitator({ upto: true })) and
   * Permit2 must be installed (localnet/permit2.ts). Default false.
   */
  permit2?: boolean;
  /**
   * Also serve the routes that declare gas sponsoring, `GET /sponsored/*` (see {@link startSeller}).
   * Needs what `permit2` needs, PlainToken at {@link PLAIN_TOKEN_ADDRESS} (installPlainToken) and a
   * facilitator that sponsors (startFacilitator({ sponsoring: true })). Default false.
   */
  sponsored?: boolean;
  /**
   * Also serve the batch-settlement routes `GET /batch/weather` (and with `permit2`, `GET /batch/permit2`),
   * see {@link startSeller}. The facilitator must serve `batch-settlement` (startFacilitator({ batchSettlement }))
   * and the contract must be installed (localnet/batch.ts). Default false.
   */
  batchSettlement?: boolean | BatchSellerOptions;
}

/** Price of every fixed-price route: "$0.001" = 1000 atomic units of a 6-decimal token. */
export const PRICE = "$0.001";
export const PRICE_ATOMIC = 1000n;
export const SELLER_NETWORK: Network = "eip155:84532";

export const WEATHER = { report: { weather: "sunny", temperature: 70 } } as const;
/** What `GET /forecast` (a route declared for discovery) answers. */
export const FORECAST = { days: ["sunny", "sunny", "cloudy", "rain", "sunny", "sunny", "windy"] } as const;

/** Most an `upto` route may charge: "$0.01" = 10000 atomic units of USDC. */
export const UPTO_MAX_PRICE = "$0.01";
export const UPTO_MAX_ATOMIC = 10_000n;

/**
 * v2 seller. Routes:
 * - `GET /weather`  $0.001, answers {@link WEATHER}
 * - `POST /echo`    $0.001, answers with the JSON body it received, unchanged
 * - `GET /dynamic`  price grows by one atomic unit on every request (1000, 1001, ...), so a paid
 *                   retry never matches the quote it was signed for (the seller answers 402
 *                   "No matching payment requirements")
 * - `GET /repriced` $0.001 until `POST /repriced/raise` (free) raises it by $0.001 each time: the
 *                   price a cached quote goes stale on, while a fresh handshake still pays
 * - `GET /redirect` $0.001, answered by its handler with a redirect to `?to=` (default `/free`),
 *                   status `?status=` (301, 302, 303, 307 or 308; default 302). The seller settles
 *                   before the redirect leaves (it settles every handler answer below 400), so
 *                   PAYMENT-RESPONSE rides on the 3xx
 * - `GET /free`     no payment
 *
 * With `permit2: true`, also:
 * - `GET /permit2/weather`  `exact` at 1000 atomic units of USDC with `assetTransferMethod: "permit2"`,
 *                           answers {@link WEATHER}
 * - `GET /upto/metered`     `upto` with a maximum of {@link UPTO_MAX_PRICE}; settles `?charge=`
 *                           atomic units (the reference's settlement override), or the maximum
 *                           without it; answers `{ charged }`
 *
 * With `sponsored: true`, also (each answers like its unsponsored twin):
 * - `GET /sponsored/permit`  as `/permit2/weather`, declaring `eip2612GasSponsoring` and
 *                            `erc20ApprovalGasSponsoring`
 * - `GET /sponsored/plain`   `exact` through Permit2 at 1000 atomic units of PlainToken (no EIP-2612,
 *                            so no name/version in extra, as the reference advises), declaring
 *                            `erc20ApprovalGasSponsoring`
 * - `GET /sponsored/upto`    as `/upto/metered` (`?charge=`), declaring `eip2612GasSponsoring`
 *
 * With `batchSettlement`, also (both answer {@link WEATHER}):
 * - `GET /batch/weather`  `batch-settlement` at {@link PRICE} in USDC, deposits by EIP-3009
 * - `GET /batch/permit2`  the same with `assetTransferMethod: "permit2"` (only with `permit2` too)
 * The reference channel manager that claims and settles them is `seller.batch.manager`.
 */
export async function startSeller({
  facilitatorUrl,
  payTo,
  permit2 = false,
  sponsored = false,
  batchSettlement = false,
}: StartSellerOptions): Promise<Seller> {
  const facilitatorClient = new HTTPFacilitatorClient({ url: facilitatorUrl });
  const resourceServer = new x402ResourceServer(facilitatorClient).register(SELLER_NETWORK, new ExactEvmScheme());
  if (permit2 || sponsored) resourceServer.register(SELLER_NETWORK, new UptoEvmScheme());
  const batch = batchSettlement
    ? batchSeller(payTo, batchSettlement === true ? {} : batchSettlement, facilitatorClient)
    : undefined;
  if (batch) resourceServer.register(SELLER_NETWORK, batch.scheme);
  // bazaar: the catalogued routes' declarations are echoed by buyers and read by a cataloguing facilitator.
  resourceServer.registerExtension(bazaarResourceServerExtension);

  const permit2Routes = {
    "GET /permit2/weather": {
      accepts: {
        scheme: "exact",
        // An AssetAmount: the reference's default USDC entry uses EIP-3009, so Permit2 is asked for here.
        // name/version stay, as the reference server keeps them for tokens with EIP-2612.
        price: {
          amount: String(PRICE_ATOMIC),
          asset: USDC_BASE_SEPOLIA,
          extra: { name: "USDC", version: "2", assetTransferMethod: "permit2" },
        },
        network: SELLER_NETWORK,
        payTo,
      },
      description: "Weather report, paid through Permit2",
      mimeType: "application/json",
    },
    "GET /upto/metered": {
      accepts: { scheme: "upto", price: UPTO_MAX_PRICE, network: SELLER_NETWORK, payTo },
      description: "Charges what was used, up to $0.01",
      mimeType: "application/json",
    },
  };

  const sponsoredRoutes = {
    "GET /sponsored/permit": {
      ...permit2Routes["GET /permit2/weather"],
      extensions: { ...declareEip2612GasSponsoringExtension(), ...declareErc20ApprovalGasSponsoringExtension() },
    },
    "GET /sponsored/plain": {
      accepts: {
        scheme: "exact",
        price: { amount: String(PRICE_ATOMIC), asset: PLAIN_TOKEN_ADDRESS, extra: { assetTransferMethod: "permit2" } },
        network: SELLER_NETWORK,
        payTo,
      },
      description: "Weather report, paid in a token without EIP-2612",
      mimeType: "application/json",
      extensions: declareErc20ApprovalGasSponsoringExtension(),
    },
    "GET /sponsored/upto": {
      ...permit2Routes["GET /upto/metered"],
      extensions: declareEip2612GasSponsoringExtension(),
    },
  };

  const batchRoutes = {
    "GET /batch/weather": {
      accepts: { scheme: "batch-settlement", price: PRICE, network: SELLER_NETWORK, payTo },
      description: "Weather report, paid from a batch-settlement channel",
      mimeType: "application/json",
    },
    ...(permit2 && {
      "GET /batch/permit2": {
        accepts: {
          scheme: "batch-settlement",
          price: {
            amount: String(PRICE_ATOMIC),
            asset: USDC_BASE_SEPOLIA,
            extra: { name: "USDC", version: "2", assetTransferMethod: "permit2" },
          },
          network: SELLER_NETWORK,
          payTo,
        },
        description: "Weather report, paid from a batch-settlement channel funded through Permit2",
        mimeType: "application/json",
      },
    }),
  };

  let dynamicQuotes = 0;
  let repricedSteps = 1;
  const app = express();
  app.use(express.json());
  app.use(
    paymentMiddleware(
      {
        "GET /weather": {
          accepts: { scheme: "exact", price: PRICE, network: SELLER_NETWORK, payTo },
          description: "Weather report",
          mimeType: "application/json",
        },
        "POST /echo": {
          accepts: { scheme: "exact", price: PRICE, network: SELLER_NETWORK, payTo },
          description: "Echoes the JSON request body",
          mimeType: "application/json",
        },
        "GET /dynamic": {
          accepts: {
            scheme: "exact",
            // DynamicPrice: called on every request to the route, the unpaid one and the paid retry.
            price: () => `$${(0.001 + 0.000001 * dynamicQuotes++).toFixed(6)}`,
            network: SELLER_NETWORK,
            payTo,
          },
          description: "Price changes on every request",
          mimeType: "application/json",
        },
        "GET /repriced": {
          accepts: {
            scheme: "exact",
            price: () => `$${(0.001 * repricedSteps).toFixed(6)}`,
            network: SELLER_NETWORK,
            payTo,
          },
          description: "Price raised on request",
          mimeType: "application/json",
        },
        "GET /redirect": {
          accepts: { scheme: "exact", price: PRICE, network: SELLER_NETWORK, payTo },
          description: "Redirects once paid",
          mimeType: "application/json",
        },
        // Declared for discovery (bazaar): a GET with a query, and a POST with a JSON body.
        "GET /forecast": {
          accepts: { scheme: "exact", price: PRICE, network: SELLER_NETWORK, payTo },
          description: "Seven-day forecast for a city",
          mimeType: "application/json",
          extensions: declareDiscoveryExtension({
            input: { city: "Lisbon" },
            inputSchema: { properties: { city: { type: "string" } }, required: ["city"] },
            output: { example: FORECAST },
          }),
        },
        "POST /translate": {
          accepts: { scheme: "exact", price: PRICE, network: SELLER_NETWORK, payTo },
          description: "Translates a sentence",
          mimeType: "application/json",
          // The method comes from the route (the bazaar server extension fills it in).
          extensions: declareDiscoveryExtension({
            bodyType: "json",
            input: { text: "hello", to: "pt" },
            inputSchema: { properties: { text: { type: "string" }, to: { type: "string" } }, required: ["text", "to"] },
            output: { example: { text: "olá" } },
          }),
        },
        ...(permit2 ? permit2Routes : {}),
        ...(sponsored ? sponsoredRoutes : {}),
        ...(batch ? batchRoutes : {}),
      },
      resourceServer,
    ),
  );
  app.get("/weather", (_req: Request, res: Response) => {
    res.json(WEATHER);
  });
  app.post("/echo", (req: Request, res: Response) => {
    res.json(req.body ?? null);
  });
  app.get("/dynamic", (_req: Request, res: Response) => {
    res.json({ quotes: dynamicQuotes });
  });
  app.get("/repriced", (_req: Request, res: Response) => {
    res.json({ price: repricedSteps * Number(PRICE_ATOMIC) });
  });
  app.post("/repriced/raise", (_req: Request, res: Response) => {
    res.json({ price: ++repricedSteps * Number(PRICE_ATOMIC) });
  });
  app.get("/redirect", (req: Request, res: Response) => {
    const status = Number(req.query.status ?? 302);
    res.redirect(
      [301, 302, 303, 307, 308].includes(status) ? status : 302,
      typeof req.query.to === "string" ? req.query.to : "/free",
    );
  });
  app.get("/free", (_req: Request, res: Response) => {
    res.json({ free: true });
  });
  app.get("/forecast", (_req: Request, res: Response) => {
    res.json(FORECAST);
  });
  app.post("/translate", (req: Request, res: Response) => {
    res.json({ text: `[${req.body?.to ?? "?"}] ${req.body?.text ?? ""}` });
  });
  const weather = (_req: Request, res: Response) => {
    res.json(WEATHER);
  };
  const metered = (req: Request, res: Response) => {
    const charge = typeof req.query.charge === "string" ? req.query.charge : undefined;
    // The settlement override: the middleware reads it from this response header, settles that
    // amount instead of the maximum, and strips the header before the answer leaves.
    if (charge !== undefined) setSettlementOverrides(res, { amount: charge });
    res.json({ charged: charge ?? String(UPTO_MAX_ATOMIC) });
  };
  if (permit2) {
    app.get("/permit2/weather", weather);
    app.get("/upto/metered", metered);
  }
  if (batch) {
    app.get("/batch/weather", weather);
    if (permit2) app.get("/batch/permit2", weather);
  }
  if (sponsored) {
    app.get("/sponsored/permit", weather);
    app.get("/sponsored/plain", weather);
    app.get("/sponsored/upto", metered);
  }

  const server = await serveSeller(app);
  return { url: server.url, payTo, ...(batch && { batch }), stop: server.stop };
}

/** The reference batch-settlement server scheme for `payTo`, and its channel manager. */
function batchSeller(
  payTo: Address,
  { authorizer = "seller", withdrawDelay, enforceMinDeposit }: BatchSellerOptions,
  facilitatorClient: HTTPFacilitatorClient,
): BatchSeller {
  const scheme = new BatchSettlementEvmScheme(payTo, {
    ...(authorizer === "seller" && { receiverAuthorizerSigner: privateKeyToAccount(generatePrivateKey()) }),
    ...(withdrawDelay !== undefined && { withdrawDelay }),
    ...(enforceMinDeposit !== undefined && { enforceMinDeposit }),
  });
  const manager = scheme.createChannelManager(facilitatorClient, SELLER_NETWORK, USDC_BASE_SEPOLIA);
  return { scheme, manager, authorizer };
}

/**
 * v1 seller built with the legacy x402-express 1.x package. Route `GET /weather` at $0.001 on
 * `base-sepolia` (or `solana-devnet`), answering {@link WEATHER}.
 */
export async function startV1Seller({
  facilitatorUrl,
  payTo,
  network = "base-sepolia",
}: StartSellerOptions & { network?: "base-sepolia" | "solana-devnet" }): Promise<Seller> {
  // Loaded on demand: x402@1 pulls in Solana and CDP SDKs, which v2-only tests need not load.
  const { paymentMiddleware: v1PaymentMiddleware } = await import("x402-express");
  const app = express();
  app.use(
    v1PaymentMiddleware(
      payTo,
      {
        "GET /weather": {
          price: PRICE,
          network,
          config: { description: "Weather report", mimeType: "application/json" },
        },
      },
      { url: facilitatorUrl as `${string}://${string}` },
    ),
  );
  app.get("/weather", (_req: Request, res: Response) => {
    res.json(WEATHER);
  });
  app.get("/free", (_req: Request, res: Response) => {
    res.json({ free: true });
  });

  const server = await serveSeller(app);
  return { url: server.url, payTo, stop: server.stop };
}

/**
 * Listens on loopback and waits until `GET /weather` answers 402: the middleware fetches
 * /supported from the facilitator before it can quote, and the first unpaid request waits for it.
 */
export async function serveSeller(
  app: Parameters<typeof listenOnLoopback>[0],
): Promise<{ url: string; stop(): Promise<void> }> {
  const server = await listenOnLoopback(app);
  try {
    await expect402(`${server.url}/weather`);
  } catch (error) {
    await server.stop();
    throw error;
  }
  return server;
}

/** Resolves once `url` answers 402, so a started seller is ready to quote. */
async function expect402(url: string): Promise<void> {
  const response = await fetch(url);
  await response.arrayBuffer();
  if (response.status !== 402) {
    throw new Error(`seller not ready: GET ${url} answered ${response.status}, expected 402`);
  }
}
