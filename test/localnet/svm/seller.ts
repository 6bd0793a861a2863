// Sellers for Solana built with the reference packages, unmodified:
// - startSvmSeller: v2, @x402/express paymentMiddleware + @x402/core x402ResourceServer with the
//   @x402/svm exact server scheme (and the @x402/evm one when an EVM payTo is given), talking to
//   the facilitator through HTTPFacilitatorClient.
// - startV1SvmSeller: v1, the legacy x402-express 1.x middleware on `solana-devnet`.

import express, { type Request, type Response } from "express";
import { HTTPFacilitatorClient } from "@x402/core/server";
import type { Network } from "@x402/core/types";
import { ExactEvmScheme } from "@x402/evm/exact/server";
import { paymentMiddleware, x402ResourceServer } from "@x402/express";
import { ExactSvmScheme } from "@x402/svm/exact/server";
import type { Address } from "@solana/kit";
import type { Address as EvmAddress } from "viem";
import { PRICE, SELLER_NETWORK, WEATHER, serveSeller, startV1Seller } from "../seller.js";
import { SOLANA_DEVNET } from "./facilitator.js";

export interface SvmSeller {
  /** Base URL, `http://127.0.0.1:<port>`, no trailing slash. */
  url: string;
  /** Solana receiving address (the owner of the destination ATAs). */
  payTo: Address;
  /** EVM receiving address, when `/weather` also accepts Base Sepolia. */
  evmPayTo?: EvmAddress;
  stop(): Promise<void>;
}

export interface StartSvmSellerOptions {
  facilitatorUrl: string;
  /** Solana payTo. Its ATAs for the assets must exist: the reference client never creates them. */
  payTo: Address;
  /** The Token-2022 mint `/weather-2022` is priced in (6 decimals). */
  token2022Mint: Address;
  /**
   * EVM payTo. When given, `/weather` offers Base Sepolia first and Solana second (the facilitator
   * must then support eip155:84532); otherwise Solana only.
   */
  evmPayTo?: EvmAddress;
  /**
   * Passed as `rpcUrl` to the reference server scheme: it then puts `extra.recentBlockhash` and
   * `extra.lastValidBlockHeight` into every Solana requirement (declared dynamic, so excluded
   * from the accepted-requirements match), and the reference client uses that blockhash instead
   * of calling getLatestBlockhash. Default: not set, as in the reference examples.
   */
  blockhashRpcUrl?: string;
}

/** Atomic amount of `/weather-2022`: 0.001 of the 6-decimal Token-2022 test token. */
export const TOKEN_2022_PRICE_ATOMIC = "1000";

/**
 * v2 seller. Routes:
 * - `GET /weather`       $0.001: Base Sepolia USDC (with `evmPayTo`) and Solana devnet USDC, answers {@link WEATHER}
 * - `GET /weather-2022`  1000 atomic units of the Token-2022 mint on Solana devnet, answers {@link WEATHER}
 * - `GET /free`          no payment
 */
export async function startSvmSeller({
  facilitatorUrl,
  payTo,
  token2022Mint,
  evmPayTo,
  blockhashRpcUrl,
}: StartSvmSellerOptions): Promise<SvmSeller> {
  const resourceServer = new x402ResourceServer(new HTTPFacilitatorClient({ url: facilitatorUrl })).register(
    SOLANA_DEVNET,
    new ExactSvmScheme(blockhashRpcUrl ? { rpcUrl: blockhashRpcUrl } : {}),
  );
  if (evmPayTo) resourceServer.register(SELLER_NETWORK as Network, new ExactEvmScheme());

  const solanaUsdc = { scheme: "exact", price: PRICE, network: SOLANA_DEVNET, payTo } as const;
  const app = express();
  app.use(
    paymentMiddleware(
      {
        "GET /weather": {
          accepts: evmPayTo
            ? [{ scheme: "exact", price: PRICE, network: SELLER_NETWORK, payTo: evmPayTo }, solanaUsdc]
            : [solanaUsdc],
          description: "Weather report",
          mimeType: "application/json",
        },
        "GET /weather-2022": {
          accepts: {
            scheme: "exact",
            // An explicit AssetAmount: the server scheme passes amount and asset through unchanged
            // and adds extra.feePayer from the facilitator's /supported.
            price: { amount: TOKEN_2022_PRICE_ATOMIC, asset: token2022Mint },
            network: SOLANA_DEVNET,
            payTo,
          },
          description: "Weather report, paid in a Token-2022 token",
          mimeType: "application/json",
        },
      },
      resourceServer,
    ),
  );
  app.get(["/weather", "/weather-2022"], (_req: Request, res: Response) => {
    res.json(WEATHER);
  });
  app.get("/free", (_req: Request, res: Response) => {
    res.json({ free: true });
  });

  const server = await serveSeller(app);
  return { url: server.url, payTo, ...(evmPayTo ? { evmPayTo } : {}), stop: server.stop };
}

/**
 * v1 seller built with the legacy x402-express 1.x package: `GET /weather` at $0.001 USDC on
 * `solana-devnet` (x402@1 maps that to the devnet USDC mint and reads extra.feePayer from the
 * facilitator's /supported), answering {@link WEATHER}; `GET /free`.
 */
export function startV1SvmSeller({
  facilitatorUrl,
  payTo,
}: Pick<StartSvmSellerOptions, "facilitatorUrl" | "payTo">): Promise<SvmSeller> {
  return startV1Seller({ facilitatorUrl, payTo: payTo as never, network: "solana-devnet" }) as Promise<SvmSeller>;
}
