import type { X402Plugin } from "../../contracts";
import { InvalidConfigError } from "../../errors";
import {
  BUILDER_CODE,
  MAX_CLIENT_SERVICE_CODES,
  MAX_ECHOED_SERVICE_CODES,
  declaredServiceCodes,
  isBuilderCode,
} from "../../protocol";

/**
 * builder-code (ERC-8021 attribution): puts the caller's service codes in `extensions["builder-code"].info.s`
 * of every v2 payment, for facilitators that write them into the settlement's calldata. Where the 402
 * declares builder-code, its declaration is echoed as sent (the server's app code `a` with it) and the
 * caller's codes come before the server's own. At most 5 codes of 1 to 32 characters of `a-z 0-9 _`.
 */
export function builderCode(serviceCodes: string | readonly string[]): X402Plugin {
  const codes = [...new Set([serviceCodes].flat())];
  const wrong = codes.find((code) => !isBuilderCode(code));
  if (wrong !== undefined || codes.length > MAX_CLIENT_SERVICE_CODES) {
    const problem =
      wrong !== undefined
        ? `${JSON.stringify(wrong) ?? String(wrong)} is not a builder code: 1 to 32 characters of a-z, 0-9 and _`
        : `${codes.length} service codes, more than the ${MAX_CLIENT_SERVICE_CODES} a client may add`;
    throw new InvalidConfigError(`builderCode: ${problem}.`, { details: { option: "builderCode" } });
  }
  return {
    name: "builder-code",
    key: BUILDER_CODE,
    enrichUndeclared: true,
    enrichPayload({ declaration }) {
      const declared = declaredServiceCodes(declaration);
      const s = [...new Set([...codes, ...(declared ?? [])])];
      // A seller refuses an `s` longer than the client's and its own reservations together, and one
      // that drops what it declared: past the limit, or beside a declaration that is not well formed
      // (BuilderCodeSchema), the payment goes without the caller's codes rather than not at all.
      return codes.length > 0 && declared && s.length <= MAX_ECHOED_SERVICE_CODES ? { info: { s } } : undefined;
    },
  };
}
