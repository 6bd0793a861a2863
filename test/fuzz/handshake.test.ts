/**
 * The whole 402 handshake over an in-memory Transport: arbitrary first answers (status, challenge
 * header, bodies as text, bytes, blobs, streams and async iterables that may fail, stall or carry
 * strange chunks), settlement headers and second answers, aborts at any step. It never throws
 * anything but an X402Error, never signs twice, sends a payment twice only unchanged and only where
 * payment-identifier allows it, never hangs, and accounts for every response.
 */
import fc from "fast-check";
import { afterAll, beforeAll, describe, it } from "vitest";
import { PaymentNotSentError } from "../../src/entries/errors";
import {
  createX402Client,
  getPaymentReceipt,
  handlePaymentRequired,
  isX402Error,
  type AnyX402Error,
  type PaymentReceipt,
  type Transport,
} from "../../src";
import { decodeSettlement } from "../../src/entries/protocol";
import { exactEvm, type TypedDataRequest } from "../../src/evm";
import { BODY_LIMITS } from "../../src/handshake";
import { bodySource } from "../../src/io";
import { RESOURCE, challenge, headerFor, strangeBody, strangeHeader } from "./arbitraries";
import { LARGE, check, ensure } from "./params";
import { ANVIL_ADDRESS_0 } from "../support/vectors";

const SIGNATURE = `0x${"22".repeat(64)}1c` as const;
/** Bodies that stall are given up on after this long (the default, 10 s, would make a run slow). */
const STALL_MS = 10;

// ------------------------------------------------------------------------------ bodies

type ChunkKind = "bytes" | "string" | "arraybuffer" | "dataview" | "u16" | "number" | "null" | "object";
type End = "done" | "error" | "stall";
type BodySpec =
  | { kind: "absent" }
  | { kind: "text"; text: string }
  | { kind: "bytes"; text: string; view: "u8" | "buffer" | "arraybuffer" | "dataview" }
  | { kind: "json"; value: unknown }
  | { kind: "blob"; text: string }
  | {
      kind: "stream";
      text: string;
      cuts: number[];
      chunk: ChunkKind[];
      end: End;
      state: "fresh" | "locked" | "errored" | "cancelled";
    }
  | { kind: "iterable"; text: string; cuts: number[]; chunk: ChunkKind[]; end: End | "throws"; broken: boolean };

const chunkOf = (kind: ChunkKind, text: string): unknown => {
  const bytes = new TextEncoder().encode(text);
  switch (kind) {
    case "bytes":
      return bytes;
    case "string":
      return text;
    case "arraybuffer":
      return bytes.buffer;
    case "dataview":
      return new DataView(bytes.buffer);
    case "u16":
      return new Uint16Array(bytes);
    case "number":
      return 7;
    case "null":
      return null;
    case "object":
      return { length: 3 };
  }
};

/** Splits text at the given cut points. */
function pieces(text: string, cuts: number[]): string[] {
  const at = [...new Set(cuts.map((c) => c % (text.length + 1)))].sort((a, b) => a - b);
  const out: string[] = [];
  let last = 0;
  for (const c of at) {
    out.push(text.slice(last, c));
    last = c;
  }
  out.push(text.slice(last));
  return out.filter((p) => p !== "");
}

/** What the handshake is handed as a body: built fresh from its spec, once per response. */
function makeBody(spec: BodySpec, onPull: () => void): unknown {
  switch (spec.kind) {
    case "absent":
      return undefined;
    case "text":
      return spec.text;
    case "json":
      return spec.value;
    case "blob":
      return new Blob([spec.text]);
    case "bytes": {
      const bytes = new TextEncoder().encode(spec.text);
      return { u8: bytes, buffer: Buffer.from(bytes), arraybuffer: bytes.buffer, dataview: new DataView(bytes.buffer) }[
        spec.view
      ];
    }
    case "stream": {
      const chunks = pieces(spec.text, spec.cuts).map((p, i) =>
        chunkOf(spec.chunk[i % spec.chunk.length] ?? "bytes", p),
      );
      let i = 0;
      const stream = new ReadableStream({
        pull(controller) {
          onPull();
          if (i < chunks.length) return controller.enqueue(chunks[i++]);
          if (spec.end === "done") return controller.close();
          if (spec.end === "error") return controller.error(new Error("connection reset"));
          return new Promise<void>(() => {}); // stalls: never another chunk
        },
      });
      if (spec.state === "locked") stream.getReader();
      if (spec.state === "cancelled") void stream.cancel();
      if (spec.state === "errored")
        return new ReadableStream({ start: (controller) => controller.error(new Error("gone")) });
      return stream;
    }
    case "iterable": {
      const chunks = pieces(spec.text, spec.cuts).map((p, i) =>
        chunkOf(spec.chunk[i % spec.chunk.length] ?? "bytes", p),
      );
      let i = 0;
      const iterator = {
        next(): Promise<IteratorResult<unknown>> {
          onPull();
          if (i < chunks.length) return Promise.resolve({ done: false, value: chunks[i++] });
          if (spec.end === "done") return Promise.resolve({ done: true, value: undefined });
          if (spec.end === "error") return Promise.reject(new Error("socket hang up"));
          if (spec.end === "throws") throw new TypeError("iterator broke");
          return new Promise(() => {});
        },
        return() {
          return Promise.resolve({ done: true as const, value: undefined });
        },
      };
      return {
        [Symbol.asyncIterator]() {
          if (spec.broken) throw new TypeError("not iterable after all");
          return iterator;
        },
      };
    }
  }
}

const chunkKind = fc.oneof(
  { arbitrary: fc.constant<ChunkKind>("bytes"), weight: 12 },
  { arbitrary: fc.constant<ChunkKind>("string"), weight: 3 },
  { arbitrary: fc.constantFrom<ChunkKind>("arraybuffer", "dataview", "u16", "number", "null", "object"), weight: 2 },
);
const end = fc.oneof(
  { arbitrary: fc.constant<End>("done"), weight: 16 },
  { arbitrary: fc.constant<End>("error"), weight: 2 },
  { arbitrary: fc.constant<End>("stall"), weight: 2 },
);

/** A body carrying `text` in any of the forms an HTTP library may hand over. */
const bodyWith = (text: string): fc.Arbitrary<BodySpec> =>
  fc.oneof(
    { arbitrary: fc.constant({ kind: "text" as const, text }), weight: 4 },
    {
      arbitrary: fc
        .constantFrom("u8", "buffer", "arraybuffer", "dataview")
        .map((view) => ({ kind: "bytes" as const, text, view: view as "u8" })),
      weight: 2,
    },
    { arbitrary: fc.constant({ kind: "blob" as const, text }), weight: 1 },
    {
      arbitrary: fc.record({
        kind: fc.constant("stream" as const),
        text: fc.constant(text),
        cuts: fc.array(fc.nat(), { maxLength: 4 }),
        chunk: fc.array(chunkKind, { minLength: 1, maxLength: 3 }),
        end,
        state: fc.oneof(
          { arbitrary: fc.constant("fresh" as const), weight: 12 },
          { arbitrary: fc.constantFrom("locked" as const, "errored" as const, "cancelled" as const), weight: 1 },
        ),
      }),
      weight: 4,
    },
    {
      arbitrary: fc.record({
        kind: fc.constant("iterable" as const),
        text: fc.constant(text),
        cuts: fc.array(fc.nat(), { maxLength: 4 }),
        chunk: fc.array(chunkKind, { minLength: 1, maxLength: 3 }),
        end: fc.oneof({ arbitrary: end, weight: 10 }, { arbitrary: fc.constant("throws" as const), weight: 1 }),
        broken: fc.oneof({ arbitrary: fc.constant(false), weight: 12 }, { arbitrary: fc.constant(true), weight: 1 }),
      }),
      weight: 2,
    },
  );

const anyBody: fc.Arbitrary<BodySpec> = fc.oneof(
  { arbitrary: fc.constant({ kind: "absent" as const }), weight: 2 },
  { arbitrary: fc.constantFrom("{}", "", '{"error":"nope"}', "<html>paywall</html>").chain(bodyWith), weight: 3 },
  { arbitrary: strangeBody.map((value) => ({ kind: "json" as const, value })), weight: 1 },
  {
    arbitrary: strangeBody.filter((v): v is string => typeof v === "string" && v.length < 20_000).chain(bodyWith),
    weight: 1,
  },
);

// ------------------------------------------------------------------------------ answers

/** Challenges the client can often pay, and now and then cannot. */
const offer = fc
  .tuple(challenge({ field: 60, envelope: 60, typical: 12 }, 3), fc.boolean(), fc.boolean())
  .map(([c, signIn, paymentId]) => {
    const declared = c as { extensions?: unknown };
    if (
      typeof c === "object" &&
      c !== null &&
      !Array.isArray(c) &&
      (declared.extensions == null || typeof declared.extensions === "object")
    ) {
      // Half declare sign-in-with-x, which the test's extension serves; half payment-identifier, which
      // lets a payment go twice (unchanged).
      const extensions = {
        ...(declared.extensions as object),
        ...(signIn && { "sign-in-with-x": { info: { domain: "seller.example" } } }),
        ...(paymentId && { "payment-identifier": { info: { required: false } } }),
      };
      if (signIn || paymentId) return JSON.stringify({ ...c, extensions });
    }
    return JSON.stringify(c) ?? "null";
  });

const settlement = fc.oneof(
  fc.constant({ success: true, transaction: `0x${"ab".repeat(32)}`, network: "eip155:84532", payer: ANVIL_ADDRESS_0 }),
  fc.constant({
    success: false,
    errorReason: "insufficient_funds",
    errorMessage: "x".repeat(300),
    transaction: "",
    network: "eip155:84532",
  }),
  fc.constant({ success: true }),
  fc.constant({ success: "yes" }),
);

interface AnswerSpec {
  status: number;
  headers: [string, string][];
  body: BodySpec;
}

const headerEntry = (name: string, value: fc.Arbitrary<string>) =>
  fc.option(
    value.map((v) => [name, v] as [string, string]),
    { nil: undefined, freq: 2 },
  );

/** A response: status, challenge and settlement headers, body. */
function answer(status: fc.Arbitrary<number>, withChallenge: boolean): fc.Arbitrary<AnswerSpec> {
  return fc
    .record({
      status,
      required: withChallenge
        ? fc.oneof(
            { arbitrary: offer.chain(headerFor).map((v) => ["PAYMENT-REQUIRED", v] as [string, string]), weight: 6 },
            { arbitrary: strangeHeader.map((v) => ["payment-required", v] as [string, string]), weight: 1 },
            { arbitrary: fc.constant(undefined), weight: 3 },
          )
        : fc.constant(undefined),
      response: headerEntry(
        "PAYMENT-RESPONSE",
        fc.oneof(
          settlement.chain((s) => headerFor(JSON.stringify(s))),
          strangeHeader,
        ),
      ),
      legacy: headerEntry(
        "X-PAYMENT-RESPONSE",
        settlement.map((s) => Buffer.from(JSON.stringify(s)).toString("base64")),
      ),
      contentType: headerEntry("content-type", fc.constantFrom("application/json", "text/html")),
      body: fc.oneof(
        { arbitrary: offer.chain(bodyWith), weight: withChallenge ? 2 : 0 },
        { arbitrary: anyBody, weight: 2 },
      ),
    })
    .map(({ status, body, ...headers }) => ({
      status,
      headers: Object.values(headers).filter((h): h is [string, string] => h !== undefined),
      body,
    }));
}

type ResendSpec = { kind: "answer"; answer: AnswerSpec } | { kind: "fails" } | { kind: "not sent" };

const resend: fc.Arbitrary<ResendSpec> = fc.oneof(
  {
    arbitrary: answer(fc.constantFrom(200, 200, 201, 204, 302, 400, 402, 402, 409, 412, 500, 502, 503, 504), true).map(
      (a) => ({ kind: "answer" as const, answer: a }),
    ),
    weight: 10,
  },
  { arbitrary: fc.constantFrom({ kind: "fails" as const }, { kind: "not sent" as const }), weight: 1 },
);

type Abort = "none" | "before" | "first resend" | "second resend" | "signing" | "body";

interface Exchange {
  first: AnswerSpec;
  resends: ResendSpec[];
  requestHeaders: [string, string][];
  notReplayable: boolean;
  abort: Abort;
  signIn: boolean;
  policy: number;
  wallet: "signs" | "rejects";
}

const exchange: fc.Arbitrary<Exchange> = fc.record({
  first: answer(
    fc.oneof({ arbitrary: fc.constant(402), weight: 10 }, { arbitrary: fc.constantFrom(412, 200, 500), weight: 1 }),
    true,
  ),
  resends: fc.array(resend, { maxLength: 4 }),
  requestHeaders: fc.oneof(
    { arbitrary: fc.constant<[string, string][]>([]), weight: 20 },
    {
      arbitrary: fc.constantFrom<[string, string][]>(
        [["PAYMENT-SIGNATURE", "e30="]],
        [["x-payment", "e30="]],
        [["payment-signature", ""]],
      ),
      weight: 1,
    },
  ),
  notReplayable: fc.oneof({ arbitrary: fc.constant(false), weight: 20 }, { arbitrary: fc.constant(true), weight: 1 }),
  abort: fc.oneof(
    { arbitrary: fc.constant<Abort>("none"), weight: 20 },
    { arbitrary: fc.constantFrom<Abort>("before", "first resend", "second resend", "signing", "body"), weight: 5 },
  ),
  signIn: fc.boolean(),
  policy: fc.nat(2),
  wallet: fc.oneof(
    { arbitrary: fc.constant("signs" as const), weight: 12 },
    { arbitrary: fc.constant("rejects" as const), weight: 1 },
  ),
});

// ------------------------------------------------------------------------------ the property

interface Res {
  readonly id: number;
  readonly status: number;
  readonly headers: Map<string, string>;
  readonly spec: BodySpec;
  body?: { value: unknown };
}

const POLICIES = [
  { allowUnknownAssets: true },
  {},
  { allowUnknownAssets: true, maxAmountPerPayment: false, maxTimeoutSeconds: false },
] as const;

/** Promise rejections nobody handled (in Node they end the process by default). */
const unhandled: unknown[] = [];
const onUnhandled = (reason: unknown) => void unhandled.push(reason);

/** How the runs ended (printed after a large run, to show the inputs reach every stage). */
const outcomes = new Map<string, number>();
const tally = (label: string) => outcomes.set(label, (outcomes.get(label) ?? 0) + 1);

async function run(x: Exchange): Promise<void> {
  const unhandledBefore = unhandled.length;
  const controller = new AbortController();
  let promptedAfterAbort = 0;
  const abortAt = (point: Abort) => {
    if (x.abort === point) controller.abort(new Error(`aborted at ${point}`));
  };
  abortAt("before");

  let nextId = 0;
  const produced: Res[] = [];
  const discarded: number[] = [];
  const make = (a: AnswerSpec): Res => {
    const res: Res = {
      id: nextId++,
      status: a.status,
      headers: new Map(a.headers.map(([k, v]) => [k.toLowerCase(), v])),
      spec: a.body,
    };
    produced.push(res);
    return res;
  };
  const resent: Record<string, string>[] = [];
  /** What each sending with a payment came to: its answer, or the transport's failure. */
  const paidAnswers: (Res | "failed")[] = [];
  const transportErrors: { error: Error; paid: boolean }[] = [];
  const requestHeaders = new Map(x.requestHeaders.map(([k, v]) => [k.toLowerCase(), v]));
  const transport: Transport<Res> = {
    request: { url: RESOURCE, method: "GET", signal: controller.signal },
    notReplayable: x.notReplayable ? "a stream body" : undefined,
    // The in-memory transport follows no redirects: every answer is the direct answer.
    redirected: () => false,
    requestHeader: (name) => requestHeaders.get(name.toLowerCase()),
    async resend(headers) {
      resent.push(headers);
      abortAt(resent.length === 1 ? "first resend" : "second resend");
      const spec = x.resends[resent.length - 1] ?? {
        kind: "answer",
        answer: { status: 200, headers: [], body: { kind: "text", text: "ok" } },
      };
      const fail = (error: Error) => {
        transportErrors.push({ error, paid: "PAYMENT-SIGNATURE" in headers || "X-PAYMENT" in headers });
        throw error;
      };
      const withPayment = "PAYMENT-SIGNATURE" in headers || "X-PAYMENT" in headers;
      if (withPayment && (controller.signal.aborted || spec.kind !== "answer")) paidAnswers.push("failed");
      if (controller.signal.aborted) fail(new DOMException("This operation was aborted", "AbortError"));
      if (spec.kind === "fails") fail(new TypeError("fetch failed"));
      if (spec.kind === "not sent") fail(new PaymentNotSentError("CORS preflight refused the header"));
      const res = make((spec as Extract<ResendSpec, { kind: "answer" }>).answer);
      if (withPayment) paidAnswers.push(res);
      return res;
    },
    status: (res) => res.status,
    header: (res, name) => res.headers.get(name.toLowerCase()) ?? null,
    // As an adapter hands it over: other kinds of body through bodySource, as axios does.
    body: (res) => bodySource((res.body ??= { value: makeBody(res.spec, () => abortAt("body")) }).value),
    discard: (res) => void discarded.push(res.id),
  };

  const signs: TypedDataRequest[] = [];
  const settled: PaymentReceipt[] = [];
  const failed: AnyX402Error[] = [];
  const client = createX402Client({
    schemes: [
      exactEvm({
        signer: {
          address: ANVIL_ADDRESS_0,
          signTypedData: async (request) => {
            signs.push(request);
            if (controller.signal.aborted) promptedAfterAbort++;
            abortAt("signing");
            if (x.wallet === "rejects") throw Object.assign(new Error("User rejected the request."), { code: 4001 });
            return SIGNATURE;
          },
        },
      }),
    ],
    policy: POLICIES[x.policy],
    plugins: x.signIn ? [{ key: "sign-in-with-x", beforePayment: () => ({ "SIGN-IN-WITH-X": "proof" }) }] : [],
    onPaymentSettled: (receipt) => void settled.push(receipt),
    onPaymentFailed: (error) => void failed.push(error),
  });

  const first = make(x.first);
  let result: Res | undefined;
  let thrown: unknown;
  try {
    result = await handlePaymentRequired(client, transport, first);
  } catch (error) {
    thrown = error;
  }

  const paid = resent
    .filter((h) => "PAYMENT-SIGNATURE" in h || "X-PAYMENT" in h)
    .map((h) => h["PAYMENT-SIGNATURE"] ?? h["X-PAYMENT"]!);
  // A payment may go twice only when it carries a payment-identifier id, unchanged, after its first
  // sending failed or a gateway answered 502, 503 or 504 with no word of a settlement.
  const paymentId =
    paid.length > 0
      ? JSON.parse(Buffer.from(paid[0]!, "base64").toString()).extensions?.["payment-identifier"]?.info?.id
      : undefined;
  const settlementOf = (res: Res) =>
    decodeSettlement(res.headers.get("payment-response") ?? res.headers.get("x-payment-response"));
  // Anything left rejecting in the background surfaces by the next macrotask.
  await new Promise((resolve) => setImmediate(resolve));
  ensure(
    unhandled.length === unhandledBefore,
    () => `a promise rejection was left unhandled: ${String(unhandled[unhandled.length - 1])}`,
  );
  ensure(promptedAfterAbort === 0, "the wallet was asked to sign for a request already aborted");
  tally(
    `${thrown === undefined ? `returned ${paid.length ? "paid answer" : "sign-in answer"}` : `threw ${isX402Error(thrown) ? thrown.code : "the transport's own error"}`}, signed ${signs.length}, payment sent ${paid.length}x`,
  );
  ensure(signs.length <= 1, () => `signed ${signs.length} times`);
  ensure(
    paid.length <= (paymentId ? 2 : 1) && resent.length <= 3,
    () => `resent ${resent.length} times, ${paid.length} with a payment (id ${paymentId})`,
  );
  ensure(
    paid.every((header) => header === paid[0]),
    "a payment is sent again only unchanged",
  );
  if (paid.length === 2) {
    const lost = paidAnswers[0]!;
    ensure(
      lost === "failed" || ([502, 503, 504].includes(lost.status) && !settlementOf(lost)),
      () => `resent after a ${lost === "failed" ? "failure" : lost.status}`,
    );
  }
  ensure(paid.length === 0 || signs.length === 1, "a payment header is sent only after signing");
  if (thrown !== undefined && !isX402Error(thrown)) {
    // The one exception that is not ours: the HTTP library's own failure of a sign-in retry (nothing
    // signed, nothing paid), passed through unchanged as the library would have thrown it.
    const own = transportErrors.find((t) => t.error === thrown);
    ensure(
      own && !own.paid && signs.length === 0 && !controller.signal.aborted,
      () => `threw a non-X402Error: ${thrown instanceof Error ? thrown.stack : String(thrown)}`,
    );
    ensure(failed.length + settled.length === 0, "a failed sign-in retry is no payment attempt");
  } else if (thrown !== undefined) {
    ensure(isX402Error(thrown), "typed");
    const code = thrown.code;
    // Only a payment that was sent can be rejected or have an unknown outcome. (PAYMENT_NOT_SENT may
    // also come from a sign-in retry the browser would not send.)
    if (code === "PAYMENT_REJECTED" || code === "PAYMENT_OUTCOME_UNKNOWN")
      ensure(paid.length >= 1, () => `${code} without a payment sent`);
    // "Rejected" and "conflict" say nothing was charged: never once an earlier sending's fate was unknown.
    if (code === "PAYMENT_REJECTED" || code === "PAYMENT_ID_CONFLICT")
      ensure(paid.length === 1, () => `${code} after ${paid.length} sendings`);
    if (code === "PAYMENT_ID_CONFLICT") {
      const answer = paidAnswers[0] as Res;
      ensure(
        !!paymentId && answer.status === 409 && !settlementOf(answer),
        "a conflict is a 409 to a payment with an id, with no settlement",
      );
    }
    // "Rejected" says nothing was charged: never beside a settlement the server reported as successful.
    if (code === "PAYMENT_REJECTED") {
      const answer = produced[produced.length - 1]!;
      const report = answer.headers.get("payment-response") ?? answer.headers.get("x-payment-response");
      ensure(decodeSettlement(report)?.success !== true, "a rejection never hides a settlement reported as successful");
    }
    if (code === "PAYMENT_NOT_SENT")
      ensure(
        transportErrors.some((t) => t.error === thrown || (t.paid && t.error instanceof PaymentNotSentError)),
        "PAYMENT_NOT_SENT comes from the transport",
      );
    if (code === "PAYMENT_ALREADY_ATTEMPTED" || code === "BODY_NOT_REPLAYABLE")
      ensure(signs.length === 0 && resent.length === 0, `${code}: nothing signed or sent`);
    // Every payment attempt is reported once, with the error thrown.
    ensure(
      failed.length === 1 && failed[0] === thrown && settled.length === 0,
      () => `reported ${failed.length} failures, ${settled.length} settlements for ${code}`,
    );
  } else {
    ensure(
      result !== undefined && result !== first && produced.includes(result),
      "returns one of the answers to a resend",
    );
    ensure(result.status !== 402, "never returns a 402");
    const receipt = getPaymentReceipt(result);
    if (paid.length === 0) {
      ensure(
        signs.length === 0 && receipt === undefined && settled.length + failed.length === 0,
        "an answer to a sign-in is returned as it is",
      );
    } else {
      // EIP-3009 signs a `value`, Permit2 a `permitted.amount`.
      const message = signs[0]!.message as { value?: bigint; permitted?: { amount: bigint } };
      ensure(
        receipt !== undefined && BigInt(receipt.amount) === (message.value ?? message.permitted?.amount),
        "a paid answer carries the receipt of what was signed",
      );
      ensure(
        settled.length + failed.length === 1,
        () => `reported ${settled.length} settlements, ${failed.length} failures`,
      );
    }
  }
  if (requestHeaders.size > 0 && [...requestHeaders.values()].some((v) => v))
    ensure(
      thrown && (thrown as AnyX402Error).code === "PAYMENT_ALREADY_ATTEMPTED",
      "a request that carried a payment is never paid again",
    );
  // Every response is returned or released, once.
  const released = new Set(discarded);
  ensure(released.size === discarded.length, "no response is released twice");
  for (const res of produced) {
    ensure(
      (res === result) !== released.has(res.id),
      () =>
        `response #${res.id} (status ${res.status}) was ${res === result ? "returned and released" : "neither returned nor released"}`,
    );
  }
}

describe("fuzz: handlePaymentRequired over an in-memory Transport", () => {
  let saved: number;
  beforeAll(() => {
    saved = BODY_LIMITS.ms;
    BODY_LIMITS.ms = STALL_MS;
    process.on("unhandledRejection", onUnhandled);
  });
  afterAll(() => {
    BODY_LIMITS.ms = saved;
    process.off("unhandledRejection", onUnhandled);
    if (LARGE)
      console.log(
        [...outcomes]
          .sort((a, b) => b[1] - a[1])
          .map(([label, n]) => `[fuzz] handshake outcome: ${label}: ${n}`)
          .join("\n"),
      );
  });

  it("only X402Errors, at most one signature, no hang, every response accounted for", async () => {
    await check("handshake", fc.asyncProperty(exchange, run), 200, { timeout: 2_000 });
  });
});
