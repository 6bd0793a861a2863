/**
 * Regressions found by the handshake fuzz property: an abort never leaves a promise rejecting
 * unhandled, and never lets a request that was already aborted reach the wallet.
 */
import { afterEach, describe, expect, it } from "vitest";
import { createX402Client } from "../../src";
import { parseChallenge } from "../../src/entries/protocol";
import { raceAbort } from "../../src/errors";
import { exactEvm } from "../../src/evm";
import { SELLER, PATH, countingSigner, encodeHeader, v2Challenge } from "../support/seller";
import { engineOf } from "../../src/client";

const unhandled: unknown[] = [];
const onUnhandled = (reason: unknown) => void unhandled.push(reason);
afterEach(() => {
  process.off("unhandledRejection", onUnhandled);
  unhandled.length = 0;
});

describe("raceAbort with a signal that already fired", () => {
  it("rejects ABORTED and handles the work's later failure (was: an unhandled rejection, fatal in Node by default)", async () => {
    process.on("unhandledRejection", onUnhandled);
    const controller = new AbortController();
    controller.abort();
    const work = new Promise((_, reject) => setTimeout(() => reject(new Error("User rejected the request.")), 1));
    await expect(raceAbort(work, controller.signal)).rejects.toMatchObject({ code: "ABORTED" });
    await new Promise((resolve) => setTimeout(resolve, 20));
    expect(unhandled).toEqual([]);
  });
});

describe("createPayment for a request already aborted", () => {
  it("is ABORTED without asking the wallet (was: the wallet was prompted, its answer dropped)", async () => {
    const { signer, calls } = countingSigner();
    const client = createX402Client({ schemes: [exactEvm({ signer })] });
    const controller = new AbortController();
    controller.abort();
    const challenge = parseChallenge({ header: encodeHeader(v2Challenge()) });
    await expect(
      engineOf(client).createPayment(challenge, { url: `${SELLER}${PATH}`, method: "GET", signal: controller.signal }),
    ).rejects.toMatchObject({ code: "ABORTED" });
    expect(calls).toHaveLength(0);
  });
});
