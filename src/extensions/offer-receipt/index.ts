export {
  OFFER_RECEIPT,
  OfferPayloadSchema,
  ReceiptPayloadSchema,
  SignedOfferSchema,
  SignedReceiptSchema,
  verifyOffer,
  verifyReceipt,
  type Checked,
  type OfferPayload,
  type ReceiptPayload,
  type Signed,
  type SignedOffer,
  type SignedReceipt,
} from "./verify";
export {
  offerReceipt,
  reviewOffers,
  type OfferReceiptOptions,
  type OfferReview,
  type CheckedReceipt,
} from "./offer-receipt";
// The types x402-pay's entries share (the client, contracts, stores, wire shapes, errors): every entry names them.
export type * from "../../entries/types";
