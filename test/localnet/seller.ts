// Sellers built with the reference packages, unmodified:
// - startSeller: v2, @x402/express paymentMiddleware + @x402/core x402ResourceServer + @x402/evm
//   exact server scheme (and on request the upto server scheme), talking to the facilitator
//   through HTTPFacilitatorClient. On request, routes that declare the gas-sponsoring extensions
//   with the @x402/extensions declare functions.
// - startV1Seller: v1, the legacy x402-express 1.x middleware (x402@1 underneath).

import express, { type Request, type Response } from "express";
import { HTTPFacilitatorClient } from "@x402/core/server";
import type { Network } from "@x402/core/types";
import { ExactEvmScheme } from "@x402/evm/exact/server";
import { UptoEvmScheme } from "@x402/evm/upto/server";
import { paymentMiddleware, setSettlementOverrides, x402ResourceServer } from "@x402/express";
import { declareEip2612GasSponsoringExtension, declareErc20ApprovalGasSponsoringExtension } from "@x402/extensions";
import { bazaarResourceServerExtension, declareDiscoveryExtension } from "@x402/extensions/bazaar";
import type { Address } from "viem";
import { listenOnLoopback } from "./listen.js";
import { PLAIN_TOKEN_ADDRESS, USDC_BASE_SEPOLIA } from "./token.js";

export interface Seller {
  /** Base URL, `http://127.0.0.1:<port>`, no trailing slash. */
  url: string;
  payTo: Address;
  stop(): Promise<void>;
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
 */
export async function startSeller({
  facilitatorUrl,
  payTo,
  permit2 = false,
  sponsored = false,
}: StartSellerOptions): Promise<Seller> {
  const resourceServer = new x402ResourceServer(new HTTPFacilitatorClient({ url: facilitatorUrl })).register(
    SELLER_NETWORK,
    new ExactEvmScheme(),
  );
  if (permit2 || sponsored) resourceServer.register(SELLER_NETWORK, new UptoEvmScheme());
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
  if (sponsored) {
    app.get("/sponsored/permit", weather);
    app.get("/sponsored/plain", weather);
    app.get("/sponsored/upto", metered);
  }

  const server = await serveSeller(app);
  return { url: server.url, payTo, stop: server.stop };
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
