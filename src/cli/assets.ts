/**
 * Amounts as a person reads them: `1000` of a 6-decimal USDC is `0.001 USDC`; an asset of unknown
 * decimals stays in base units.
 */
import { EVM_KNOWN_ASSETS } from "../evm";
import { findKnownAsset, formatUnits, parseAtomicAmount } from "../protocol";
// The Solana assets table alone: the svm door also loads the Solana scheme, which imports @solana/kit.
import { SVM_KNOWN_ASSETS } from "../svm/networks";

const KNOWN = [...EVM_KNOWN_ASSETS, ...SVM_KNOWN_ASSETS];

/** `"0.001 USDC"` for a known asset on its network (CAIP-2), else `"1000 base units of <asset>"`. */
export function amountOf(amount: string, network: string | undefined, asset: string): string {
  const known = findKnownAsset(network, asset, KNOWN);
  const atomic = parseAtomicAmount(amount);
  if (!known || atomic === undefined) return `${amount} base units of ${asset}`;
  return `${formatUnits(atomic, known.decimals)} ${known.symbol}`;
}
