// A stub x402 seller for the speed bench: plain node:http, run as its own process (run.mjs starts it).
// It checks nothing a payment signs: any PAYMENT-SIGNATURE that decodes to a v2 payload is "settled",
// so the bench times the client, not a facilitator. Prints its port as one JSON line on stdout.
//
//   GET  /plain       200, never asks for payment
//   GET  /evm         402 for EVM exact (Base Sepolia USDC, EIP-3009), 200 + PAYMENT-RESPONSE once paid
//   GET  /svm         402 for Solana exact (devnet USDC, a fee payer), 200 + PAYMENT-RESPONSE once paid
//   POST /rpc         Solana JSON-RPC stand-in: the mint account, a blockhash, devnet's genesis hash (counted
//                     per method too)
//   GET  /stats       answers, paid answers and connections so far, by path and `?who=` (the bench
//                     names each client); a connection counts for the first request it carried
//
// --delay-ms N delays every answer (stats excepted) by N ms, as a distant seller would.
import { createServer } from "node:http";
import { parseArgs } from "node:util";

const { values } = parseArgs({ options: { "delay-ms": { type: "string", default: "0" } } });
const delayMs = Number(values["delay-ms"]);

const PRICE = "1000"; // 0.001 USDC: well under the buyer's default cap of $1 a payment
const SVM = {
  network: "solana:EtWTRABZaYq6iMfeYKouRu166VU2xqa1",
  genesisHash: "EtWTRABZaYq6iMfeYKouRu166VU2xqa1wcaWoxPkrZBG",
  asset: "4zMMC9srt5Ri5X14GAgXhaHii3GnPAEERYPJgZJDncDU",
  payTo: "2wKupLR9q6wXYppw8Gr2NvWxKBUqm4PPJKkQfoxHDBg4",
  feePayer: "EwWqGE4ZFKLofuestmU4LDdK7XM1N4ALgdZccwYugwGd",
  blockhash: "EkSnNWid2cvwEVnVx9aBqawnmiCNiDgp3gUdkDPTKN1N",
  tokenProgram: "TokenkegQfeZyiNwAJbNbGKPFXCWuBvf9Ss623VQ5DA",
};
const requirements = {
  "/evm": {
    scheme: "exact",
    network: "eip155:84532",
    amount: PRICE,
    asset: "0x036CbD53842c5426634e7929541eC2318f3dCF7e",
    payTo: "0x209693Bc6afc0C5328bA36FaF03C514EF312287C",
    maxTimeoutSeconds: 60,
    extra: { name: "USDC", version: "2" },
  },
  "/svm": {
    scheme: "exact",
    network: SVM.network,
    amount: PRICE,
    asset: SVM.asset,
    payTo: SVM.payTo,
    maxTimeoutSeconds: 60,
    extra: { feePayer: SVM.feePayer },
  },
};
// What a settled payment reports as its transaction: an EVM hash, a Solana signature.
const TRANSACTION = { "/evm": `0x${"ab".repeat(32)}`, "/svm": "5".repeat(88) };

const toBase64 = (value) => Buffer.from(JSON.stringify(value)).toString("base64");
function fromBase64(text) {
  try {
    return JSON.parse(Buffer.from(text, "base64").toString("utf8"));
  } catch {
    return undefined;
  }
}

// An initialised SPL mint: 82 bytes, 6 decimals at offset 44, the initialised flag at 45.
const mintData = Buffer.alloc(82);
mintData[44] = 6;
mintData[45] = 1;
const rpcResults = {
  getAccountInfo: {
    context: { slot: 1 },
    value: {
      owner: SVM.tokenProgram,
      data: [mintData.toString("base64"), "base64"],
      lamports: 1461600,
      executable: false,
      rentEpoch: 0,
      space: 82,
    },
  },
  getLatestBlockhash: { context: { slot: 1 }, value: { blockhash: SVM.blockhash, lastValidBlockHeight: 100 } },
  getGenesisHash: SVM.genesisHash,
};

const stats = {};
const seen = new WeakSet();
function count(key, paid, socket) {
  const entry = (stats[key] ??= { answers: 0, paid: 0, connections: 0 });
  entry.answers++;
  if (paid) entry.paid++;
  if (!seen.has(socket)) {
    seen.add(socket);
    entry.connections++;
  }
}

async function answer(request) {
  const url = new URL(request.url, "http://seller");
  const key = `${url.pathname}?who=${url.searchParams.get("who") ?? ""}`;
  if (url.pathname === "/stats") return { status: 200, headers: {}, body: JSON.stringify(stats) };
  if (url.pathname === "/rpc" && request.method === "POST") {
    let text = "";
    for await (const chunk of request) text += chunk;
    const { id, method } = JSON.parse(text);
    count(key, false, request.socket);
    // Per method too (`getAccountInfo?who=ours`): which reads a paid GET makes.
    const perMethod = `${method}?who=${url.searchParams.get("who") ?? ""}`;
    (stats[perMethod] ??= { answers: 0, paid: 0, connections: 0 }).answers++;
    const reply =
      method in rpcResults ? { result: rpcResults[method] } : { error: { code: -32601, message: "Method not found" } };
    return {
      status: 200,
      headers: { "content-type": "application/json" },
      body: JSON.stringify({ jsonrpc: "2.0", id, ...reply }),
    };
  }
  if (url.pathname === "/plain") {
    count(key, false, request.socket);
    return { status: 200, headers: { "content-type": "application/json" }, body: '{"data":"free"}' };
  }
  const accepted = requirements[url.pathname];
  if (!accepted) return { status: 404, headers: {}, body: "" };
  const signature = request.headers["payment-signature"];
  const payment = typeof signature === "string" ? fromBase64(signature) : undefined;
  if (payment?.x402Version === 2 && payment.payload) {
    count(key, true, request.socket);
    const settled = {
      success: true,
      transaction: TRANSACTION[url.pathname],
      network: accepted.network,
      // Taken from an EVM authorization; a Solana payer would mean decoding the transaction (not done).
      ...(payment.payload.authorization?.from && { payer: payment.payload.authorization.from }),
    };
    return {
      status: 200,
      headers: { "content-type": "application/json", "payment-response": toBase64(settled) },
      body: '{"data":"paid"}',
    };
  }
  count(key, false, request.socket);
  const challenge = {
    x402Version: 2,
    error: "Payment required",
    resource: {
      url: `http://${request.headers.host}${url.pathname}${url.search}`,
      description: "bench",
      mimeType: "application/json",
    },
    accepts: [accepted],
  };
  return {
    status: 402,
    headers: { "content-type": "application/json", "payment-required": toBase64(challenge) },
    body: "{}",
  };
}

const server = createServer(async (request, response) => {
  const { status, headers, body } = await answer(request);
  if (delayMs > 0 && !request.url.startsWith("/stats")) await new Promise((resolve) => setTimeout(resolve, delayMs));
  response.writeHead(status, { ...headers, "content-length": Buffer.byteLength(body) }).end(body);
});
// Node's default 5 s keep-alive closes idle sockets while a busy client may be reusing them ("other
// side closed"): a thousand concurrent payments on a loaded machine leave sockets idle that long.
server.keepAliveTimeout = 60_000;
// A deep accept queue: the concurrency measure opens a thousand connections at once.
server.listen({ port: 0, host: "127.0.0.1", backlog: 4096 }, () => {
  console.log(JSON.stringify({ port: server.address().port }));
});
