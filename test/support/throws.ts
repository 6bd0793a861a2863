/** What a call failed with, for tests that assert on the error: each fails the test when nothing failed. */

/** The error a promise rejects with; fails the test if it resolves. */
export async function rejection(promise: Promise<unknown>): Promise<any> {
  try {
    await promise;
  } catch (error) {
    return error;
  }
  throw new Error("expected a rejection, the promise resolved");
}

/** The error `make` throws; fails the test if it throws none. */
export function thrownBy(make: () => unknown): any {
  try {
    make();
  } catch (error) {
    return error;
  }
  throw new Error("expected an error, nothing was thrown");
}
