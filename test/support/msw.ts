import { setupServer } from "msw/node";
import { afterAll, afterEach, beforeAll } from "vitest";

/** An msw server for this test file: unhandled requests fail the test, handlers reset after each. */
export function useMswServer() {
  const server = setupServer();
  beforeAll(() => server.listen({ onUnhandledRequest: "error" }));
  afterEach(() => server.resetHandlers());
  afterAll(() => server.close());
  return server;
}
