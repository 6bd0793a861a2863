/** builder-code over HTTP, through both wrappers: the seller's declaration echoed, the caller's codes added. */
import { x402ResourceServer } from "@x402/core/server";
import { declareBuilderCodeExtension } from "@x402/extensions/builder-code";
import { describe, expect, it } from "vitest";
import { builderCode } from "../../src";
import { useMswServer } from "../support/msw";
import { PATH, SELLER, createSeller, payingClient, v2Challenge } from "../support/seller";
import { wrappers } from "../support/wrappers";

const server = useMswServer();
const url = `${SELLER}${PATH}`;

describe.each(wrappers)("$name: builder-code", (wrapper) => {
  it("a seller's declaration goes back as declared, with the caller's service codes first in `s`", async () => {
    const declaration = declareBuilderCodeExtension("bc_weather", "bc_server_sdk");
    const challenge = v2Challenge({ extensions: { "builder-code": declaration } });
    const seller = createSeller({ challenge });
    server.use(seller.handler);

    const reply = await wrapper.send(payingClient({ plugins: [builderCode(["bc_agent", "bc_mcp"])] }).client, { url });

    expect(reply.status).toBe(200);
    const [payload] = seller.payments;
    expect(payload.extensions["builder-code"]).toEqual({
      info: { a: "bc_weather", s: ["bc_agent", "bc_mcp", "bc_server_sdk"] },
      schema: declaration.schema,
    });
    expect(new x402ResourceServer().validateExtensions(challenge as never, payload)).toEqual({ valid: true });
  });

  it("without builderCode, a declaration is echoed exactly; a seller that declares none gets none", async () => {
    const declaration = declareBuilderCodeExtension("bc_weather");
    const declaring = createSeller({ challenge: v2Challenge({ extensions: { "builder-code": declaration } }) });
    server.use(declaring.handler);
    await wrapper.send(payingClient().client, { url });
    expect(JSON.stringify(declaring.payments[0].extensions)).toBe(JSON.stringify({ "builder-code": declaration }));

    const silent = createSeller();
    server.use(silent.handler);
    await wrapper.send(payingClient().client, { url });
    expect(silent.payments[0]).not.toHaveProperty("extensions");
  });
});
