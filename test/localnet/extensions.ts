// A seller for the extension interop cases, built with the reference packages: @x402/express over an
// x402HTTPResourceServer, the @x402/evm (and, with a Solana payTo, @x402/svm) exact server schemes,
// and @x402/extensions' server parts for sign-in-with-x and offer-and-receipt, unmodified. What the
// reference leaves to each seller is written here with @x402/extensions' helpers:
// - the payment-identifier idempotency cache (the reference server does not enforce the extension);
// - a route whose sign-in-with-x `domain` has no port, as 2.10 servers declared it (2.27 declares
//   `host`, with the port, and validates it exactly), checked the way 2.10 checked it.
// And a fault-injecting proxy that cuts the connection after the seller answered a paid request.

import { createHash } from "node:crypto";
import { createServer, request as httpRequest, type IncomingMessage, type ServerResponse } from "node:http";
import type { AddressInfo, Socket } from "node:net";
import express, { type NextFunction, type Request, type Response } from "express";
import { HTTPFacilitatorClient } from "@x402/core/server";
import type { Network } from "@x402/core/types";
import { ExactEvmScheme } from "@x402/evm/exact/server";
import { paymentMiddlewareFromHTTPServer, x402HTTPResourceServer, x402ResourceServer } from "@x402/express";
import {
  createEIP712OfferReceiptIssuer,
  createOfferReceiptExtension,
  declareOfferReceiptExtension,
} from "@x402/extensions/offer-receipt";
import {
  PAYMENT_IDENTIFIER,
  declarePaymentIdentifierExtension,
  extractPaymentIdentifier,
} from "@x402/extensions/payment-identifier";
import {
  InMemorySIWxStorage,
  SIGN_IN_WITH_X,
  createSIWxResourceServerExtension,
  declareSIWxExtension,
  parseSIWxHeader,
  verifySIWxSignature,
} from "@x402/extensions/sign-in-with-x";
import type { Address, LocalAccount } from "viem";
import { listenOnLoopback } from "./listen.js";
import { PRICE, SELLER_NETWORK, WEATHER } from "./seller.js";

/** Solana devnet, as the Solana stack's facilitator serves it. */
const SOLANA_DEVNET = "solana:EtWTRABZaYq6iMfeYKouRu166VU2xqa1" as Network;

export interface ExtensionSellerOptions {
  facilitatorUrl: string;
  /** EVM receiving address. With `offerSigner`, leave it out: the signer's address receives. */
  payTo?: Address;
  /** Solana receiving address: the sign-in routes then also accept Solana devnet (the facilitator must serve it). */
  svmPayTo?: string;
  /** Signs the offers and receipts of `/offers/weather` (EIP-712); default: the route is not served. */
  offerSigner?: LocalAccount;
  /**
   * Answer pages on other origins (the browser tests): CORS that lets any origin read the x402 headers and send
   * PAYMENT-SIGNATURE and SIGN-IN-WITH-X. Default false: no CORS headers, as the reference middleware.
   */
  cors?: boolean;
}

/** A payment the idempotency cache holds: the payload's fingerprint and the settlement sent with it. */
export interface CachedPayment {
  fingerprint: string;
  settlementHeader: string;
}

export interface ExtensionSeller {
  /** Base URL, `http://127.0.0.1:<port>`, no trailing slash. */
  url: string;
  /** EVM receiving address. */
  payTo: Address;
  /** Who paid which path, as the reference's sign-in-with-x settle hook recorded it. */
  siwxStorage: InMemorySIWxStorage;
  /** Sign-ins the seller granted, in order: the path and the address. */
  signIns: { path: string; address: string }[];
  /** The payment-identifier cache: id → payment; and how often it answered or refused a repeat. */
  idempotency: { payments: Map<string, CachedPayment>; served: number; conflicts: number };
  /** Settlements the seller made, in order: the path and the transaction. */
  settlements: { path: string; transaction: string }[];
  stop(): Promise<void>;
}

/** SHA-256 of the payload's JSON with keys sorted at every level: equal for the same signed payment only. */
export function fingerprint(value: unknown): string {
  const sorted = (v: unknown): unknown =>
    Array.isArray(v)
      ? v.map(sorted)
      : v && typeof v === "object"
        ? Object.fromEntries(
            Object.keys(v)
              .sort()
              .map((k) => [k, sorted((v as Record<string, unknown>)[k])]),
          )
        : v;
  return createHash("sha256")
    .update(JSON.stringify(sorted(value)))
    .digest("hex");
}

const decodeBase64Json = (value: string): unknown => JSON.parse(Buffer.from(value, "base64").toString("utf8"));

/**
 * Routes (each paid route costs $0.001 on Base Sepolia and answers `WEATHER`):
 * - `GET /siwx/weather`   declares sign-in-with-x (reference server extension, `domain` = host with port);
 *                         a wallet that paid this path before signs in instead of paying
 * - `GET /siwx/profile`   sign-in only: `accepts: []`, sign-in-with-x declared for Base Sepolia (and
 *                         Solana devnet with `svmPayTo`); answers `{ address }` of who signed in
 * - `GET /siwx/hostname`  as `/siwx/weather`, but its 402 declares `domain` without the port (2.10),
 *                         and a sign-in is checked as 2.10 checked it (domain = hostname, uri within the origin)
 * - `GET /idempotent/weather`  declares payment-identifier (`required: false`); a repeat of a settled
 *                         payment id with the same payload is answered from the cache (200, the cached
 *                         PAYMENT-RESPONSE, `cached: true`), with another payload 409
 * - `GET /offers/weather` with `offerSigner`: signed offers in the 402 and a signed receipt in PAYMENT-RESPONSE
 */
export async function startExtensionSeller({
  facilitatorUrl,
  payTo,
  svmPayTo,
  offerSigner,
  cors = false,
}: ExtensionSellerOptions): Promise<ExtensionSeller> {
  const evmPayTo = (offerSigner?.address ?? payTo) as Address | undefined;
  if (!evmPayTo) throw new Error("startExtensionSeller needs payTo or offerSigner");
  // Listen first: sign-in-with-x binds its declarations to the seller's public origin.
  let app: express.Express | undefined;
  const server = await listenOnLoopback((req, res) => (app ? app(req, res) : res.writeHead(503).end()));
  const origin = server.url;

  const siwxStorage = new InMemorySIWxStorage();
  const signIns: ExtensionSeller["signIns"] = [];
  const settlements: ExtensionSeller["settlements"] = [];
  const idempotency: ExtensionSeller["idempotency"] = { payments: new Map(), served: 0, conflicts: 0 };

  const resourceServer = new x402ResourceServer(new HTTPFacilitatorClient({ url: facilitatorUrl })).register(
    SELLER_NETWORK,
    new ExactEvmScheme(),
  );
  if (svmPayTo) {
    // Loaded only for Solana: EVM-only tests need not load the Solana packages.
    const { ExactSvmScheme } = await import("@x402/svm/exact/server");
    resourceServer.register(SOLANA_DEVNET, new ExactSvmScheme());
  }
  resourceServer.registerExtension(
    createSIWxResourceServerExtension({
      storage: siwxStorage,
      origin,
      onEvent: (event) => {
        if (event.type === "access_granted" && event.address)
          signIns.push({ path: event.resource, address: event.address });
      },
    }),
  );
  if (offerSigner) {
    const sign = (request: Parameters<LocalAccount["signTypedData"]>[0]) => offerSigner.signTypedData(request);
    resourceServer.registerExtension(
      createOfferReceiptExtension(
        createEIP712OfferReceiptIssuer(`did:pkh:eip155:1:${offerSigner.address}`, sign as never),
      ),
    );
  }
  resourceServer.onAfterSettle(async ({ paymentPayload, result }) => {
    const path = paymentPayload.resource?.url ? new URL(paymentPayload.resource.url).pathname : "";
    settlements.push({ path, transaction: result.transaction });
    const id = extractPaymentIdentifier(paymentPayload as never);
    if (id) {
      idempotency.payments.set(id, {
        fingerprint: fingerprint(paymentPayload),
        settlementHeader: Buffer.from(JSON.stringify(result)).toString("base64"),
      });
    }
  });

  const evmAccept = { scheme: "exact", price: PRICE, network: SELLER_NETWORK, payTo: evmPayTo } as const;
  const accepts = svmPayTo
    ? [evmAccept, { scheme: "exact", price: PRICE, network: SOLANA_DEVNET, payTo: svmPayTo }]
    : [evmAccept];
  const paid = (description: string, extensions: Record<string, unknown>) => ({
    accepts,
    description,
    mimeType: "application/json",
    extensions,
  });
  const routes = {
    "GET /siwx/weather": paid("Weather report; payers sign in on later visits", declareSIWxExtension()),
    "GET /siwx/hostname": paid("Weather report; sign-in-with-x declared as 2.10 did", declareSIWxExtension()),
    "GET /siwx/profile": {
      accepts: [],
      description: "Profile: sign in, no payment",
      mimeType: "application/json",
      extensions: declareSIWxExtension({ network: svmPayTo ? [SELLER_NETWORK, SOLANA_DEVNET] : SELLER_NETWORK }),
    },
    "GET /idempotent/weather": paid("Weather report; payments carry an idempotency id", {
      [PAYMENT_IDENTIFIER]: declarePaymentIdentifierExtension(false),
    }),
    ...(offerSigner
      ? {
          "GET /offers/weather": {
            ...paid(
              "Weather report with signed offers and receipts",
              declareOfferReceiptExtension({ includeTxHash: true }),
            ),
            accepts: [evmAccept],
          },
        }
      : {}),
  };
  const httpServer = new x402HTTPResourceServer(resourceServer, routes as never);

  const built = express();
  if (cors) built.use(allowAnyOrigin);
  built.get("/siwx/hostname", legacySignIn(siwxStorage, origin, signIns));
  built.get("/idempotent/weather", idempotencyCache(idempotency));
  built.use(paymentMiddlewareFromHTTPServer(httpServer));
  for (const path of ["/siwx/weather", "/siwx/hostname", "/offers/weather"])
    built.get(path, (_req: Request, res: Response) => void res.json(WEATHER));
  built.get("/idempotent/weather", (_req: Request, res: Response) => void res.json({ ...WEATHER, cached: false }));
  built.get("/siwx/profile", (req: Request, res: Response) => {
    const header = req.header(SIGN_IN_WITH_X);
    res.json({ address: header ? parseSIWxHeader(header).address : null });
  });
  app = built;

  // Ready once the middleware can quote (it fetches the facilitator's /supported first).
  const answer = await fetch(`${origin}/siwx/weather`);
  await answer.arrayBuffer();
  if (answer.status !== 402) {
    await server.stop();
    throw new Error(`extension seller not ready: /siwx/weather answered ${answer.status}`);
  }
  return { url: origin, payTo: evmPayTo, siwxStorage, signIns, idempotency, settlements, stop: server.stop };
}

/** CORS for a page on any origin: the x402 headers readable, the payment and sign-in headers allowed. */
function allowAnyOrigin(req: Request, res: Response, next: NextFunction) {
  res.setHeader("access-control-allow-origin", "*");
  res.setHeader("access-control-expose-headers", "PAYMENT-REQUIRED, PAYMENT-RESPONSE");
  if (req.method !== "OPTIONS") return next();
  res.setHeader("access-control-allow-methods", "GET, POST");
  res.setHeader("access-control-allow-headers", `content-type, payment-signature, ${SIGN_IN_WITH_X.toLowerCase()}`);
  res.status(204).end();
}

/**
 * `/siwx/hostname` as a 2.10 seller served it: the 402's sign-in-with-x `domain` is the hostname
 * (no port), and a sign-in is granted when its domain is the hostname, its uri lies within the
 * origin, its signature verifies and the address paid this path.
 */
function legacySignIn(storage: InMemorySIWxStorage, origin: string, signIns: ExtensionSeller["signIns"]) {
  const { hostname } = new URL(origin);
  return async (req: Request, res: Response, next: NextFunction) => {
    const header = req.header(SIGN_IN_WITH_X);
    if (header) {
      try {
        const proof = parseSIWxHeader(header);
        const verified = await verifySIWxSignature(proof);
        if (
          verified.isValid &&
          proof.domain === hostname &&
          proof.uri.startsWith(origin) &&
          (await storage.hasPaid(req.path, verified.payer))
        ) {
          signIns.push({ path: req.path, address: verified.payer });
          res.json(WEATHER);
          return;
        }
      } catch {
        // Not a valid sign-in: the normal 402 follows.
      }
      // Refused as 2.10 refused it: the reference hook behind must not grant it in the 2.27 form.
      delete req.headers[SIGN_IN_WITH_X];
    }
    // A paid retry echoes the 2.10 declaration; 2.10 did not compare echoes, 2.27 does: map the
    // echoed domain back to what the reference extension declared before the middleware checks it.
    const paid = req.header("payment-signature");
    if (paid) {
      try {
        const payload = decodeBase64Json(paid) as { extensions?: Record<string, { info?: { domain?: string } }> };
        const echoed = payload.extensions?.[SIGN_IN_WITH_X]?.info;
        if (echoed?.domain === hostname) {
          echoed.domain = new URL(origin).host;
          req.headers["payment-signature"] = Buffer.from(JSON.stringify(payload)).toString("base64");
        }
      } catch {
        // Not a payload: the middleware answers it.
      }
    }
    // Rewrite the declaration the reference extension wrote (host with port) to the 2.10 form.
    const setHeader = res.setHeader.bind(res);
    res.setHeader = (name: string, value: number | string | readonly string[]) => {
      if (name.toLowerCase() === "payment-required" && typeof value === "string") {
        const challenge = decodeBase64Json(value) as { extensions?: Record<string, { info?: { domain?: string } }> };
        const info = challenge.extensions?.[SIGN_IN_WITH_X]?.info;
        if (info) info.domain = hostname;
        value = Buffer.from(JSON.stringify(challenge)).toString("base64");
      }
      return setHeader(name, value);
    };
    next();
  };
}

/**
 * The idempotency cache in front of `/idempotent/weather`: a settled payment id is answered again, never charged again.
 */
function idempotencyCache(state: ExtensionSeller["idempotency"]) {
  return (req: Request, res: Response, next: NextFunction) => {
    const header = req.header("payment-signature");
    if (!header) return next();
    let payload: unknown;
    try {
      payload = decodeBase64Json(header);
    } catch {
      return next();
    }
    const id = extractPaymentIdentifier(payload as never);
    const cached = id ? state.payments.get(id) : undefined;
    if (!cached) return next();
    if (cached.fingerprint !== fingerprint(payload)) {
      state.conflicts++;
      res
        .status(409)
        .json({ error: "payment_identifier_conflict", message: `payment id ${id} was used for another payment` });
      return;
    }
    state.served++;
    res.setHeader("PAYMENT-RESPONSE", cached.settlementHeader);
    res.json({ ...WEATHER, cached: true });
  };
}

export interface FaultProxy {
  /** Base URL of the proxy, `http://127.0.0.1:<port>`. */
  url: string;
  /**
   * Cut the connection of the next `count` paid requests (those with a payment header) once the seller has answered
   * them.
   */
  cutPaidResponses(count: number): void;
  /**
   * Paid requests the proxy forwarded, with the payment header each carried and, once the seller answered, its status
   * and whether its PAYMENT-RESPONSE reported a settlement (what the seller charged, even for an answer cut).
   */
  paidRequests: { path: string; paymentHeader: string; cut: boolean; status?: number; settled?: boolean }[];
  stop(): Promise<void>;
}

/**
 * An HTTP proxy in front of `target` that forwards every request and, when told, destroys the
 * client's connection after the seller answered a paid request in full: the seller settled, the
 * buyer never hears of it.
 */
export async function startFaultProxy(target: string): Promise<FaultProxy> {
  let toCut = 0;
  const paidRequests: FaultProxy["paidRequests"] = [];
  const sockets = new Set<Socket>();
  const server = createServer((req: IncomingMessage, res: ServerResponse) => {
    const paymentHeader = req.headers["payment-signature"] ?? req.headers["x-payment"];
    const cut = typeof paymentHeader === "string" && toCut > 0;
    if (cut) toCut--;
    const seen: FaultProxy["paidRequests"][number] | undefined =
      typeof paymentHeader === "string" ? { path: req.url ?? "", paymentHeader, cut } : undefined;
    if (seen) paidRequests.push(seen);
    const upstream = httpRequest(
      new URL(req.url ?? "/", target),
      { method: req.method, headers: req.headers },
      (answer) => {
        const chunks: Buffer[] = [];
        answer.on("data", (chunk: Buffer) => chunks.push(chunk));
        answer.on("end", () => {
          if (seen) {
            seen.status = answer.statusCode;
            const receipt = answer.headers["payment-response"];
            seen.settled =
              typeof receipt === "string" && JSON.parse(Buffer.from(receipt, "base64").toString()).success === true;
          }
          if (cut) {
            req.socket.destroy();
            return;
          }
          res.writeHead(answer.statusCode ?? 502, answer.headers);
          res.end(Buffer.concat(chunks));
        });
      },
    );
    upstream.on("error", () => res.writeHead(502).end());
    req.pipe(upstream);
  });
  server.on("connection", (socket) => {
    sockets.add(socket);
    socket.on("close", () => sockets.delete(socket));
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}`,
    cutPaidResponses: (count) => void (toCut = count),
    paidRequests,
    stop: () =>
      new Promise<void>((resolve) => {
        for (const socket of sockets) socket.destroy();
        server.close(() => resolve());
      }),
  };
}
