/**
 * A real HTTP seller on a loopback port (node:http, not msw, so other processes can pay it): answers
 * 402 with a v2 challenge for `price` base units of Base Sepolia USDC, and a request carrying a
 * PAYMENT-SIGNATURE 200 with a PAYMENT-RESPONSE, counting each. It trusts the payment (no signature
 * check): it counts what was paid, and the distinct EIP-3009 nonces, so a payment sent twice shows.
 */
import { listenOnLoopback } from "../localnet/listen";
import { PAY_TO, TX_HASH, USDC_BASE_SEPOLIA } from "./seller";

const encode = (value: unknown) => Buffer.from(JSON.stringify(value), "utf8").toString("base64");
const decode = (value: string): any => JSON.parse(Buffer.from(value, "base64").toString("utf8"));

export interface LoopbackSeller {
  /** The paid resource's URL. */
  readonly url: string;
  /** Paid requests answered, and the distinct nonces they carried. */
  readonly paid: number;
  readonly nonces: ReadonlySet<string>;
  stop(): Promise<void>;
}

export async function loopbackSeller(price: string): Promise<LoopbackSeller> {
  let paid = 0;
  const nonces = new Set<string>();
  let url = "";
  const server = await listenOnLoopback((request, response) => {
    const header = request.headers["payment-signature"];
    if (typeof header !== "string") {
      const challenge = {
        x402Version: 2,
        error: "Payment required",
        resource: { url, description: "", mimeType: "application/json" },
        accepts: [
          {
            scheme: "exact",
            network: "eip155:84532",
            amount: price,
            asset: USDC_BASE_SEPOLIA,
            payTo: PAY_TO,
            maxTimeoutSeconds: 60,
            extra: { name: "USDC", version: "2" },
          },
        ],
      };
      response.writeHead(402, { "content-type": "application/json", "PAYMENT-REQUIRED": encode(challenge) }).end("{}");
      return;
    }
    const payment = decode(header);
    paid++;
    nonces.add(payment.payload.authorization.nonce);
    const settlement = {
      success: true,
      transaction: TX_HASH,
      network: "eip155:84532",
      payer: payment.payload.authorization.from,
    };
    response
      .writeHead(200, { "content-type": "application/json", "PAYMENT-RESPONSE": encode(settlement) })
      .end('{"data":"premium"}');
  });
  url = `${server.url}/premium`;
  return {
    url,
    get paid() {
      return paid;
    },
    nonces,
    stop: () => server.stop(),
  };
}
