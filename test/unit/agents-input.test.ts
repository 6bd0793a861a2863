/**
 * The paid fetch tool's input and options (src/agents/input), tested directly: what an author may set and the exact
 * sentence each refusal reads, the defaults, the approval rule's shapes, what a model's input becomes as a request (and
 * the exact sentence the model reads when it is refused), and the descriptions the model reads in the JSON Schema.
 * Exact text and exact defaults, so that a changed condition, pattern, string or default in input.ts fails a test.
 */
import { describe, expect, it } from "vitest";
import { toJSONSchema } from "zod/mini";
import { inputJsonSchema, inputSchema, LIMITS, requestOf, resolveOptions } from "../../src/agents/input";
import { InvalidConfigError } from "../../src/entries/errors";
import { PAYMENT_HEADERS } from "../../src/protocol";

/** What `resolveOptions` throws for `options`: an `InvalidConfigError` whose message is `message`. */
function refuses(options: Record<string, unknown>, message: string) {
  let thrown: unknown;
  try {
    resolveOptions(options as never);
  } catch (error) {
    thrown = error;
  }
  expect(thrown).toBeInstanceOf(InvalidConfigError);
  expect(thrown).toMatchObject({ code: "INVALID_CONFIG", message });
}

const store = { get() {}, set() {}, delete() {} };
const fn = () => {};

describe("the author's options: defaults", () => {
  it("the limits: 65,536 bytes read, 4,000 characters shown, 65,536 at most for either", () => {
    expect(LIMITS).toEqual({ maxBytes: 65_536, maxChars: 4_000, ceiling: 65_536 });
  });

  it("no options (or none given): paid_fetch, GET/HEAD/POST, three headers, 65,536 bytes, 4,000 characters", () => {
    const expected = {
      name: "paid_fetch",
      methods: ["GET", "HEAD", "POST"],
      allowHeaders: ["accept", "accept-language", "content-type"],
      maxBytes: 65_536,
      maxChars: 4_000,
      approval: undefined,
    };
    expect(resolveOptions()).toEqual(expected);
    expect(resolveOptions({})).toEqual(expected);
    expect(resolveOptions({ name: undefined, methods: undefined, maxBytes: undefined })).toEqual(expected);
  });

  it("given values are returned as given, the allowed headers lower-cased", () => {
    const approval = { above: "$1" };
    expect(
      resolveOptions({
        name: "shop",
        description: "buys things",
        fetch,
        approval,
        approvals: store,
        methods: ["PUT", "DELETE"],
        allowHeaders: ["X-Custom", "Accept"],
        maxBytes: 10,
        maxChars: 20,
      }),
    ).toEqual({
      name: "shop",
      methods: ["PUT", "DELETE"],
      allowHeaders: ["x-custom", "accept"],
      maxBytes: 10,
      maxChars: 20,
      approval,
    });
  });

  it("an option that is not one is refused, naming every option", () => {
    refuses(
      { nmae: "x" },
      "nmae: is not an option (options: name, description, fetch, approval, approvals, methods, allowHeaders, " +
        "maxBytes, maxChars).",
    );
  });
});

describe("the author's options: what each accepts and refuses", () => {
  it("name: 1 to 64 letters, digits, _ or -", () => {
    const long = "a".repeat(64);
    expect(resolveOptions({ name: long }).name).toBe(long);
    expect(resolveOptions({ name: "a-b_C9" }).name).toBe("a-b_C9");
    expect(resolveOptions({ name: "Z" }).name).toBe("Z");
    refuses({ name: "" }, 'name: "" is not 1 to 64 letters, digits, _ or -.');
    refuses({ name: "a b" }, 'name: "a b" is not 1 to 64 letters, digits, _ or -.');
    refuses({ name: "a.b" }, 'name: "a.b" is not 1 to 64 letters, digits, _ or -.');
    refuses({ name: `${long}a` }, `name: "${long}a" is not 1 to 64 letters, digits, _ or -.`);
    refuses({ name: 5 }, "name: 5 is not 1 to 64 letters, digits, _ or -.");
  });

  it("description: a non-empty string", () => {
    expect(() => resolveOptions({ description: "x" })).not.toThrow();
    refuses({ description: "" }, 'description: "" is not a non-empty string.');
    refuses({ description: 7 }, "description: 7 is not a non-empty string.");
    refuses({ description: ["x"] }, 'description: ["x"] is not a non-empty string.');
  });

  it("fetch: a function", () => {
    expect(() => resolveOptions({ fetch })).not.toThrow();
    refuses({ fetch: "fetch" }, 'fetch: "fetch" is not a function.');
  });

  it("approvals: a store with get, set and delete (a Map is one)", () => {
    expect(() => resolveOptions({ approvals: store })).not.toThrow();
    expect(() => resolveOptions({ approvals: new Map() as never })).not.toThrow();
    const message = (shown: string) => `approvals: ${shown} is not a store with get, set and delete.`;
    refuses({ approvals: { set: fn, delete: fn } }, message("{}"));
    refuses({ approvals: { get: fn, delete: fn } }, message("{}"));
    refuses({ approvals: { get: fn, set: fn } }, message("{}"));
    refuses({ approvals: { get: null, set: fn, delete: fn } }, message('{"get":null}'));
    refuses({ approvals: { get: fn, set: fn, delete: "x" } }, message('{"delete":"x"}'));
    refuses({ approvals: null }, message("null"));
    refuses({ approvals: "store" }, message('"store"'));
    refuses({ approvals: {} }, message("{}"));
  });

  it("methods: a non-empty list of GET, HEAD, POST, PUT, PATCH, DELETE", () => {
    expect(resolveOptions({ methods: ["PUT"] }).methods).toEqual(["PUT"]);
    expect(resolveOptions({ methods: ["GET", "HEAD", "POST", "PUT", "PATCH", "DELETE"] }).methods).toHaveLength(6);
    refuses({ methods: [] }, "methods: [] allows no request: give at least one method.");
    refuses({ methods: "GET" }, "methods: must be a list.");
    refuses({ methods: ["TRACE"] }, 'methods: "TRACE" is not GET, HEAD, POST, PUT, PATCH, DELETE.');
    refuses({ methods: ["GET", "get"] }, 'methods: "get" is not GET, HEAD, POST, PUT, PATCH, DELETE.');
  });

  it("allowHeaders: a list of header names ([] allows none)", () => {
    expect(resolveOptions({ allowHeaders: ["X-Custom"] }).allowHeaders).toEqual(["x-custom"]);
    expect(resolveOptions({ allowHeaders: ["x!#$%&'*+.^_`|~9"] }).allowHeaders).toEqual(["x!#$%&'*+.^_`|~9"]);
    expect(resolveOptions({ allowHeaders: [] }).allowHeaders).toEqual([]);
    refuses({ allowHeaders: [5] }, "allowHeaders: 5 is not a header name.");
    refuses({ allowHeaders: ["accept", "bad header"] }, 'allowHeaders: "bad header" is not a header name.');
    refuses({ allowHeaders: [""] }, 'allowHeaders: "" is not a header name.');
    refuses({ allowHeaders: ["x:y"] }, 'allowHeaders: "x:y" is not a header name.');
    refuses({ allowHeaders: "accept" }, "allowHeaders: must be a list.");
  });

  it.each(["maxBytes", "maxChars"])("%s: an integer from 1 to 65536", (option) => {
    expect(resolveOptions({ [option]: 1 })[option as "maxBytes"]).toBe(1);
    expect(resolveOptions({ [option]: 65_536 })[option as "maxBytes"]).toBe(65_536);
    for (const [value, shown] of [
      [0, "0"],
      [-1, "-1"],
      [1.5, "1.5"],
      ["10", '"10"'],
      [65_537, "65537"],
    ] as const)
      refuses({ [option]: value }, `${option}: ${shown} is not an integer from 1 to 65536.`);
  });

  const forbidden = [...PAYMENT_HEADERS, "sign-in-with-x", "host", "content-length", "transfer-encoding"];
  it.each(forbidden.flatMap((name) => [name, name.toLowerCase(), name.toUpperCase()]))(
    "allowHeaders may not name %s, in any case: it is the tool's own to set",
    (name) => {
      refuses(
        { allowHeaders: ["accept", name] },
        `allowHeaders: "${name.toLowerCase()}" is the tool's own to set, never the model's.`,
      );
    },
  );

  it("the payment headers the tool refuses to let the model set are the two that carry a signed payment", () => {
    expect(PAYMENT_HEADERS).toEqual(["PAYMENT-SIGNATURE", "X-PAYMENT"]);
  });
});

describe("the approval rule", () => {
  it.each([
    ["a function", fn],
    ["a USD amount", "$0.10"],
    ["no keys (every payment, every origin)", {}],
    ["above a USD amount", { above: "$1" }],
    ["to some origins", { origins: ["https://a.example"] }],
    ["both", { above: "$0.5", origins: ["https://a.example"] }],
    ["keys left undefined", { above: undefined, origins: undefined }],
  ])("%s is a rule", (_, approval) => {
    expect(resolveOptions({ approval: approval as never }).approval).toBe(approval);
  });

  it.each([
    ["a string not in USD", "1 USDC", 'approval: "1 USDC" is not a USD amount such as "$0.10".'],
    ["a number", 1, "approval: 1 is not a USD amount, { above, origins } or a function."],
    ["null", null, "approval: null is not a USD amount, { above, origins } or a function."],
    ["a list", ["$1"], 'approval: ["$1"] is not a USD amount, { above, origins } or a function.'],
    ["true", true, "approval: true is not a USD amount, { above, origins } or a function."],
    [
      "an object with an unknown key",
      { above: "$1", below: "$2" },
      'approval: "below" is not an option of an approval rule (above, origins).',
    ],
    ["above as a number", { above: 1 }, 'approval: above: 1 is not a USD amount such as "$0.10".'],
    [
      "origins empty (it would ask about no payment)",
      { origins: [] },
      "approval: origins: [] asks about no payment: leave it out to ask about payments to every origin.",
    ],
    ["above not in USD", { above: "€1" }, 'approval: above: "€1" is not a USD amount such as "$0.10".'],
    ["above null", { above: null }, 'approval: above: null is not a USD amount such as "$0.10".'],
    [
      "above as a ceiling in base units (a ceiling, not a USD amount)",
      { above: { network: "eip155:8453", asset: "0xA", amount: "1" } },
      'approval: above: {"network":"eip155:8453","asset":"0xA","amount":"1"} is not a USD amount such as "$0.10".',
    ],
    [
      "origins not a list",
      { origins: "https://a.example" },
      'approval: origins: "https://a.example" is not a list of origins.',
    ],
    [
      "origins holding a non-string",
      { origins: ["https://a.example", 1] },
      'approval: origins: ["https://a.example",1] is not a list of origins.',
    ],
  ])("%s is refused, and said", (_, approval, message) => {
    refuses({ approval }, message);
  });
});

describe("a model's input as a request", () => {
  const defaults = resolveOptions();
  const url = "https://seller.example/data";
  const refusal = (raw: unknown, options = defaults) => (requestOf(raw, options) as { refused?: string }).refused;
  const request = (raw: unknown, options = defaults) => {
    const result = requestOf(raw, options);
    if ("refused" in result) throw new Error(result.refused);
    return result;
  };

  it("a URL alone: a GET with no headers, no body and no maxPrice key at all", () => {
    const result = request({ url });
    expect(result).toEqual({ url, method: "GET", headers: new Headers(), body: undefined });
    expect([...result.headers]).toEqual([]);
    expect("maxPrice" in result).toBe(false);
    expect(Object.keys(result).sort()).toEqual(["body", "headers", "method", "url"]);
  });

  it("the URL is sent as its normalised href", () => {
    expect(request({ url: "HTTPS://Seller.Example:443/a/../b?q=1" }).url).toBe("https://seller.example/b?q=1");
    expect(request({ url: "http://seller.example" }).url).toBe("http://seller.example/");
  });

  it("input that is not the schema's is refused, with zod's account of it", () => {
    expect(refusal({ url: 1 })).toMatch(/^The input is not valid: .*url/s);
    expect(refusal("https://seller.example/")).toMatch(/^The input is not valid: /);
    expect(refusal({ url, method: "TRACE" })).toMatch(/^The input is not valid: .*method/s);
  });

  it("a URL that is not absolute is refused", () => {
    expect(refusal({ url: "/data" })).toBe('"/data" is not an absolute URL.');
  });

  it.each([
    ["ftp://seller.example/x", "ftp:"],
    ["file:///etc/passwd", "file:"],
    ["data:text/plain,hi", "data:"],
  ])("%s is refused: only http and https", (target, protocol) => {
    expect(refusal({ url: target })).toBe(`Only http and https URLs can be requested, not ${protocol}.`);
  });

  it("a URL with a user name, or with a password alone, is refused", () => {
    const said = "A URL with a user name or password is not requested.";
    expect(refusal({ url: "https://user@seller.example/" })).toBe(said);
    expect(refusal({ url: "https://:secret@seller.example/" })).toBe(said);
    expect(refusal({ url: "http://user:secret@seller.example/" })).toBe(said);
  });

  it("a method the author did not allow is refused, naming those allowed", () => {
    expect(refusal({ url, method: "PUT" })).toBe("The method PUT is not allowed (GET, HEAD, POST).");
    const postOnly = resolveOptions({ methods: ["POST", "PATCH"] });
    expect(refusal({ url }, postOnly)).toBe("The method GET is not allowed (POST, PATCH).");
    expect(request({ url, method: "PATCH", body: "{}" }, postOnly).method).toBe("PATCH");
  });

  it("a GET or HEAD with a body (even an empty one) is refused; a POST carries it", () => {
    expect(refusal({ url, body: "x" })).toBe("A GET request has no body.");
    expect(refusal({ url, method: "GET", body: "" })).toBe("A GET request has no body.");
    expect(refusal({ url, method: "HEAD", body: "x" })).toBe("A HEAD request has no body.");
    expect(request({ url, method: "HEAD" })).toMatchObject({ method: "HEAD", body: undefined });
    expect(request({ url, method: "POST", body: '{"a":1}' })).toMatchObject({ method: "POST", body: '{"a":1}' });
  });

  it("a header the author did not allow is refused, naming those allowed (none when none are)", () => {
    expect(refusal({ url, headers: { authorization: "Bearer x" } })).toBe(
      'The header "authorization" is not allowed (accept, accept-language, content-type).',
    );
    expect(refusal({ url, headers: { accept: "text/plain", "X-Other": "1" } })).toBe(
      'The header "X-Other" is not allowed (accept, accept-language, content-type).',
    );
    expect(refusal({ url, headers: { accept: "*/*" } }, resolveOptions({ allowHeaders: [] }))).toBe(
      'The header "accept" is not allowed (none).',
    );
  });

  it("allowed headers are sent, whatever their case", () => {
    const { headers } = request({ url, headers: { Accept: "text/plain", "CONTENT-TYPE": "application/json" } });
    expect(Object.fromEntries(headers)).toEqual({ accept: "text/plain", "content-type": "application/json" });
    const custom = resolveOptions({ allowHeaders: ["X-Custom"] });
    expect(request({ url, headers: { "x-CUSTOM": "1" } }, custom).headers.get("x-custom")).toBe("1");
  });

  it.each(["a\nb", "a\rb", "a\u0000b"])("a header value that cannot be sent (%j) is refused", (value) => {
    expect(refusal({ url, headers: { Accept: value } })).toBe('The header "Accept" has a value that cannot be sent.');
  });

  it("maxPrice: a USD amount is kept; anything else is refused", () => {
    expect(request({ url, maxPrice: "$0.01" }).maxPrice).toBe("$0.01");
    expect(request({ url, maxPrice: "$0" })).toHaveProperty("maxPrice", "$0");
    expect(refusal({ url, maxPrice: "1 cent" })).toBe('maxPrice "1 cent" is not a USD amount such as "$0.01".');
    expect(refusal({ url, maxPrice: "" })).toBe('maxPrice "" is not a USD amount such as "$0.01".');
  });

  it("a full input becomes the request asked for", () => {
    const result = request({
      url,
      method: "POST",
      headers: { "content-type": "application/json" },
      body: "{}",
      maxPrice: "$0.05",
    });
    expect(result).toEqual({
      url,
      method: "POST",
      headers: new Headers({ "content-type": "application/json" }),
      body: "{}",
      maxPrice: "$0.05",
    });
    expect(Object.fromEntries(result.headers)).toEqual({ "content-type": "application/json" });
  });
});

describe("the input schema the model reads", () => {
  const descriptions = {
    url: "The http(s) URL to request.",
    method: "The HTTP method; GET when left out.",
    headers: "Request headers (only those the tool allows).",
    body: "The request body as text (JSON as a string).",
    maxPrice:
      'The most to pay for this request, in USD ("$0.01"): give the price you were told, if you were told one. ' +
      "A request that asks more pays nothing.",
  };

  it("zod's JSON Schema carries each field's description, the same as the one written out", () => {
    const converted = toJSONSchema(inputSchema) as { properties: Record<string, { description?: string }> };
    for (const [field, description] of Object.entries(descriptions)) {
      expect(converted.properties[field]?.description).toBe(description);
      expect(inputJsonSchema.properties[field as keyof typeof descriptions].description).toBe(description);
    }
    expect(Object.keys(converted.properties)).toEqual(Object.keys(descriptions));
  });

  it("written out: the URL alone required, six methods, headers a string record, extra keys let through", () => {
    expect(inputJsonSchema).toEqual({
      type: "object",
      properties: {
        url: { type: "string", description: descriptions.url },
        method: {
          type: "string",
          enum: ["GET", "HEAD", "POST", "PUT", "PATCH", "DELETE"],
          description: descriptions.method,
        },
        headers: {
          type: "object",
          propertyNames: { type: "string" },
          additionalProperties: { type: "string" },
          description: descriptions.headers,
        },
        body: { type: "string", description: descriptions.body },
        maxPrice: { type: "string", description: descriptions.maxPrice },
      },
      required: ["url"],
      additionalProperties: true,
    });
  });
});
