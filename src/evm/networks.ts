/** EVM chain facts: protocol v1 network names and the stablecoins the spend policy can price. */
import type { KnownAsset } from "../protocol";

/** Protocol v1 EVM network names → CAIP-2 (the reference's table). */
export const EVM_V1_NETWORKS: Readonly<Record<string, string>> = /* @__PURE__ */ Object.fromEntries(
  Object.entries({
    ethereum: 1,
    sepolia: 11155111,
    abstract: 2741,
    "abstract-testnet": 11124,
    "base-sepolia": 84532,
    base: 8453,
    "avalanche-fuji": 43113,
    avalanche: 43114,
    iotex: 4689,
    sei: 1329,
    "sei-testnet": 1328,
    polygon: 137,
    "polygon-amoy": 80002,
    peaq: 3338,
    story: 1514,
    educhain: 41923,
    "skale-base-sepolia": 324705682,
    megaeth: 4326,
    monad: 143,
    stable: 988,
    "stable-testnet": 2201,
  }).map(([name, id]) => [name, `eip155:${id}`]),
);

/** USD stablecoins on EVM chains whose decimals are known (from the reference's default asset table). */
export const EVM_KNOWN_ASSETS: readonly KnownAsset[] = [
  ["eip155:8453", "0x833589fCD6eDb6E08f4c7C32D4f71b54bdA02913"],
  ["eip155:84532", "0x036CbD53842c5426634e7929541eC2318f3dCF7e"],
  ["eip155:1", "0xA0b86991c6218b36c1d19D4a2e9Eb0cE3606eB48"],
  ["eip155:43114", "0xB97EF9Ef8734C71904D8002F8b6Bc66Dd9c48a6E"],
  ["eip155:137", "0x3c499c542cEF5E3811e1192ce70d8cC03d5c3359"],
  ["eip155:42161", "0xaf88d065e77c8cC2239327C5EDb3A432268e5831"],
  ["eip155:421614", "0x75faf114eafb1BDbe2F0316DF893fd58CE46AA4d"],
  ["eip155:143", "0x754704Bc059F8C67012fEd69BC8A327a5aafb603"],
  ["eip155:988", "0x779Ded0c9e1022225f8E0630b35a9b54bE713736", "USDT0"],
  ["eip155:2201", "0x78Cf24370174180738C5B8E352B6D14c83a6c9A9", "USDT0"],
  ["eip155:4326", "0xFAfDdbb3FC7688494971a79cc65DCa3EF82079E7", "MegaUSD", 18],
].map(([network, address, symbol = "USDC", decimals = 6]) => ({ network, address, symbol, decimals }) as KnownAsset);

/** The numeric chain id of an `eip155:N` network, or `undefined`. Strict: decimal digits only. */
export function toEvmChainId(caip2: string): number | undefined {
  const id = Number(/^eip155:([1-9][0-9]{0,15})$/.exec(caip2)?.[1]);
  return Number.isSafeInteger(id) ? id : undefined;
}
