/**
 * Server rejection reasons as sentences: what happened and what to do. The raw code is kept next to
 * it (`PaymentRejectedError.reason`). Codes are matched by their telling part, so the many
 * per-scheme variants (`invalid_exact_evm_insufficient_balance`, `..._svm_...`) share one sentence.
 */
const sentences: [RegExp, string][] = [
  [/insufficient/i, "the payer's balance is too low"],
  [/no matching payment requirements/i, "its terms changed after the 402: retry to pay the new ones"],
  [/nonce|already_used|replay|duplicate/i, "this payment was already used"],
  [/valid_before|valid_after|expired|not_yet|deadline/i, "its validity window was refused: check the clock"],
  [/signature/i, "its signature did not verify"],
  [/simulation/i, "the facilitator's simulation of the transfer failed"],
  [/mismatch|amount|value|recipient|mint|memo|instruction|fee_payer/i, "it does not match what was asked"],
  [/unsupported|network|scheme/i, "the server does not support this way of paying"],
  [/settle|transaction_failed|transaction_state/i, "the settlement transaction failed: nothing was charged"],
];

/** `"The server rejected the payment (insufficient_funds): the payer's balance is too low: ..."`. */
export function describeRejection(reason: string | undefined): string {
  if (!reason) return "The server answered the paid request with another 402 and gave no reason.";
  const sentence = sentences.find(([pattern]) => pattern.test(reason))?.[1];
  return `The server rejected the payment (${reason})${sentence ? `: ${sentence}` : ""}.`;
}
